/**
 * A wait a vendor states (its `Retry-After` header, or what a profile's error mapping read from its
 * error body as `retry_after`), turned into seconds the gateway can pass on. One reader for both,
 * so a header and a mapping that hands the header through (`headers."retry-after"`) agree.
 */

/** The longest wait passed on: a vendor that says "tomorrow" still gets the client back within the hour. */
export const MAX_STATED_WAIT_S = 3600;

/** Seconds as `Retry-After` writes them (RFC 9110 delay-seconds; a fraction is allowed for mappings). */
const SECONDS = /^\s*[0-9]+(\.[0-9]+)?\s*$/;
/** An HTTP-date (IMF-fixdate) or an ISO 8601 time with a zone: the forms a vendor names a moment in. */
const HTTP_DATE = /^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$/;
const ISO_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})$/;

/**
 * The wait `value` states, in seconds (at most MAX_STATED_WAIT_S), or undefined when it states none
 * the gateway can use: a number or a numeric string of seconds, or a moment (HTTP-date, ISO time)
 * after `nowMs`. Zero, a moment already past, a negative or non-finite number, and anything else
 * (a word, an object, a loose date form that `Date.parse` would half-guess) state nothing: the
 * routing's own `retry_after_s` applies then. The first item of a list (a repeated header) counts.
 */
export function statedWait(value: unknown, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  let s: number;
  if (typeof v === 'number') s = v;
  else if (typeof v === 'string' && SECONDS.test(v)) s = Number(v);
  else if (typeof v === 'string' && (HTTP_DATE.test(v.trim()) || ISO_TIME.test(v.trim()))) s = (Date.parse(v.trim()) - nowMs) / 1000;
  else return undefined;
  // A wait of 0 (or one already over) is no wait: passed on, it would make clients and the poller spin.
  return Number.isFinite(s) && s > 0 ? Math.min(s, MAX_STATED_WAIT_S) : undefined;
}
