import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { maskedUrl } from '../config/secret.js';
import { DependencyGate } from '../dependencies/dependency-gate.js';
import type { Metrics } from '../metrics/metrics.js';
import { END_PROBE, HIT_WINDOW, RENEW_SLOT, RESTORE_WINDOW, TAKE_SLOT } from './redis-scripts.js';
import { EVENTS, eventMessage, parseEvent, parseStatus } from './live-messages.js';
import type { KeptWindow, LiveEvent, ReplicaStatus, SharedLive, SharedSlot, WindowHit } from './shared-live.js';

/** How a replica shares through Redis. */
export interface RedisLiveOptions {
  /** GATEWAY_REDIS: redis://… or rediss://… */
  readonly url: string;
  /** GATEWAY_REDIS_PREFIX: the start of every key and channel, so gateways can share one Redis. */
  readonly prefix: string;
  /** This replica's name (GATEWAY_REPLICA_ID). */
  readonly replica: string;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** How long a slot outlives a replica that stopped renewing it (crashed); default 15 s. */
  readonly slotLeaseMs?: number;
  /** How long the first connection is waited for at start; default 2 s (after it, the replica starts per process and keeps trying). */
  readonly connectWaitMs?: number;
  /** A command Redis does not answer within this marks it away for the process; default 1 s (tests lower it). */
  readonly commandTimeoutMs?: number;
  /** How often a replica that found Redis away asks it again; default 1 s. */
  readonly probeEveryMs?: number;
}

const DEFAULT_SLOT_LEASE_MS = 15_000;
/** A probe's right outlives a replica that died while probing by this much. */
const PROBE_LEASE_MS = 30_000;
/** Replicas say what they serve this often; one silent for five times as long is gone. */
const ANNOUNCE_MS = 2_000;
/** A command Redis does not answer within this is done in-process instead, and Redis is away until a PING answers. */
const COMMAND_TIMEOUT_MS = 1_000;
/** Windows restored into a Redis that came back, per pipeline sent. */
const RESTORE_BATCH = 500;

type Scripts = Redis & {
  gwTakeSlot(key: string, limit: number, member: string, leaseMs: number): Promise<number>;
  gwRenewSlot(key: string, member: string, leaseMs: number): Promise<number>;
  gwEndProbe(key: string, holder: string): Promise<number>;
  gwHitWindow(key: string, limit: number, windowMs: number, member: string): Promise<[number, number, number, number]>;
  gwRestoreWindow(key: string, windowMs: number, ...agesAndMembers: (number | string)[]): Promise<number>;
};

/**
 * Live state shared through Redis: slots are sorted sets of leases (member → lease end on Redis's
 * clock) renewed while held, so a crashed replica's slots come back when their leases run out;
 * events go over one pub/sub channel; an open breaker is also kept as a key, for replicas that
 * start (or reconnect) after it opened; replicas announce their config version in one hash.
 * Redis away: every call answers "not shared" at once (no queue, no wait), the limits become
 * per process, a warning is logged once and gateway_redis_up reads 0, until it is back. Away is
 * the DependencyGate's rule: a closed connection, and also a command unanswered within its 1 s
 * (a hung Redis keeps its connection open), mark Redis away until a PING answers again; then the
 * windows each replica kept meanwhile are restored into Redis before anything is shared again.
 */
export class RedisLive implements SharedLive {
  readonly #cmd: Scripts;
  readonly #sub: Redis;
  readonly #o: RedisLiveOptions;
  readonly #leaseMs: number;
  readonly #held = new Map<string, string>();
  readonly #events: ((e: LiveEvent) => void)[] = [];
  readonly #resyncs: (() => void)[] = [];
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #gate: DependencyGate;
  #status: (() => Omit<ReplicaStatus, 'seenAt'>) | null = null;
  #kept: (() => Iterable<KeptWindow>) | null = null;
  #seq = 0;
  #subscribedOnce = false;
  /** Settles once the first SUBSCRIBE was answered (events published before it are not heard). */
  readonly #subscribed: Promise<void>;
  #closed = false;

