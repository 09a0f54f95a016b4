import type { CompiledChannel, CompiledOperation } from '../config/snapshot.js';
import type { Dispatcher } from 'undici';
import { readAnswer, send, sendForAnswer } from '../upstream/dispatch.js';
import type { Pools } from '../upstream/pools.js';
import { signRequest } from '../signers/registry.js';
import { addCallerHeaders, type CallerIds } from '../upstream/trace-headers.js';
import type { UpstreamRequest, UpstreamResponse } from '../upstream/upstream-request.js';
import { type mapRequest, mapRequestNow, type RequestMappingInput, type TaskMappingInput } from './map-request.js';
import { mapFailure, mapSuccess, type ResponseContext } from './map-response.js';

/** A mapping input without what every call adds itself: the channel and the time. */
export type CallInput = Omit<RequestMappingInput, 'channel' | 'now'> | Omit<TaskMappingInput, 'channel' | 'now'>;

/**
 * The request a channel's mappings build from `input`, signed for the channel when it goes to the
 * channel's own origin (`signed`): the first half of every vendor call. The mappings see the
 * channel and `now`; the signature is made at `now` too. A call made for a public request (`ids`)
 * carries its request id and trace, added before signing.
 */
export async function upstreamRequest(
  mappings: Parameters<typeof mapRequest>[0],
  channel: CompiledChannel,
  input: CallInput,
  now: Date,
  ids?: CallerIds,
): Promise<{ req: UpstreamRequest; signed: boolean }> {
  const req = await unsignedRequest(mappings, channel, input, now, ids);
  return { req, signed: signFor(channel, req, now) };
}

/** The request of `upstreamRequest` before it is signed: mapped, with the caller's ids (the admin playground signs it with stand-in secrets). */
export async function unsignedRequest(
  mappings: Parameters<typeof mapRequest>[0],
  channel: CompiledChannel,
  input: CallInput,
  now: Date,
  ids?: CallerIds,
): Promise<UpstreamRequest> {
  return unsignedRequestNow(mappings, channel, input, now, ids);
}

/** What mappings see of each channel (`channel`), made once per compiled channel rather than per call. */
const views = new WeakMap<CompiledChannel, RequestMappingInput['channel']>();
function channelView(channel: CompiledChannel): RequestMappingInput['channel'] {
  let view = views.get(channel);
  if (!view) {
    view = Object.freeze({ name: channel.name, settings: channel.settings });
    views.set(channel, view);
  }
  return view;
}

/** `unsignedRequest`, giving the request itself when every mapping answers on the fast path (map-request.ts, `mapRequestNow`). */
function unsignedRequestNow(
  mappings: Parameters<typeof mapRequest>[0],
  channel: CompiledChannel,
  input: CallInput,
  now: Date,
  ids?: CallerIds,
): UpstreamRequest | Promise<UpstreamRequest> {
  const req = mapRequestNow(mappings, channel, { ...input, channel: channelView(channel), now: now.toISOString() } as RequestMappingInput | TaskMappingInput);
  if (req instanceof Promise) {
    return req.then((r) => {
      addCallerHeaders(r, ids);
      return r;
    });
  }
  addCallerHeaders(req, ids);
  return req;
}

/** Signs a request for the channel when it goes to the channel's own origin (credentials never go to another host); says whether it did. */
export function signFor(channel: CompiledChannel, req: UpstreamRequest, now: Date): boolean {
  const sameOrigin = !/^https?:\/\//i.test(req.path) || new URL(req.path).origin === channel.origin;
  if (sameOrigin) signRequest(channel.profile.auth, req, new ChannelSigning(channel, now.getTime()));
  return sameOrigin;
}

/** What a signer is given of a channel: one object a call, its secrets read through a method rather than a closure made each time. */
class ChannelSigning {
  constructor(
    readonly cacheKey: CompiledChannel,
    readonly nowMs: number,
  ) {}

  secret(name: string): string {
    return this.cacheKey.secrets[name]?.reveal() ?? '';
  }
}

