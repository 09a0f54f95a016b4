/**
 * Contract: the official Volcengine Ark Python SDK (volcengine/volcengine-python-sdk, pinned in
 * test/contract/specs/sources.json) as the reference for delta-ark (DESIGN.md, "The vendors are the
 * reference"). Its extract, test/contract/specs/volcengine-ark-sdk.json, is hand-derived from the
 * SDK's request methods and types, each rule citing its file and line.
 *
 * 1. Every upstream request the delta-ark golden cases expect is one the SDK would send: the task
 *    create and image generation bodies hold only the SDK's fields, with its types (content items as
 *    its TypedDicts, a role on every media item), a task query is a GET without a body, and every
 *    call carries `Authorization: Bearer`. The asset routes are not in the SDK and are counted apart.
 * 2. The delta-ark simulator answers as the SDK reads: the task id, the task in each state
 *    (queued, running, succeeded with content.video_url, failed with its error), the images answer
 *    (url and b64_json), and its error bodies.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SIMULATORS } from '../../src/sim/registry.js';
import type { Simulator } from '../../src/sim/http.js';
import { until } from '../helpers/until.js';
import { goldenUpstreams, loadExtract } from './helpers-sdk-extract.js';

const { check } = loadExtract('volcengine-ark-sdk.json');
const TASKS = '/api/v3/contents/generations/tasks';
const IMAGES = '/api/v3/images/generations';

describe("delta-ark's golden upstream requests against the Ark SDK", () => {
  const upstreams = goldenUpstreams('delta-ark');

  test('the golden cases cover each route the profile uses', () => {
    const count = (m: string, p: RegExp) => upstreams.filter((u) => u.method === m && p.test(u.path)).length;
    assert.ok(count('POST', /^\/api\/v3\/contents\/generations\/tasks$/) >= 20);
    assert.ok(count('GET', /^\/api\/v3\/contents\/generations\/tasks\/[^/]+$/) >= 5);
    assert.ok(count('POST', /^\/api\/v3\/images\/generations$/) >= 10);
  });

  test('each request is one the SDK sends: its route, its body fields and types, a Bearer key', () => {
    const problems: string[] = [];
    let assets = 0;
    for (const u of upstreams) {
      const where = `${u.file}: ${u.method} ${u.path}`;
      if (!/^Bearer \S+$/.test(u.headers.authorization ?? '')) problems.push(`${where}: authorization ${u.headers.authorization}`);
      if (u.method === 'POST' && u.path === TASKS) problems.push(...check('createTaskRequest', u.body).map((e) => `${where}: ${e}`));
      else if (u.method === 'POST' && u.path === IMAGES) problems.push(...check('imagesRequest', u.body).map((e) => `${where}: ${e}`));
      else if (u.method === 'GET' && u.path.startsWith(`${TASKS}/`) && !u.path.slice(TASKS.length + 1).includes('/')) {
        if (u.body !== null) problems.push(`${where}: a GET with a body`);
      } else if (u.path.startsWith('/api/v3/assets')) assets++;
      else problems.push(`${where}: not a route of the SDK`);
    }
    assert.deepEqual(problems, []);
    // The asset routes (POST /api/v3/assets, GET /api/v3/assets/{id}) are not in the SDK: still our reading.
    assert.ok(assets > 0);
  });
});

describe('the delta-ark simulator answers as the Ark SDK reads', () => {
  let sim: Simulator;
  const call = async (method: string, path: string, body?: unknown, key = sim.secrets.key) => {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const fits = (def: string, value: unknown) => assert.deepEqual(check(def, value), [], `${def}: ${JSON.stringify(value).slice(0, 600)}`);
  /** Submits a task (the request itself checked against the SDK first) and returns its id. */
  const submit = async (body: Record<string, unknown>) => {
    fits('createTaskRequest', body);
    const r = await call('POST', TASKS, body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    fits('taskId', r.body);
    return r.body.id as string;
  };

  before(async () => {
    sim = await SIMULATORS['delta-ark']!({ finishMs: 300 });
  });
  after(() => sim.close());

  test('a task: its id, then the task queued or running, then succeeded with content.video_url and last_frame_url', async () => {
    const id = await submit({
      model: 'delta-vid-2-0-260128',
      content: [
        { type: 'text', text: 'a paper boat' },
        { type: 'image_url', image_url: { url: 'https://img.example/boat.png' }, role: 'first_frame' },
      ],
      resolution: '720p',
      ratio: '16:9',
      duration: 5,
      return_last_frame: true,
    });
    const first = await call('GET', `${TASKS}/${id}`);
    assert.equal(first.status, 200);
    fits('task', first.body);
    assert.ok(['queued', 'running'].includes(first.body.status as string), String(first.body.status));
    const done = await until('the task to succeed', async () => {
      const r = await call('GET', `${TASKS}/${id}`);
      return r.body.status === 'succeeded' ? r : undefined;
    });
    fits('task', done.body);
    const content = done.body.content as Record<string, unknown>;
    assert.equal(typeof content.last_frame_url, 'string');
  });

  test('a failed task has its error {code, message}; queued and running ones have no error field (the SDK types it as an object, not null)', async () => {
    const id = await submit({ model: 'delta-vid-1-5-pro', content: [{ type: 'text', text: 'a storm [sim:fail]' }], resolution: '480p', duration: 5 });
    const early = await call('GET', `${TASKS}/${id}`);
    fits('task', early.body);
    assert.ok(!Object.hasOwn(early.body, 'error'), JSON.stringify(early.body));
    const failed = await until('the task to fail', async () => {
      const r = await call('GET', `${TASKS}/${id}`);
      return r.body.status === 'failed' ? r : undefined;
    });
    fits('task', failed.body);
  });

  test('images: url and b64_json answers, one image and several', async () => {
    for (const [body, n] of [
      [{ model: 'delta-img-4-5-251128', prompt: 'a lighthouse', size: '2K', response_format: 'url' }, 1],
      [
        {
          model: 'delta-img-4-5-251128',
          prompt: 'a lighthouse',
          size: '1024x1024',
          response_format: 'b64_json',
          sequential_image_generation: 'auto',
          sequential_image_generation_options: { max_images: 2 },
        },
        2,
      ],
    ] as const) {
      fits('imagesRequest', body);
      const r = await call('POST', IMAGES, body);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      fits('imagesResponse', r.body);
      assert.equal((r.body.data as unknown[]).length, n);
    }
  });

  test('errors are {error: {code, message, param, type}}: a wrong key, a bad parameter, an unknown task', async () => {
    const cases = [
      await call('POST', TASKS, { model: 'delta-vid-2-0-260128', content: [{ type: 'text', text: 'x' }] }, 'not-the-key'),
      await call('POST', IMAGES, { model: 'delta-img-4-5-251128', prompt: 'x', size: 'huge' }),
      await call('GET', `${TASKS}/cgt-unknown`),
    ];
    assert.deepEqual(
      cases.map((c) => c.status),
      [401, 400, 404],
    );
    for (const c of cases) fits('errorBody', c.body);
  });
});
