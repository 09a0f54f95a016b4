import { Worker } from 'node:worker_threads';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ErrorCode } from '../../errors/catalogue.js';
import type { LedgerEntry } from '../quota-store.js';
import { type AvailabilityChange, type Store, type StoreAvailability, TokenNameTaken } from '../store.js';
import type { Answer, Call, FromThread, SentError, ThreadData, ToThread } from './thread-messages.js';

/**
 * The embedded store on a thread of its own (issue 41: nothing slow on the event loop). libsql is
 * synchronous: on the loop, every statement and COMMIT ran there, and about once every few seconds
 * under load SQLite synced the WAL's header in a commit (it does each time the WAL starts over
 * after a checkpoint; 0.16 ms at the median, 4 ms at p99 on a shared disk), with every request in
 * flight waiting. Here each call is a message to ./store-thread-worker.ts, the calls of one turn
 * in one message, and the loop only waits for answers.
 *
 * What stays as it was: the store's behaviour (the contract suite runs through this) and the group
 * commit (now of the thread's turns). The hold is still exact at once, on the thread; its answer
 * goes back after that turn's commit (both wait for the thread's next check phase, the commit
 * queued first), so the caller acts on a hold already durable. What changes: a call
 * costs a message each way (measured in bench/RESULTS.md), the thread's own heap (a few MB), and
 * `clock` is read at the call and sent with it. `:memory:` and the CLI's short commands open the
 * store in-process, on the thread that calls it (src/store/open-store.ts): nothing there waits on a request.
 */
export async function openThreadedSqliteStore(path: string, clock: () => number): Promise<Store> {
  const worker = new Worker(new URL('./store-thread-worker.js', import.meta.url), { workerData: { path } satisfies ThreadData });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  const ledgerListeners = new Set<(entry: LedgerEntry) => void>();
  let nextId = 1;
  let outbox: Call[] = [];
  let scheduled = false;
  // Set once the thread is gone: every call after fails at once with this.
  let gone: GatewayError | null = null;
  let closing = false;
  const changes = new Set<(change: AvailabilityChange) => void>();

  const post = (m: ToThread) => worker.postMessage(m);
  const flush = () => {
    scheduled = false;
    if (outbox.length === 0 || gone) return;
    post({ kind: 'calls', calls: outbox });
    outbox = [];
  };
  // The thread keeps the process alive only while an answer is awaited (a script's last call),
  // never while idle (a test that forgets close(), an exiting CLI).
  const settle = (id: number) => {
    const p = pending.get(id);
    pending.delete(id);
    if (pending.size === 0 && !closing) worker.unref();
    return p;
  };
  const call = (method: string, args: unknown[]): Promise<unknown> => {
    if (gone) return Promise.reject(gone);
    // After close() began, its 'close' may already be on its way: nothing after it would be answered.
    if (closing) return Promise.reject(new GatewayError('store_unavailable', 'the store is closed'));
    const id = nextId++;
    if (pending.size === 0) worker.ref();
    const answer = new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    outbox.push([id, method, args, clock()]);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    return answer;
  };

  const ready = new Promise<readonly string[]>((resolve, reject) => {
    worker.once('message', (m: FromThread) => {
      if (m.kind === 'ready') resolve(m.methods);
      else reject(m.kind === 'failed' ? rebuilt(m.error) : new Error(`the store thread said ${m.kind} first`));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the store thread exited (code ${code}) before it opened the store`)));
  });
  let closed: () => void = () => undefined;
  const exited = new Promise<void>((resolve) => (closed = resolve));
  const methods = await ready;

  worker.on('message', (m: FromThread) => {
    if (m.kind === 'turn') {
      for (const entry of m.ledger) {
        for (const l of ledgerListeners) {
          try {
            l(entry);
          } catch {
            // A listener (metrics) must never fail the writes it hears about.
          }
        }
      }
      for (const a of m.answers) answered(a);
    } else if (m.kind === 'failed') {
      stop(rebuilt(m.error));
    }
  });
  worker.on('error', (err) => stop(err));
  worker.on('exit', (code) => {
    stop(new Error(`the store thread exited (code ${code})`));
    closed();
  });

  function answered(a: Answer): void {
    const p = settle(a[0]);
    if (!p) return;
    if (a[1]) p.resolve(withBuffers(a[2]));
    else p.reject(rebuilt(a[2]));
  }
  function stop(why: unknown): void {
    if (gone) return;
    gone = new GatewayError('store_unavailable', closing ? 'the store is closed' : 'the store thread stopped', { cause: why });
    for (const [id, p] of pending) {
      pending.delete(id);
      p.reject(gone);
    }
    if (!closing) for (const l of changes) l({ up: false, reason: gone.message });
  }

  const store = {} as Record<string, unknown>;
  for (const m of methods) store[m] = (...args: unknown[]) => call(m, args);
  const ping = () => call('ping', []) as Promise<void>;
  const availability: StoreAvailability = {
    get up() {
      return gone === null;
    },
    get reason() {
      return gone?.message ?? null;
    },
    onChange(listener) {
      changes.add(listener);
      return () => void changes.delete(listener);
    },
    check: () =>
      ping().then(
        () => true,
        () => false,
      ),
  };
  Object.assign(store, {
    ping,
    availability,
    onLedger(listener: (entry: LedgerEntry) => void) {
      if (ledgerListeners.size === 0 && !gone) post({ kind: 'listen-ledger' });
      ledgerListeners.add(listener);
      return () => void ledgerListeners.delete(listener);
    },
    async close() {
      if (closing) return exited;
      // The calls already made are sent first; the thread answers them, commits and closes.
      flush();
      closing = true;
      worker.ref();
      if (!gone) post({ kind: 'close' });
      await exited;
    },
  });
  return store as unknown as Store;
}

/** An error sent by the thread, as the class the caller checks for. */
function rebuilt(e: SentError): Error {
  if (e.gateway) {
    const details = {
      ...(e.gateway.param === undefined ? {} : { param: e.gateway.param }),
      ...(e.gateway.retryAfter === undefined ? {} : { retryAfter: e.gateway.retryAfter }),
    };
    return new GatewayError(e.gateway.code as ErrorCode, e.message, details);
  }
  if (e.tokenName !== undefined) return new TokenNameTaken(e.tokenName);
  const err = new Error(e.message) as Error & { code?: string };
  err.name = e.name;
  if (e.code !== undefined) err.code = e.code;
  return err;
}

/**
 * A Buffer crosses a thread as a plain Uint8Array; a record that holds one (a link's data) gets a
 * Buffer over the same bytes back. Records are met at the top or in a list (pages), so two levels.
 */
function withBuffers(value: unknown, depth = 0): unknown {
  if (value instanceof Uint8Array) return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (depth > 2 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (v !== null && typeof v === 'object') value[i] = withBuffers(v, depth + 1);
    }
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const k in record) {
    const v = record[k];
    if (v !== null && typeof v === 'object') record[k] = withBuffers(v, depth + 1);
  }
  return value;
}
