import type { CompiledOperation, RetryPolicy } from '../config/snapshot.js';
import type { ChannelChoice } from '../routing/rank-channels.js';

/** Slack over the computed bound, for the event loop and the store. */
const MARGIN_MS = 5_000;

/**
 * How long a synchronous request can run, so its hold expires only after it can no longer finish
 * (docs/tokens-and-quota.md, "Quota, prices and the ledger"): no new attempt starts after `routing.deadline_ms`
 * (plus one backoff), and one attempt on a channel takes at most its connect, header and body
 * timeouts (a streamed answer: its `response.max_ms` instead of the body's), and for an awaiting
 * operation its `await.timeout_ms` and one more look.
 */
export function holdLifetimeMs(retry: RetryPolicy, candidates: readonly ChannelChoice[], opOf: (c: ChannelChoice) => CompiledOperation): number {
  let longestCall = 0;
  for (const c of candidates) {
    const t = c.channel.timeouts;
    const op = opOf(c);
    // A streamed answer may go on for as long as its operation lets it (response.max_ms).
    const call = t.connectMs + t.headersMs + (op.response.stream ? op.response.stream.maxMs : t.bodyMs);
    longestCall = Math.max(longestCall, op.await ? call + op.await.timeoutMs + call : call);
  }
  return retry.deadlineMs + retry.backoffMaxMs + longestCall + MARGIN_MS;
}