/** How one vendor call is made besides its operation and input; every field is optional. */
export interface CallOptions {
  /** Turns a request that could not be built into the error thrown; default: as it is. */
  readonly requestError?: (err: unknown) => unknown;
  /** The public request the call serves: its request id and trace go to the vendor. None for the poller's own looks. */
  readonly ids?: CallerIds;
  /** Aborts the call (a streamed answer's reader cuts it this way). */
  readonly signal?: AbortSignal;
}

/**
 * One vendor call of a profile operation: map, sign, dispatch (docs/channels-yaml.md, "Mapping inputs"); the
 * answer is read whole within the operation's size limit. A request that could not be built is
 * thrown through `opts.requestError` (the sync and submit paths turn a mapping that failed on the
 * client's values into `invalid_request`); a transport failure is a GatewayError with
 * `details.upstream` set. `mapAnswer` maps the answer back.
 */
export function callUpstream(
  op: CompiledOperation,
  channel: CompiledChannel,
  input: CallInput,
  now: Date,
  pools: Pools,
  opts: CallOptions = {},
): Promise<UpstreamResponse> {
  // A signal is for a call read as it streams: that one goes through sendUpstream and readAnswer.
  if (opts.signal) return sendUpstream(op, channel, input, now, pools, opts).then((res) => readAnswer(res, channel, op.response.maxBytes));
  // Thens, not async frames (each await is a few hundred bytes of heap: issue 41); the answer read
  // whole by sendForAnswer, with no stream made for it.
  const req = signedRequest(op, channel, input, now, opts);
  if (req instanceof Promise) return req.then((r) => sendForAnswer(pools, channel, r, op.response.maxBytes));
  return sendForAnswer(pools, channel, req, op.response.maxBytes);
}

/** `callUpstream` up to the answer's headers: its body left unread, for an answer read as it streams. */
export function sendUpstream(
  op: CompiledOperation,
  channel: CompiledChannel,
  input: CallInput,
  now: Date,
  pools: Pools,
  opts: CallOptions = {},
): Promise<Dispatcher.ResponseData> {
  const req = signedRequest(op, channel, input, now, opts);
  if (req instanceof Promise) return req.then((r) => send(pools, channel, r, opts.signal));
  return send(pools, channel, req, opts.signal);
}

/**
 * The operation's request, mapped and signed: itself when every mapping answered on the fast
 * path, else its promise. A request that could not be built is rejected through
 * `opts.requestError` (a rejected promise, never a throw).
 */
function signedRequest(
  op: CompiledOperation,
  channel: CompiledChannel,
  input: CallInput,
  now: Date,
  opts: CallOptions,
): UpstreamRequest | Promise<UpstreamRequest> {
  let mapped: UpstreamRequest | Promise<UpstreamRequest>;
  try {
    mapped = unsignedRequestNow(op.request, channel, input, now, opts.ids);
    if (!(mapped instanceof Promise)) signFor(channel, mapped, now);
  } catch (err) {
    return Promise.reject(refusedRequest(opts, err));
  }
  if (!(mapped instanceof Promise)) return mapped;
  return mapped.then(
    (req) => {
      try {
        signFor(channel, req, now);
      } catch (err) {
        throw refusedRequest(opts, err);
      }
      return req;
    },
    (err: unknown) => {
      throw refusedRequest(opts, err);
    },
  );
}

/** A request that could not be built, as the caller wants it thrown (`requestError`), or as it is. */
function refusedRequest(opts: CallOptions, err: unknown): unknown {
  return opts.requestError ? opts.requestError(err) : err;
}

/** The second half: a 2xx answer through the operation's response mapping, anything else through its error mapping (thrown). */
export async function mapAnswer(op: CompiledOperation, res: UpstreamResponse, mctx: ResponseContext): Promise<unknown> {
  if (res.status < 200 || res.status >= 300) throw await mapFailure(op, res, mctx);
  return mapSuccess(op, res, mctx);
}
