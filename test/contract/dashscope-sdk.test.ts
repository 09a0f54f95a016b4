/**
 * Contract: the official DashScope Python SDK (dashscope/dashscope-sdk-python, pinned in
 * test/contract/specs/sources.json) as the reference for mu-dashscope (DESIGN.md, "The vendors are the
 * reference"). Its extract, test/contract/specs/dashscope-sdk.json, is hand-derived from
 * VideoSynthesis and the request and response code it uses, each rule citing its file and line.
 *
 * 1. Every upstream request the mu-dashscope golden cases expect is one the SDK would send: the
 *    submit is {model, input, parameters} with the SDK's types (size "W*H", integer duration…) and the
 *    headers X-DashScope-Async: enable and Authorization: Bearer; a task query is a GET of
 *    /api/v1/tasks/{id} without a body or the async header.
 * 2. The mu-dashscope simulator answers as the SDK reads: output.task_id and output.task_status
 *    (one of TaskStatus) on the submit and every query (an unknown task too), output.video_url once
 *    SUCCEEDED, usage with its types, and error bodies {request_id, code, message}.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SIMULATORS } from '../../src/sim/registry.js';
import type { Simulator } from '../../src/sim/http.js';
import { until } from '../helpers/until.js';
import { goldenUpstreams, loadExtract } from './helpers-sdk-extract.js';

const { check } = loadExtract('dashscope-sdk.json');
const SUBMIT = '/api/v1/services/aigc/video-generation/video-synthesis';

describe("mu-dashscope's golden upstream requests against the DashScope SDK", () => {
  const upstreams = goldenUpstreams('mu-dashscope');

  test('each request is one the SDK sends: its route, headers, body fields and types', () => {
    const problems: string[] = [];
    let submits = 0;
    let queries = 0;
    for (const u of upstreams) {
      const where = `${u.file}: ${u.method} ${u.path}`;
      if (!/^Bearer \S+$/.test(u.headers.authorization ?? '')) problems.push(`${where}: authorization ${u.headers.authorization}`);
      if (u.method === 'POST' && u.path === SUBMIT) {
        submits++;
        if (u.headers['x-dashscope-async'] !== 'enable') problems.push(`${where}: no X-DashScope-Async: enable`);
        problems.push(...check('submitRequest', u.body).map((e) => `${where}: ${e}`));
      } else if (u.method === 'GET' && /^\/api\/v1\/tasks\/[^/]+$/.test(u.path)) {
        queries++;
        if (u.body !== null) problems.push(`${where}: a GET with a body`);
        if (u.headers['x-dashscope-async'] !== undefined) problems.push(`${where}: the async header on a query`);
      } else problems.push(`${where}: not a route of the SDK`);
    }
    assert.deepEqual(problems, []);
    assert.ok(submits >= 10 && queries >= 5, `${submits} submits, ${queries} queries`);
  });
});

describe('the mu-dashscope simulator answers as the DashScope SDK reads', () => {
  let sim: Simulator;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${sim.secrets.key}`, ...(body ? { 'content-type': 'application/json; charset=utf-8' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as { output?: Record<string, unknown> } & Record<string, unknown> };
  };
  const fits = (def: string, value: unknown) => assert.deepEqual(check(def, value), [], `${def}: ${JSON.stringify(value).slice(0, 600)}`);
  const submit = async (body: Record<string, unknown>) => {
    fits('submitRequest', body);
    const r = await call('POST', SUBMIT, body, { 'x-dashscope-async': 'enable' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    fits('taskAnswer', r.body);
    return r.body.output?.task_id as string;
  };
  const untilStatus = (id: string, word: string) =>
    until(`task ${word}`, async () => {
      const r = await call('GET', `/api/v1/tasks/${id}`);
      return r.body.output?.task_status === word ? r : undefined;
    });

  before(async () => {
    sim = await SIMULATORS['mu-dashscope']!({ finishMs: 300 });
  });
  after(() => sim.close());

  test('text-to-video: PENDING on submit, each query an SDK answer, SUCCEEDED with output.video_url and usage', async () => {
    const id = await submit({ model: 'mu2.6-t2v', input: { prompt: 'a paper boat' }, parameters: { size: '1280*720', duration: 5, seed: 7 } });
    const first = await call('GET', `/api/v1/tasks/${id}`);
    fits('taskAnswer', first.body);
    const done = await untilStatus(id, 'SUCCEEDED');
    fits('taskAnswer', done.body);
    assert.deepEqual(done.body.usage, { video_duration: 5, video_ratio: '1280*720', video_count: 1 });
  });

  test('image-to-video with a resolution; a failed task; a task the vendor does not know (UNKNOWN)', async () => {
    const ok = await submit({ model: 'mu2.6-i2v', input: { prompt: 'a cat', img_url: 'https://img.example/cat.png' }, parameters: { resolution: '1080P' } });
    fits('taskAnswer', (await untilStatus(ok, 'SUCCEEDED')).body);
    const bad = await submit({ model: 'mu2.6-t2v', input: { prompt: 'a storm [sim:fail]' }, parameters: {} });
    fits('taskAnswer', (await untilStatus(bad, 'FAILED')).body);
    const unknown = await call('GET', '/api/v1/tasks/no-such-task');
    assert.equal(unknown.status, 200);
    fits('taskAnswer', unknown.body);
    assert.equal(unknown.body.output?.task_status, 'UNKNOWN');
  });

  test('errors are {request_id, code, message}: a bad parameter, no async header, a wrong key', async () => {
    const cases = [
      await call('POST', SUBMIT, { model: 'mu2.6-t2v', input: { prompt: 'x' }, parameters: { size: '1*1' } }, { 'x-dashscope-async': 'enable' }),
      await call('POST', SUBMIT, { model: 'mu2.6-t2v', input: { prompt: 'x' } }),
      await call('GET', '/api/v1/tasks/x', undefined, { authorization: 'Bearer not-the-key' }),
    ];
    assert.deepEqual(
      cases.map((c) => c.status),
      [400, 403, 401],
    );
    for (const c of cases) fits('errorBody', c.body);
  });
});
