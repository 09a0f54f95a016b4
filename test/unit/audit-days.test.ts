/** GATEWAY_AUDIT_DAYS (docs/operating.md, "Settings"): read with its default, and a bad value refused at start before anything opens. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { settingsFromEnv, startApp } from '../../src/app.js';
import { silentLogger } from '../../src/log.js';

test('GATEWAY_AUDIT_DAYS: 365 when unset, 0 (forever) and a number as given', () => {
  assert.equal(settingsFromEnv({}).auditDays, 365);
  assert.equal(settingsFromEnv({ GATEWAY_AUDIT_DAYS: '0' }).auditDays, 0);
  assert.equal(settingsFromEnv({ GATEWAY_AUDIT_DAYS: '90' }).auditDays, 90);
});

test('GATEWAY_AUDIT_DAYS: a value not whole days from 0 to 36500 stops the start, naming the variable', async () => {
  for (const bad of ['-1', '1.5', 'year', '36501']) {
    const settings = settingsFromEnv({ GATEWAY_AUDIT_DAYS: bad, GATEWAY_DB: ':memory:', PORT: '0' });
    await assert.rejects(
      startApp(settings, silentLogger(), { simulate: false }),
      /GATEWAY_AUDIT_DAYS must be whole days from 0 \(keep forever\) to 36500/,
      bad,
    );
  }
});
