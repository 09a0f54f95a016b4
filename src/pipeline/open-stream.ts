import type { CompiledChannel, CompiledOperation, StreamLimits } from '../config/snapshot.js';
import { isErrorCode } from '../errors/catalogue.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ChannelChoice } from '../routing/rank-channels.js';
import { discard, readAnswer, transportError } from '../upstream/dispatch.js';
import { EventReader, type VendorEvent } from '../upstream/event-stream.js';
import type { Pools } from '../upstream/pools.js';
import { sendUpstream } from './call-upstream.js';
import { operationInput, responseContext } from './call-operation.js';
import type { RequestContext } from './context.js';
import { clientInputError } from './map-request.js';
import { mapFailure, type ResponseContext } from './map-response.js';

/**
 * A vendor's streamed answer (`response.type: stream`, docs/channels-yaml.md "Streamed answers"),
 * opened for a public request and read one public event at a time: each vendor event is parsed as it
 * arrives and mapped by the operation's `response.body`, which gives the public event, the vendor's
 * error, or nothing (the event is dropped). Nothing is read ahead: the next vendor event is read
 * only when the relay asks for it, so a client that reads slowly slows the vendor's connection
 * (TCP backpressure) and at most one event is held.
 *
 * `openStream` returns only once the first public event is in hand: a failure before it (the
 * vendor's error status, its error event, a malformed or missing first event, a stall) is thrown
 * like any failed call, so the client gets its usual JSON error and another channel may be tried.
 */

/** One event for the client: its SSE name (null: none), its data, and whether it delivers the result (the price settles before it). */
export interface PublicEvent {
  readonly event: string | null;
  readonly data: unknown;
  readonly final: boolean;
}

/** What a stream's event mapping may give (docs/channels-yaml.md, "Streamed answers"). */
interface MappedEvent {
  event?: unknown;
  data?: unknown;
  final?: unknown;
  error?: { code?: unknown; message?: unknown; param?: unknown };
}

/** A vendor stream being read: `next()` gives the public events in order, then null at its end. */
export class VendorStream {
  /** Events the vendor sent so far (dropped ones included): what mappings see as `index`. */
  #index = 0;
  /** Why the stream was cut by us (a stall, its time up, the client gone), thrown instead of the transport's error. */
  #cutBy: GatewayError | null = null;
  readonly #deadline: NodeJS.Timeout;

  constructor(
    private readonly events: EventReader,
    private readonly op: CompiledOperation,
    private readonly mctx: ResponseContext & { readonly status: number; readonly headers: unknown },
    private readonly channel: CompiledChannel,
    private readonly abort: AbortController,
    /** Longest wait for one vendor event. */
    readonly idleMs: number,
    maxMs: number,
  ) {
    this.#deadline = setTimeout(() => this.cut(new GatewayError('upstream_timeout', `the upstream stream lasted longer than ${maxMs} ms`)), maxMs);
    this.#deadline.unref();
  }

  /** The channel that streams. */
  get channelName(): string {
    return this.channel.name;
  }

