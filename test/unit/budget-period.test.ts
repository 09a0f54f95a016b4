import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetAt, calendarStarts, parseBudgetPeriod, periodAdjective, periodEnd, periodStart, type BudgetPeriod } from '../../src/store/budget-period.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

test('budget period: the forms operators write are taken, and nothing else', () => {
  for (const p of ['day', 'week', 'month', '1d', '7d', '30d', '366d']) assert.equal(parseBudgetPeriod(p), p, p);
  for (const p of ['', 'Day', 'days', '0d', '07d', '367d', '1000d', '1.5d', '-1d', '7', 'd', '7D', ' 7d', 'year']) assert.equal(parseBudgetPeriod(p), null, p);
});

test('budget period: a day starts at 00:00 UTC and ends at the next', () => {
  const s = periodStart('day', 0, at('2026-11-28T23:59:59.999Z'));
  assert.equal(iso(s), '2026-11-28T00:00:00.000Z');
  assert.equal(iso(periodEnd('day', s)), '2026-11-29T00:00:00.000Z');
  assert.equal(iso(periodStart('day', 0, at('2026-11-29T00:00:00.000Z'))), '2026-11-29T00:00:00.000Z', 'the boundary belongs to the new day');
});

test('budget period: a week starts on Monday 00:00 UTC, whatever day of the week it is, across a year end', () => {
  // 2026-11-30 is a Monday; 2026-11-29 a Sunday.
  assert.equal(iso(periodStart('week', 0, at('2026-11-29T23:59:59.999Z'))), '2026-11-23T00:00:00.000Z', 'Sunday is the last day of its week');
  assert.equal(iso(periodStart('week', 0, at('2026-11-30T00:00:00.000Z'))), '2026-11-30T00:00:00.000Z', 'Monday 00:00 starts a week');
  assert.equal(iso(periodStart('week', 0, at('2026-12-03T12:00:00.000Z'))), '2026-11-30T00:00:00.000Z');
  // 2027-01-01 is a Friday: its week began on Monday 2026-12-28.
  const s = periodStart('week', 0, at('2027-01-01T08:00:00.000Z'));
  assert.equal(iso(s), '2026-12-28T00:00:00.000Z');
  assert.equal(iso(periodEnd('week', s)), '2027-01-04T00:00:00.000Z');
  // The epoch itself was a Thursday: its week began on Monday 1969-12-29.
  assert.equal(iso(calendarStarts(0).week), '1969-12-29T00:00:00.000Z');
});

test('budget period: a month starts on its 1st and ends at the next 1st, whatever its length; February of a leap year has 29 days', () => {
  const cases: [string, string, string][] = [
    ['2026-01-31T23:59:59.999Z', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    ['2026-02-28T12:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ['2028-02-29T12:00:00.000Z', '2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z'],
    ['2026-04-30T23:59:59.999Z', '2026-04-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
  ];
  for (const [now, start, end] of cases) {
    const s = periodStart('month', 0, at(now));
    assert.equal(iso(s), start, now);
    assert.equal(iso(periodEnd('month', s)), end, now);
  }
  assert.equal(periodEnd('month', at('2028-02-01T00:00:00.000Z')) - at('2028-02-01T00:00:00.000Z'), 29 * 86_400_000);
});

test('budget period: N days count from the anchor and renew every N days, not on calendar boundaries', () => {
  const anchor = at('2026-11-28T15:30:00.000Z');
  assert.equal(periodStart('7d', anchor, anchor), anchor);
  assert.equal(periodStart('7d', anchor, at('2026-12-05T15:29:59.999Z')), anchor, 'the first period runs 7 days');
  assert.equal(iso(periodStart('7d', anchor, at('2026-12-05T15:30:00.000Z'))), '2026-12-05T15:30:00.000Z', 'then the second starts');
  assert.equal(iso(periodStart('30d', anchor, at('2027-03-01T00:00:00.000Z'))), '2027-02-26T15:30:00.000Z', 'the fourth 30-day period');
  assert.equal(iso(periodEnd('30d', at('2027-02-26T15:30:00.000Z'))), '2027-03-28T15:30:00.000Z');
  assert.equal(periodStart('1d', anchor, anchor - 5_000), anchor, 'a clock a little behind the anchor is in the first period');
  // A leap day is one of the N days like any other.
  assert.equal(iso(periodEnd('366d', at('2028-01-01T00:00:00.000Z'))), '2029-01-01T00:00:00.000Z');
});

test('budget period: a budget at a time shows its period, what it used (nothing once the period is over), what is left and when it renews', () => {
  const start = at('2026-11-28T00:00:00.000Z');
  const b = { budget: 1000, period: 'day' as BudgetPeriod, anchor: start + 3_600_000, start, used: 988 };
  assert.deepEqual(budgetAt(b, at('2026-11-28T20:00:00.000Z')), {
    budget: 1000,
    period: 'day',
    start,
    used: 988,
    remaining: 12,
    resetsAt: at('2026-11-29T00:00:00.000Z'),
  });
  assert.deepEqual(budgetAt(b, at('2026-11-29T00:00:00.000Z')), {
    budget: 1000,
    period: 'day',
    start: at('2026-11-29T00:00:00.000Z'),
    used: 0,
    remaining: 1000,
    resetsAt: at('2026-11-30T00:00:00.000Z'),
  });
  assert.equal(budgetAt({ ...b, used: 1200 }, at('2026-11-28T20:00:00.000Z'))?.remaining, 0, 'never below 0');
  assert.equal(budgetAt({ budget: null, period: null, anchor: null, start: null, used: 0 }, 0), null);
});

test('budget period: in words', () => {
  assert.deepEqual((['day', 'week', 'month', '7d'] as BudgetPeriod[]).map(periodAdjective), ['daily', 'weekly', 'monthly', '7-day']);
});
