/**
 * `gateway tokens` refusing bad names, allow-lists and graces (docs/operating.md): exit 2 with the
 * usage, naming what is wrong, before any store is opened.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '../helpers/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-cli-token-input-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('tokens: a bad name, allow-list entry or grace is a usage error (exit 2) naming it, and nothing is made', () => {
  const env = { GATEWAY_DB: join(dir, 'input.db') };
  for (const [args, why] of [
    [['create', '--group', 'default', '--name', ' ops'], /--name: a token name may not start or end with white space/],
    [['create', '--group', 'default', '--name', '0b7e5c1a-1111-4222-8333-444455556666'], /shaped like a token id/],
    [['create', '--group', 'default', '--allow-ip', '10.0.0.0/8', '--allow-ip', '10.0.0.0/40'], /--allow-ip: "10\.0\.0\.0\/40" is not an IPv4 or IPv6/],
    [['rename', 'ops key', 'x'.repeat(101)], /1 to 100 characters/],
    [['set-ips', 'ops key'], /missing <CIDR…\|any>/],
    [['set-ips', 'ops key', '10.0.0.1', 'nonsense'], /"nonsense" is not/],
    [['rotate', 'ops key', '--grace', '31d'], /--grace takes a duration \(30s, 15m, 24h, 7d; at most 30d\) or 0, not '31d'/],
  ] as [string[], RegExp][]) {
    const r = runCli(['tokens', ...args], env);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, why);
  }
  const listed = runCli(['tokens', 'list', '--json'], env);
  assert.equal(listed.status, 0, listed.stderr);
  assert.deepEqual(JSON.parse(listed.stdout), [], 'nothing was made');
});
