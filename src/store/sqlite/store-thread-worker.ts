/**
 * The embedded store's own thread (./store-thread.ts): the SQLite store opened here, so its
 * statements, its commits and the syncs SQLite makes in them (the WAL's header, each time the WAL
 * starts over) never run on the event loop that serves requests. Each call runs as it would on
 * the loop, the group commit batching the writes of a turn of this thread; answers go back in
 * one message per turn.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { LedgerEntry } from '../quota-store.js';
import type { Store } from '../store.js';
import { openSqliteStore } from './sqlite-store.js';
import type { Answer, Call, FromThread, SentError, ThreadData, ToThread } from './thread-messages.js';

const port = parentPort;
if (!port) throw new Error('the store thread runs on a worker thread');
const { path } = workerData as ThreadData;

// The store's clock is the caller's: each call brings its reading (tests move the caller's).
let now = Date.now();
const send = (m: FromThread) => port.postMessage(m);

let store: Store;
try {
  store = openSqliteStore(path, () => now);
} catch (err) {
  send({ kind: 'failed', error: sent(err) });
  port.close();
  throw err;
}
const methods = Object.keys(store).filter((k) => typeof (store as unknown as Record<string, unknown>)[k] === 'function');
const table = store as unknown as Record<string, (...args: unknown[]) => unknown>;

let answers: Answer[] = [];
let ledger: LedgerEntry[] = [];
let scheduled = false;
let listening = false;
const flush = () => {
  scheduled = false;
  if (answers.length === 0 && ledger.length === 0) return;
  // One message a turn: a paced hold's answer and its debit's row wake the loop once.
  send({ kind: 'turn', ledger, answers });
  answers = [];
  ledger = [];
};
const schedule = () => {
  if (scheduled) return;
  scheduled = true;
  setImmediate(flush);
};
const answer = (a: Answer) => {
  answers.push(a);
  schedule();
};

function run([id, method, args, at]: Call): void {
  now = at;
  const fn = table[method];
  if (!fn || method === 'close' || method === 'onLedger') {
    answer([id, false, { name: 'Error', message: `the store has no method ${method}` }]);
    return;
  }
  try {
    const out = fn(...args);
    if (out instanceof Promise) {
      out.then(
        (value) => answer([id, true, value]),
        (err) => answer([id, false, sent(err)]),
      );
    } else answer([id, true, out]);
  } catch (err) {
    answer([id, false, sent(err)]);
  }
}

port.on('message', (m: ToThread) => {
  if (m.kind === 'calls') {
    for (const call of m.calls) run(call);
  } else if (m.kind === 'listen-ledger') {
    if (listening) return;
    listening = true;
    store.onLedger((entry) => {
      ledger.push(entry);
      schedule();
    });
  } else if (m.kind === 'close') {
    void store.close().then(
      () => {
        flush();
        send({ kind: 'closed' });
        port.close();
      },
      (err) => {
        send({ kind: 'failed', error: sent(err) });
        port.close();
      },
    );
  }
});
send({ kind: 'ready', methods });

/** An error as data the caller's side rebuilds (ErrorLike: GatewayError, TokenNameTaken, a driver's). */
function sent(err: unknown): SentError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as Error & { code?: unknown; details?: { param?: string; retryAfter?: number }; tokenName?: string };
  const base = { name: e.name, message: e.message };
  if (e.name === 'GatewayError' && typeof e.code === 'string') {
    return { ...base, gateway: { code: e.code, param: e.details?.param, retryAfter: e.details?.retryAfter } };
  }
  if (e.name === 'TokenNameTaken' && typeof e.tokenName === 'string') return { ...base, tokenName: e.tokenName };
  return typeof e.code === 'string' ? { ...base, code: e.code } : base;
}
