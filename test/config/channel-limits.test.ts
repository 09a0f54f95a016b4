/**
 * A channel's limits as the loader compiles them (issue 30): the pool's old `max_connections`
 * alone is read as the `max_concurrency` it stood for, with a warning; the line in front of a
 * limit and the keep-alive get their defaults.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { formatIssue } from '../../src/config/issues.js';
import { loadConfig } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';

/** The project's config plus one alpha channel with `extra` lines, loaded. */
function load(extra: string) {
  const dir = mkdtempSync(join(tmpdir(), 'gw-limits-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'channels.yaml'),
    `version: 1
channels:
  - name: limited
    profile: alpha-native
    base_url: http://127.0.0.1:9
    secrets: { key: k }
    groups: [default]
    models: [alpha-3-pro-image-preview]
${extra.replace(/^/gm, '    ')}
`,
  );
  const { snapshot, issues } = loadConfig(PROJECT_ROOT, { extraDirs: [dir], env: {} });
  assert.ok(snapshot, issues.map(formatIssue).join('\n'));
  const mine = issues.filter((i) => i.file.includes(dir) || i.message.includes('max_connections'));
  return { channel: snapshot.channelsByName.get('limited')!, issues: mine };
}

test('defaults: no bound on calls, no line, a 4 s keep-alive', () => {
  const { channel, issues } = load('priority: 1');
  assert.equal(channel.maxConcurrency, null);
  assert.deepEqual(channel.queue, { maxWaiting: 0, maxWaitMs: 30_000 });
  assert.equal(channel.keepAliveMs, 4000);
  assert.deepEqual(issues, []);
});

test('a max_concurrency gets a line as long as itself, for 30 s; both can be set', () => {
  assert.deepEqual(load('max_concurrency: 8').channel.queue, { maxWaiting: 8, maxWaitMs: 30_000 });
  const { channel } = load('max_concurrency: 8\nqueue: { max_waiting: 100, max_wait_ms: 500 }\nkeep_alive_ms: 1500');
  assert.deepEqual(channel.queue, { maxWaiting: 100, maxWaitMs: 500 });
  assert.equal(channel.keepAliveMs, 1500);
});

test('max_connections alone is read as max_concurrency, with a warning; at or over max_concurrency it is ignored, with a warning', () => {
  const alone = load('max_connections: 64');
  assert.equal(alone.channel.maxConcurrency, 64);
  assert.deepEqual(
    alone.issues.map((i) => [i.severity, i.message]),
    [['warning', 'max_connections is replaced by max_concurrency (read as max_concurrency: 64); the connection pool follows max_concurrency']],
  );
  const both = load('max_connections: 64\nmax_concurrency: 10');
  assert.equal(both.channel.maxConcurrency, 10);
  assert.deepEqual(
    both.issues.map((i) => i.severity),
    ['warning'],
  );
});