  /**
   * The next public event; null when the vendor's stream ended cleanly. Throws a GatewayError: the
   * vendor's error event, a malformed event or mapping, a stall longer than `idleMs`, a cut connection.
   */
  async next(): Promise<PublicEvent | null> {
    for (;;) {
      const got = await this.#read();
      if (got === null) {
        clearTimeout(this.#deadline);
        return null;
      }
      const out = await this.#map(got);
      if (out) return out;
    }
  }

  /** Stops reading: the vendor's request is aborted (the client went away, or the relay gave up). Safe to call twice. */
  cut(why: GatewayError = new GatewayError('bad_response', 'the stream was closed')): void {
    clearTimeout(this.#deadline);
    if (this.#cutBy) return;
    this.#cutBy = why;
    this.abort.abort(why);
  }

  /** One vendor event, within the idle time; null at the stream's clean end. */
  async #read(): Promise<VendorEvent | null> {
    if (this.#cutBy) throw this.#cutBy;
    const idle = setTimeout(() => this.cut(new GatewayError('upstream_timeout', `the upstream sent no event for ${this.idleMs} ms`)), this.idleMs);
    try {
      return await this.events.next();
    } catch (err) {
      if (this.#cutBy) throw this.#cutBy;
      if (err instanceof GatewayError) throw err;
      throw transportError(err, this.channel);
    } finally {
      clearTimeout(idle);
    }
  }

  /** A vendor event through the mapping: the public event, or null when dropped; the vendor's error thrown. */
  async #map(ev: VendorEvent): Promise<PublicEvent | null> {
    const index = this.#index++;
    let body: unknown;
    try {
      body = JSON.parse(ev.data);
    } catch {
      throw new GatewayError('bad_response', 'the upstream sent a malformed event', {
        cause: { event: ev.event, index, data: ev.data.slice(0, 200) },
        upstream: { phase: 'unknown' },
      });
    }
    const upstream = { phase: 'unknown' as const, blame: 'mapping' as const };
    let out: MappedEvent | null | undefined;
    try {
      out = (await this.op.response.body.evaluate({ ...this.mctx, event: ev.event, body, index })) as MappedEvent | null | undefined;
    } catch (err) {
      throw new GatewayError('bad_response', 'an upstream event could not be translated', { cause: err, upstream });
    }
    if (out === undefined || out === null) return null;
    if (typeof out !== 'object') {
      throw new GatewayError('bad_response', 'an upstream event could not be translated', { cause: { mapping: this.op.response.body.where, out }, upstream });
    }
    if (out.error !== undefined && out.error !== null) {
      const e = out.error;
      const code = isErrorCode(e.code) ? e.code : 'bad_response';
      const message = typeof e.message === 'string' && e.message !== '' ? e.message.slice(0, 1000) : 'the upstream failed during the stream';
      throw new GatewayError(code, message, {
        param: typeof e.param === 'string' ? e.param : undefined,
        cause: { event: ev.event, index, channel: this.channel.name },
        upstream: { phase: 'answered', status: this.mctx.status },
      });
    }
    if (out.data === undefined) {
      throw new GatewayError('bad_response', 'an upstream event could not be translated', { cause: { mapping: this.op.response.body.where, out }, upstream });
    }
    return { event: typeof out.event === 'string' && out.event !== '' ? out.event : null, data: out.data, final: out.final === true };
  }
}

/**
 * Calls the chosen channel's streaming operation for a public request and reads up to its first
 * public event. A non-2xx answer is read whole and mapped by the operation's error mapping, as for
 * any call. The vendor's request is aborted when `gone` fires (the client went away).
 */
export async function openStream(ctx: RequestContext, choice: ChannelChoice, pools: Pools): Promise<{ stream: VendorStream; first: PublicEvent }> {
  const { channel, operation: op } = choice;
  const limits = op.response.stream as StreamLimits;
  const input = operationInput(ctx, ctx.body, ctx.model, choice.upstreamModel);
  const abort = new AbortController();
  const res = await sendUpstream(op, channel, input, ctx.now, pools, { requestError: clientInputError, ids: ctx, signal: abort.signal });
  const mctx = responseContext(ctx, choice);
  if (res.statusCode < 200 || res.statusCode >= 300) throw await mapFailure(op, await readAnswer(res, channel, op.response.maxBytes), mctx);
  const events = new EventReader(res.body as AsyncIterable<Buffer>, limits.framing, op.response.maxBytes);
  const stream = new VendorStream(
    events,
    op,
    { ...mctx, status: res.statusCode, headers: res.headers },
    channel,
    abort,
    limits.idleMs ?? channel.timeouts.bodyMs,
    limits.maxMs,
  );
  try {
    const first = await stream.next();
    if (first === null) {
      throw new GatewayError('bad_response', 'the upstream stream ended before its first event', { upstream: { phase: 'unknown' } });
    }
    return { stream, first };
  } catch (err) {
    stream.cut();
    discard(res.body);
    throw err;
  }
}

/** What a stream's price does once the relay knows the outcome; `holdQuota` gives it. */
export interface StreamSettlement {
  /** Charges the held price: called before the first `final` event is written. */
  settle(): void;
  /** Gives the price back: the stream failed, or the client left, before a `final` event. */
  refund(): void;
}

/**
 * The answer of a streamed request, as the stages after the call leave it for `respond`: the
 * stream with its first event, what settles its price (`holdQuota`), and how each event's files
 * become gateway links (`linkFiles`).
 */
export class StreamAnswer {
  settlement: StreamSettlement | null = null;
  /** Each event's data with its files handed out as links; null: passed as the vendor's mapping gave it. */
  rewrite: ((data: unknown) => Promise<unknown>) | null = null;
  #first: PublicEvent | null;

  constructor(
    readonly stream: VendorStream,
    first: PublicEvent,
  ) {
    this.#first = first;
  }

  /**
   * The first event, once: the relay takes it to write it, and nothing keeps it after (a stream held
   * open for minutes must not keep an image it already sent).
   */
  takeFirst(): PublicEvent | null {
    const first = this.#first;
    this.#first = null;
    return first;
  }
}
