import { GatewayError } from '../errors/gateway-error.js';
import type { UsageGroup, UsageQuery } from '../store/store.js';
import { textParam } from './admin-input.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';
import { toCsv } from './csv.js';

const DAY_MS = 86_400_000;
/** The range when `from` is not given: the last 30 days up to `to`. */
const DEFAULT_DAYS = 30;
/** The longest range one request may sum: a year, leap day included. */
const MAX_DAYS = 366;
/**
 * The most day × token × model groups one answer carries (the CSV has one line each): some 270
 * token × model pairs spending every day of a year. More is refused, to be asked for in pieces.
 */
const MAX_GROUPS = 100_000;
/** 9999-12-31T23:59:59.999Z: an instant beyond is a typing error, not a date. */
const MAX_MS = 253_402_300_799_999;
/** Token ids and model names are far shorter; a longer filter is a mistake. */
const MAX_FILTER = 256;

/**
 * What every level of the usage report gives (docs/operating.md, "Operating"). Each ledger row counts on the
 * UTC day of its own `at`:
 * - `charged`: debits − refunds − settlement give-backs: what the token's `used` moved by;
 * - `refunded`: units of `refund` rows (a failed request or task, an expired hold);
 * - `settled`: units of `settle` rows (what a task's settlement gave back of its hold);
 * - `requests`: debit rows − refund rows: requests and tasks whose charge stands (a refund gives
 *   back a whole debit; a settlement only part of one, so the task stays counted).
 * A refund on a later day than its debit makes that day's figures negative; the sum over both is exact.
 */
interface Figures {
  requests: number;
  charged: number;
  refunded: number;
  settled: number;
}

const zero = (): Figures => ({ requests: 0, charged: 0, refunded: 0, settled: 0 });

function add(into: Figures, g: UsageGroup): void {
  into.requests += g.debits - g.refunds;
  into.charged += g.debit - g.refund - g.settle;
  into.refunded += g.refund;
  into.settled += g.settle;
}

/** An instant as the routes take it: a UTC date `YYYY-MM-DD` (its midnight) or Unix milliseconds; null when absent. */
function instant(raw: string | null, name: string): number | null {
  if (raw === null || raw === '') return null;
  if (/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(raw)) {
    const ms = Date.parse(`${raw}T00:00:00Z`);
    // Round-tripped, so 2026-02-30 is refused rather than read as March 2nd.
    if (ms >= 0 && new Date(ms).toISOString().slice(0, 10) === raw) return ms;
  } else if (/^[0-9]{1,15}$/.test(raw) && Number(raw) <= MAX_MS) return Number(raw);
  throw new GatewayError('invalid_request', `${name} must be a UTC date (YYYY-MM-DD) or Unix milliseconds`, { param: name });
}

/** The query's range and filters: `[from, to)`, at most MAX_DAYS long; a bad one names its parameter. */
function usageQuery(query: URLSearchParams): UsageQuery {
  const givenFrom = instant(query.get('from'), 'from');
  const givenTo = instant(query.get('to'), 'to');
  const to = givenTo ?? Date.now();
  const from = givenFrom ?? Math.max(0, to - DEFAULT_DAYS * DAY_MS);
  // A bad range is the fault of the bound the operator gave last in reading order: `to` when given.
  const param = givenTo !== null ? 'to' : 'from';
  if (from >= to) throw new GatewayError('invalid_request', `from must be before to (from ${from}, to ${to}, Unix ms)`, { param });
  if (to - from > MAX_DAYS * DAY_MS) throw new GatewayError('invalid_request', `the range from..to is at most ${MAX_DAYS} days`, { param });
  return { from, to, tokenId: textParam(query.get('token'), 'token', MAX_FILTER), model: textParam(query.get('model'), 'model', MAX_FILTER) };
}

/** The groups of the range, refused whole when there are more than one answer carries. */
async function usageGroups({ query, deps }: AdminContext): Promise<{ q: UsageQuery; groups: UsageGroup[] }> {
  const q = usageQuery(query);
  const groups = await deps.store.usage(q, MAX_GROUPS + 1);
  if (groups.length > MAX_GROUPS) {
    throw new GatewayError(
      'invalid_request',
      `the range holds more than ${MAX_GROUPS} day × token × model groups; ask for a shorter one, or for one token or model`,
      {
        param: 'from',
      },
    );
  }
  return { q, groups };
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Larger spend first; equal spend in key order, so the answer is the same every time. */
const bySpend =
  <T extends Figures>(key: (x: T) => string) =>
  (x: T, y: T) =>
    y.charged - x.charged || (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0);

/**
 * `GET /admin/usage?from=&to=&token=&model=`: spend from the ledger over `[from, to)`, in total, by
 * token, by model and by UTC day (every day of the range, those without spend at zero).
 */
export async function usageReport(ctx: AdminContext): Promise<AdminAnswer> {
  const { q, groups } = await usageGroups(ctx);
  const totals = zero();
  const tokens = new Map<string, { token_id: string; name: string | null } & Figures>();
  const models = new Map<string, { model: string } & Figures>();
  const days = new Map<string, { day: string } & Figures>();
  for (let d = Math.floor(q.from / DAY_MS) * DAY_MS; d < q.to; d += DAY_MS) days.set(utcDay(d), { day: utcDay(d), ...zero() });
  for (const g of groups) {
    add(totals, g);
    let t = tokens.get(g.tokenId);
    if (!t) tokens.set(g.tokenId, (t = { token_id: g.tokenId, name: g.tokenName, ...zero() }));
    add(t, g);
    let m = models.get(g.model);
    if (!m) models.set(g.model, (m = { model: g.model, ...zero() }));
    add(m, g);
    // The days of the range are all there; a group is of one of them.
    const day = days.get(g.day);
    if (day) add(day, g);
  }
  return {
    json: {
      from: q.from,
      to: q.to,
      totals,
      by_token: [...tokens.values()].sort(bySpend((t) => t.token_id)),
      by_model: [...models.values()].sort(bySpend((m) => m.model)),
      by_day: [...days.values()],
    },
  };
}

/** A bound as a file name shows it: the date when it is a UTC midnight, else its Unix milliseconds. */
const label = (ms: number) => (ms % DAY_MS === 0 ? utcDay(ms) : String(ms));

/** The columns of the CSV export, one line per day × token × model. */
const CSV_HEADER = ['day', 'token_id', 'token_name', 'model', 'requests', 'charged', 'refunded', 'settled'];

/** `GET /admin/usage.csv?…`: the groups of `usageReport` as a CSV file, one line per day × token × model with spend. */
export async function usageCsv(ctx: AdminContext): Promise<AdminAnswer> {
  const { q, groups } = await usageGroups(ctx);
  const rows = groups.map((g) => {
    const f = zero();
    add(f, g);
    return [g.day, g.tokenId, g.tokenName, g.model, f.requests, f.charged, f.refunded, f.settled];
  });
  return {
    text: toCsv(CSV_HEADER, rows),
    contentType: 'text/csv; charset=utf-8',
    headers: { 'content-disposition': `attachment; filename="usage-${label(q.from)}-${label(q.to)}.csv"` },
  };
}