  private constructor(o: RedisLiveOptions) {
    this.#o = o;
    this.#leaseMs = o.slotLeaseMs ?? DEFAULT_SLOT_LEASE_MS;
    const timeoutMs = o.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
    const common = { connectTimeout: 2_000, retryStrategy: (times: number) => Math.min(times * 250, 2_000) };
    // ioredis's own timeout only lets go of its queue; the gate's budget is what requests wait for.
    this.#cmd = new Redis(o.url, { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: timeoutMs * 2 }) as Scripts;
    this.#cmd.defineCommand('gwTakeSlot', { numberOfKeys: 1, lua: TAKE_SLOT });
    this.#cmd.defineCommand('gwRenewSlot', { numberOfKeys: 1, lua: RENEW_SLOT });
    this.#cmd.defineCommand('gwEndProbe', { numberOfKeys: 1, lua: END_PROBE });
    this.#cmd.defineCommand('gwHitWindow', { numberOfKeys: 1, lua: HIT_WINDOW });
    this.#cmd.defineCommand('gwRestoreWindow', { numberOfKeys: 1, lua: RESTORE_WINDOW });
    // The subscriber queues its SUBSCRIBE until connected and subscribes again after each reconnect.
    this.#sub = new Redis(o.url, { ...common, maxRetriesPerRequest: null });
    this.#gate = new DependencyGate({
      name: 'redis',
      log: o.log,
      metrics: o.metrics,
      help: '1 while Redis is reachable and limits, breakers and reloads are shared across replicas; 0 while they are per process',
      timeoutMs,
      probeEveryMs: o.probeEveryMs ?? 1_000,
      probe: () => this.#cmd.ping(),
      connected: () => this.#cmd.status === 'ready',
      beforeBack: () => this.#restoreWindows(),
      onMove: (up) => this.#moved(up),
      saying: {
        away: 'Redis unreachable: limits, breakers and reloads are per process until it is back',
        back: 'Redis reachable: limits, breakers and reloads are shared across replicas',
      },
      logged: { redis: maskedUrl(o.url) },
    });
    // A connection that closed (and comes back) may have come back to a Redis that restarted empty:
    // it is away until the probe answers and the windows kept meanwhile are restored.
    this.#cmd.on('close', () => this.#gate.markAway('the connection closed'));
    this.#cmd.on('ready', () => this.#gate.changed());
    // Errors also surface as closes; the transition is what is logged, not every retry.
    this.#cmd.on('error', () => undefined);
    this.#sub.on('error', () => undefined);
    this.#sub.on('ready', () => {
      // Events published while the subscriber was away were missed.
      if (this.#subscribedOnce) this.#resync();
      this.#subscribedOnce = true;
    });
    this.#sub.on('message', (_channel: string, text: string) => this.#deliver(text));
    this.#subscribed = this.#sub.subscribe(this.#key(EVENTS)).then(
      () => undefined,
      () => undefined,
    );
    this.#timers.push(setInterval(() => this.#renew(), Math.max(100, Math.floor(this.#leaseMs / 3))));
    this.#timers.push(setInterval(() => this.#announce(), ANNOUNCE_MS));
    for (const t of this.#timers) t.unref();
  }

  /** Connects (waiting a little for the connection and the subscription) and starts renewing and announcing. */
  static async open(o: RedisLiveOptions): Promise<RedisLive> {
    const live = new RedisLive(o);
    const ready = new Promise<void>((resolve) => (live.up ? resolve() : live.#cmd.once('ready', () => resolve())));
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, o.connectWaitMs ?? 2_000)));
    await Promise.race([Promise.all([ready, live.#subscribed]), bound]);
    clearTimeout(timer);
    if (!live.up) live.#gate.markAway('not reachable at start');
    return live;
  }

  get up(): boolean {
    return this.#gate.up;
  }

  async takeSlot(key: string, limit: number): Promise<SharedSlot | null | undefined> {
    if (!this.up) return this.#fallback('slot');
    const full = this.#key(`slots:${key}`);
    const member = `${this.#o.replica}:${++this.#seq}`;
    let taken: number;
    try {
      taken = await this.#gate.run(() => this.#cmd.gwTakeSlot(full, limit, member, this.#leaseMs));
    } catch {
      return this.#fallback('slot');
    }
    if (taken < 1) return null;
    this.#held.set(member, full);
    return {
      held: taken,
      release: () => {
        if (!this.#held.delete(member)) return;
        // Not answered (Redis away): the lease runs out instead.
        this.#spare(() => this.#cmd.zrem(full, member));
      },
    };
  }

  async hitWindow(key: string, limit: number, windowMs: number, member: string): Promise<WindowHit | undefined> {
    if (!this.up) return this.#fallback('window');
    const full = this.#key(`window:${key}`);
    try {
      const [admitted, remaining, retryAfterMs, resetMs] = await this.#gate.run(() => this.#cmd.gwHitWindow(full, limit, windowMs, member));
      // Not answered (Redis away): the entry leaves the window with time instead.
      const uncount = () => this.#spare(() => this.#cmd.zrem(full, member));
      return { admitted: admitted === 1, remaining: Math.max(0, remaining), retryAfterMs: Math.max(0, retryAfterMs), resetMs: Math.max(0, resetMs), uncount };
    } catch {
      return this.#fallback('window');
    }
  }

  keepWindows(kept: () => Iterable<KeptWindow>): void {
    this.#kept = kept;
  }

  async claimProbe(channel: string): Promise<boolean> {
    if (!this.up) return this.#fallback('probe') ?? true;
    try {
      return (await this.#gate.run(() => this.#cmd.set(this.#key(`probe:${channel}`), this.#o.replica, 'PX', PROBE_LEASE_MS, 'NX'))) === 'OK';
    } catch {
      return this.#fallback('probe') ?? true;
    }
  }

  endProbe(channel: string): void {
    this.#spare(() => this.#cmd.gwEndProbe(this.#key(`probe:${channel}`), this.#o.replica));
  }

  publish(event: LiveEvent): void {
    if (!this.up) return void this.#fallback('publish');
    const pipe = this.#cmd.pipeline();
    if (event.t === 'breaker') {
      const key = this.#key(`breaker:${event.channel}`);
      if (event.state === 'open' && event.retryAt !== null) pipe.set(key, JSON.stringify(event), 'PX', Math.max(1_000, event.retryAt - Date.now()));
      else pipe.del(key);
    }
    pipe.publish(this.#key(EVENTS), eventMessage(event, this.#o.replica));
    this.#gate.run(() => pipe.exec()).catch(() => this.#fallback('publish'));
  }

  onEvent(listener: (event: LiveEvent) => void): void {
    this.#events.push(listener);
  }

  onResync(listener: () => void): void {
    this.#resyncs.push(listener);
  }

  async openBreakers(channels: readonly string[]): Promise<Map<string, Extract<LiveEvent, { t: 'breaker' }>>> {
    const open = new Map<string, Extract<LiveEvent, { t: 'breaker' }>>();
    if (!this.up || channels.length === 0) return open;
    try {
      const values = await this.#gate.run(() => this.#cmd.mget(channels.map((c) => this.#key(`breaker:${c}`))));
      values.forEach((v, i) => {
        const e = v === null ? null : parseEvent(v)?.event;
        if (e?.t === 'breaker' && e.channel === channels[i] && e.state === 'open') open.set(e.channel, e);
      });
    } catch {
      this.#fallback('breakers');
    }
    return open;
  }

  announce(status: () => Omit<ReplicaStatus, 'seenAt'>): void {
    this.#status = status;
    this.#announce();
  }

  async replicas(): Promise<ReplicaStatus[] | null> {
    if (!this.up) return this.#fallback('replicas') ?? null;
    let all: Record<string, string>;
    try {
      all = await this.#gate.run(() => this.#cmd.hgetall(this.#key('replicas')));
    } catch {
      return this.#fallback('replicas') ?? null;
    }
    const fresh: ReplicaStatus[] = [];
    const gone: string[] = [];
    for (const [replica, text] of Object.entries(all)) {
      const s = parseStatus(text);
      if (s && Date.now() - Date.parse(s.seenAt) <= ANNOUNCE_MS * 5) fresh.push(s);
      else gone.push(replica);
    }
    if (gone.length > 0) this.#spare(() => this.#cmd.hdel(this.#key('replicas'), ...gone));
    return fresh.sort((a, b) => a.replica.localeCompare(b.replica));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    for (const t of this.#timers) clearInterval(t);
    if (this.up) {
      const pipe = this.#cmd.pipeline();
      for (const [member, key] of this.#held) pipe.zrem(key, member);
      pipe.hdel(this.#key('replicas'), this.#o.replica);
      await this.#gate.run(() => pipe.exec()).catch(() => undefined);
    }
    this.#closed = true;
    this.#gate.close();
    this.#held.clear();
    this.#cmd.disconnect();
    this.#sub.disconnect();
  }

  #key(name: string): string {
    return `${this.#o.prefix}${name}`;
  }

  /** Counts an operation done in-process for want of Redis; undefined, the "not shared" answer. */
  #fallback(op: string): undefined {
    this.#o.metrics.sharedFallbacks.inc({ op });
    return undefined;
  }

  /** A command nobody waits for (a release, a renewal): sent while Redis is up, its failure marks Redis away. */
  #spare(command: () => Promise<unknown>): void {
    if (this.up) this.#gate.run(command).catch(() => undefined);
  }

  /** Shared again (the gate logged it): tell the others who this replica is, and catch up on what was missed. */
  #moved(up: boolean): void {
    if (!up || this.#closed) return;
    this.#announce();
    this.#resync();
  }

  /**
   * Before sharing again, puts back into Redis the requests this replica counted in each window
   * (while Redis was away, and before: a Redis that restarted empty forgot them), each under its
   * own member, so a window never admits more than the replicas counted and nothing is counted twice.
   */
  async #restoreWindows(): Promise<void> {
    if (!this.#kept) return;
    let pipe = this.#cmd.pipeline() as unknown as { gwRestoreWindow(key: string, windowMs: number, ...a: (number | string)[]): void; exec(): Promise<unknown> };
    let queued = 0;
    for (const w of this.#kept()) {
      if (w.hits.length === 0) continue;
      pipe.gwRestoreWindow(this.#key(`window:${w.key}`), w.windowMs, ...w.hits.flatMap((h) => [h.ageMs, h.member]));
      if (++queued === RESTORE_BATCH) {
        await pipe.exec();
        pipe = this.#cmd.pipeline() as unknown as typeof pipe;
        queued = 0;
      }
    }
    if (queued > 0) await pipe.exec();
  }

  #resync(): void {
    for (const l of this.#resyncs) l();
  }

  #deliver(text: string): void {
    const e = parseEvent(text);
    if (!e || e.from === this.#o.replica) return;
    for (const l of this.#events) l(e.event);
  }

  #renew(): void {
    if (!this.up || this.#held.size === 0) return;
    const pipe = this.#cmd.pipeline() as unknown as { gwRenewSlot(key: string, member: string, ms: number): void; exec(): Promise<unknown> };
    for (const [member, key] of this.#held) pipe.gwRenewSlot(key, member, this.#leaseMs);
    this.#spare(() => pipe.exec());
  }

  #announce(): void {
    if (!this.#status || this.#closed) return;
    if (!this.up) return void this.#fallback('announce');
    const status: ReplicaStatus = { ...this.#status(), seenAt: new Date().toISOString() };
    this.#spare(() => this.#cmd.hset(this.#key('replicas'), this.#o.replica, JSON.stringify(status)));
  }
}

/**
 * Tells the replicas sharing `prefix` one event (or several, in order) and disconnects: for a process that is not a
 * replica (`gateway tokens disable` run by an operator). False when Redis could not be told
 * within a few seconds; the replicas then learn it when their cached lookups run out.
 */
export async function tellReplicas(url: string, prefix: string, events: LiveEvent | readonly LiveEvent[]): Promise<boolean> {
  const redis = new Redis(url, {
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    lazyConnect: true,
    commandTimeout: COMMAND_TIMEOUT_MS,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    for (const event of [events].flat()) await redis.publish(`${prefix}${EVENTS}`, eventMessage(event, 'cli'));
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}
