/**
 * A stable demo (issue 28): `gateway demo` started twice as a real process on the same store prints
 * the same API key and admin key, and the key printed first still works after the restart (its token
 * kept, not replaced); the secret they come from is a file only its owner may read, and
 * GATEWAY_DEMO_KEY and GATEWAY_ADMIN_KEY still name the keys instead.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { channelEnvNames } from '../../src/config/env.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { startCli } from '../helpers/process.js';

const scratch = mkdtempSync(join(tmpdir(), 'gw-demo-keys-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const db = join(scratch, 'data', 'demo.db');
const unset = Object.fromEntries(channelEnvNames(PROJECT_ROOT).map((n) => [n, '']));
const ENV = { ...unset, PORT: '0', GATEWAY_DB: db, GATEWAY_WATCH: '0', LOG_LEVEL: 'warn', GATEWAY_ADMIN_KEY: '', GATEWAY_DEMO_KEY: '' };

interface DemoRun {
  readonly base: string;
  readonly apiKey: string;
  readonly adminKey: string;
  readonly printed: string;
}

/** Starts `gateway demo`, reads what it printed, runs `use` against it, and stops it. */
async function withDemo(env: Record<string, string>, use: (run: DemoRun) => Promise<void>): Promise<DemoRun> {
  const demo = startCli(['demo'], { ...ENV, ...env });
  try {
    // The reload line is the last thing the demo prints.
    await demo.waitFor(/curl -s -X POST \S+\/admin\/reload[^\n]*\n/, 60_000);
    const printed = demo.output();
    const field = (re: RegExp) => {
      const m = re.exec(printed);
      assert.ok(m?.[1], `${re} in:\n${printed}`);
      return m[1];
    };
    const run = {
      base: field(/demo listening on (http:\/\/\S+)/),
      apiKey: field(/^API key: (\S+)$/m),
      adminKey: field(/^Admin key: (\S+)$/m),
      printed,
    };
    await use(run);
    return run;
  } finally {
    assert.equal(await demo.stop('SIGTERM'), 0, demo.output());
  }
}

/** The status of GET `path` with `key` as bearer. */
async function statusOf(base: string, path: string, key: string): Promise<number> {
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return res.status;
}

/** The demo tokens of the store, as the admin routes list them. */
async function demoTokens(run: DemoRun): Promise<{ id: string; name: string }[]> {
  const res = await fetch(`${run.base}/admin/tokens`, { headers: { authorization: `Bearer ${run.adminKey}` } });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { tokens: { id: string; name: string }[] };
  return body.tokens.filter((t) => t.name === 'demo');
}

test('a restarted demo prints the same keys, and the key printed before still works; GATEWAY_DEMO_KEY and GATEWAY_ADMIN_KEY override them', async () => {
  let tokenId: string | undefined;
  const first = await withDemo({}, async (run) => {
    assert.match(run.apiKey, /^gw-[A-Za-z0-9_-]{43}$/);
    assert.match(run.adminKey, /^gwadmin-[A-Za-z0-9_-]{32}$/);
    assert.equal(await statusOf(run.base, '/v1/models', run.apiKey), 200);
    assert.equal(await statusOf(run.base, '/admin/channels', run.adminKey), 200);
    assert.match(run.printed, /keys stay the same at every start on this store/);
    tokenId = (await demoTokens(run))[0]?.id;
  });
  // Only its owner may read the file the keys come from.
  const secret = statSync(`${db}.demo-secret`);
  assert.equal(secret.mode & 0o777, 0o600);

  await withDemo({}, async (run) => {
    assert.equal(run.apiKey, first.apiKey, 'the same API key');
    assert.equal(run.adminKey, first.adminKey, 'the same admin key');
    assert.equal(await statusOf(run.base, '/v1/models', first.apiKey), 200, 'the key printed before the restart works');
    assert.equal(await statusOf(run.base, '/admin/channels', first.adminKey), 200);
    // The token was kept, not replaced: the one demo token is the first run's.
    const tokens = await demoTokens(run);
    assert.deepEqual(
      tokens.map((t) => t.id),
      [tokenId],
      JSON.stringify(tokens),
    );
  });

  const own = { GATEWAY_DEMO_KEY: 'gw-my-own-demo-key-for-this-test', GATEWAY_ADMIN_KEY: 'my-own-admin-key-for-this-test' };
  await withDemo(own, async (run) => {
    assert.equal(run.apiKey, own.GATEWAY_DEMO_KEY);
    assert.equal(run.adminKey, own.GATEWAY_ADMIN_KEY);
    assert.equal(await statusOf(run.base, '/v1/models', own.GATEWAY_DEMO_KEY), 200);
    assert.equal(await statusOf(run.base, '/admin/channels', own.GATEWAY_ADMIN_KEY), 200);
    assert.equal(await statusOf(run.base, '/admin/channels', first.adminKey), 401, 'the admin key given is the only one');
  });
});
