/** The expiry instants operators write (src/tokens/expiry.ts): what the CLI and the admin routes take and refuse. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expiryView, hasExpired, parseExpiry, parseInstant } from '../../src/tokens/expiry.js';

test('an ISO 8601 time is taken with a zone, refused without one or on a date that does not exist', () => {
  assert.equal(parseInstant('2027-01-31T00:00:00Z'), Date.parse('2027-01-31T00:00:00Z'));
  assert.equal(parseInstant('2027-01-31T02:30+02:00'), Date.parse('2027-01-31T00:30:00Z'));
  assert.equal(parseInstant('2027-01-31T00:00:00.250Z'), Date.parse('2027-01-31T00:00:00.250Z'));
  for (const bad of ['2027-01-31T00:00:00', '2027-01-31', '2027-02-31T00:00:00Z', '2027-01-31T24:00:00Z', '2027-01-31T00:61:00Z', 'tomorrow', '', '30d']) {
    assert.equal(parseInstant(bad), null, bad);
  }
});

test('the CLI also takes a duration from now in days, hours or minutes', () => {
  const now = Date.parse('2027-01-01T00:00:00Z');
  assert.equal(parseExpiry('30d', now), now + 30 * 86_400_000);
  assert.equal(parseExpiry('12h', now), now + 12 * 3_600_000);
  assert.equal(parseExpiry('90m', now), now + 90 * 60_000);
  assert.equal(parseExpiry('2027-06-01T00:00:00Z', now), Date.parse('2027-06-01T00:00:00Z'));
  for (const bad of ['0d', '-1d', '1.5h', '12', '12s', '1w', 'never']) assert.equal(parseExpiry(bad, now), null, bad);
});

test('an expiry is shown in UTC, and a key is refused from its instant on', () => {
  assert.equal(expiryView(Date.parse('2027-01-31T02:30+02:00')), '2027-01-31T00:30:00.000Z');
  assert.equal(expiryView(null), null);
  assert.equal(hasExpired(1000, 999), false);
  assert.equal(hasExpired(1000, 1000), true);
  assert.equal(hasExpired(null, Number.MAX_SAFE_INTEGER), false);
});
