/**
 * A group's shared rate limits over real HTTP (channels.yaml `groups.<name>.limits`,
 * docs/tokens-and-quota.md, "Rate limits"): two keys of one group share its rpm (exact count) and
 * its max_parallel; the headers show the tighter of the key's and the group's; a key's own refusal
 * costs the group nothing; a reload that changes the group's limits holds from the next request.
 * One gateway over a copy of the project's config, no Redis.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

const IMAGE = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const GROUP_LINE = '    description: Every token created without --group.\n';

/** The three headers of an answer, as a client reads them. */
function limitHeaders(res: Response): [string | null, string | null, string | null] {
  return [res.headers.get('x-ratelimit-limit-requests'), res.headers.get('x-ratelimit-remaining-requests'), res.headers.get('x-ratelimit-reset-requests')];
}

describe('rate limits shared by a group', () => {
  let h: Harness;
  let dir: string;
  /** Writes the group `default`'s limits into the copied channels.yaml. */
  const setGroupLimits = (limits: string) => {
    const file = join(dir, 'channels.yaml');
    const text = readFileSync(join(PROJECT_ROOT, 'channels.yaml'), 'utf8');
    assert.ok(text.includes(GROUP_LINE), 'the project config names the default group as this test expects');
    writeFileSync(file, text.replace(GROUP_LINE, `${GROUP_LINE}    limits: ${limits}\n`));
  };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-group-limits-'));
    for (const f of ['routes.yaml', 'channels.yaml', 'routes.d', 'channels.d', 'schemas']) cpSync(join(PROJECT_ROOT, f), join(dir, f), { recursive: true });
    setGroupLimits('{ rpm: 4 }');
    h = await startHarness({ configDir: dir });
  });
  after(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const models = async (key: string) => {
    const r = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    await r.arrayBuffer();
    return r;
  };

  test('rpm: keys of one group share its window, exactly; the headers show the tighter limit; a key refused on its own costs the group nothing', async () => {
    const tight = await h.createKey({ rpmLimit: 1 });
    const loose = await h.createKey({ rpmLimit: 100 });
    const plain = await h.createKey();
    const first = await models(tight);
    assert.equal(first.status, 200);
    assert.deepEqual(limitHeaders(first).slice(0, 2), ['1', '0'], "the key's: 0 left of its 1, the group has 3");
    for (let i = 0; i < 2; i++) {
      const own = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${tight}` } });
      assert.equal(own.status, 429);
      assert.match(((await own.json()) as { message: string }).message, /this API key is limited to 1 requests per minute/);
    }
    const seen: [number, string | null, string | null][] = [];
    for (const key of [loose, plain, loose]) {
      const r = await models(key);
      seen.push([r.status, ...(limitHeaders(r).slice(0, 2) as [string | null, string | null])]);
    }
    assert.deepEqual(
      seen,
      [
        [200, '4', '2'],
        [200, '4', '1'],
        [200, '4', '0'],
      ],
      "the group's (tighter than loose's 100), and the key's two refusals took nothing from it: 4 in all",
    );
    for (const key of [plain, loose]) {
      const refused = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(refused.status, 429);
      const json = (await refused.json()) as { code: string; message: string; data: null };
      assert.deepEqual([json.code, json.data], ['too_many_requests', null]);
      assert.match(json.message, /group default is limited to 4 requests per minute/);
      const wait = Number(refused.headers.get('retry-after'));
      assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `Retry-After: ${wait}`);
      assert.deepEqual(limitHeaders(refused).slice(0, 2), ['4', '0']);
    }
    // Counted by whose limit refused: the key's own twice, the group's twice; by the key's group, never by token.
    const metrics = await h.gateway.metrics.text();
    assert.match(metrics, /gateway_rate_limited_total\{limit="rpm",scope="key",group="default"\} 2\n/);
    assert.match(metrics, /gateway_rate_limited_total\{limit="rpm",scope="group",group="default"\} 2\n/);
    assert.ok(!/gateway_rate_limited_total\{[^}]*token/.test(metrics), 'no label names a token');
  });

  test('a reload to max_parallel: 1 holds from the next request; a request in flight of one key refuses the other key of the group', async () => {
    setGroupLimits('{ max_parallel: 1 }');
    h.reload();
    const [a, b] = [await h.createKey(), await h.createKey()];
    const free = await models(b);
    assert.equal(free.status, 200, 'the group rpm of before the reload is gone');
    assert.deepEqual(limitHeaders(free), ['1', '0', '0s']);
    const abort = new AbortController();
    // The simulator answers only after 8 s: the request is in flight until the client leaves.
    const hanging = fetch(h.url + IMAGE, {
      method: 'POST',
      headers: { authorization: `Bearer ${a}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: '[sim:fault=slow-headers:8000]' }] }],
        generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '1K' } },
      }),
      signal: abort.signal,
    }).catch((e: unknown) => e);
    const refused = await until('a to hold the group slot', async () => {
      const r = await models(b);
      return r.status === 429 ? r : null;
    });
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.deepEqual(limitHeaders(refused), ['1', '0', '0s']);
    abort.abort();
    assert.ok((await hanging) instanceof Error);
    const back = await until('the group slot to come back once the client left', async () => ((await models(b)).status === 200 ? true : null), 2_500);
    assert.ok(back);
    assert.match(await h.gateway.metrics.text(), /gateway_rate_limited_total\{limit="max_parallel",scope="group",group="default"\} [1-9]/);
  });
});
