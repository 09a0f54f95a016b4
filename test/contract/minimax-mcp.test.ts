/**
 * Contract: the vendor's own API client code for theta-native, its MCP server (MiniMax-AI/MiniMax-MCP,
 * pinned in test/contract/specs/sources.json), as the reference (DESIGN.md, "The vendors are the
 * reference"). It is code the vendor wrote that calls its API, not a typed SDK: its extract,
 * test/contract/specs/minimax-mcp.json, holds what that code shows, each rule citing its file and line.
 *
 * 1. Every upstream request the theta-native golden cases expect is one the code would send where it
 *    shows one: the submit body's model, prompt, first_frame_image, duration and resolution by name,
 *    type and value; the query and the retrieve as GETs with task_id / file_id and no body; every call
 *    with `Authorization: Bearer`. The fields the code does not send are counted apart: still our reading.
 * 2. The theta-native simulator answers as the code reads: the submit's task_id, the query's status
 *    and the Success's file_id, the retrieve's file.download_url (downloaded without the key, as the
 *    code does), each with base_resp.status_code 0; its refusals are API errors (a non-zero code, the
 *    auth one with HTTP 200).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Simulator } from '../../src/sim/http.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import { until } from '../helpers/until.js';
import { goldenUpstreams, loadExtract } from './helpers-sdk-extract.js';

const { spec, check } = loadExtract('minimax-mcp.json');
const SUBMIT = '/v1/video_generation';
const QUERY = '/v1/query/video_generation';
const RETRIEVE = '/v1/files/retrieve';

/** Submit fields the profile sends that the vendor's code does not show: on our reading (the protocol note). */
const NOT_SHOWN = ['aigc_watermark', 'last_frame_image', 'prompt_optimizer', 'reference_audios', 'reference_videos', 'remix_task_id', 'subject_reference'];
/** Golden cases whose submit has no prompt (a first frame alone): the code always sends one, so this too is our reading. */
const NO_PROMPT = ['theta-first-frame-bare-base64.yaml'];

describe("theta-native's golden upstream requests against the vendor's MCP code", () => {
  const upstreams = goldenUpstreams('theta-native');

  test('the golden cases cover each route the profile uses', () => {
    const count = (m: string, p: string) => upstreams.filter((u) => u.method === m && u.path === p).length;
    assert.ok(count('POST', SUBMIT) >= 40, String(count('POST', SUBMIT)));
    assert.ok(count('GET', QUERY) >= 10, String(count('GET', QUERY)));
    assert.ok(count('GET', RETRIEVE) >= 3, String(count('GET', RETRIEVE)));
  });

  test('each request is one the code sends where it shows one: route, query, body fields and types, a Bearer key', () => {
    const problems: string[] = [];
    const unshown = new Set<string>();
    const noPrompt: string[] = [];
    const shown = Object.keys((spec.$defs as Record<string, { properties: object } | undefined>).submitRequest?.properties ?? {});
    for (const u of upstreams) {
      const where = `${u.file}: ${u.method} ${u.path}`;
      if (!/^Bearer \S+$/.test(u.headers.authorization ?? '')) problems.push(`${where}: authorization ${u.headers.authorization}`);
      const only = (name: string) => {
        if (u.body !== null) problems.push(`${where}: a GET with a body`);
        if (Object.keys(u.query).join() !== name || !u.query[name]) problems.push(`${where}: query ${JSON.stringify(u.query)}, not ${name} alone`);
      };
      if (u.method === 'POST' && u.path === SUBMIT) {
        problems.push(...check('submitRequest', u.body).map((e) => `${where}: ${e}`));
        for (const k of Object.keys(u.body as object)) if (!shown.includes(k)) unshown.add(k);
        if (!Object.hasOwn(u.body as object, 'prompt')) noPrompt.push(u.file);
      } else if (u.method === 'GET' && u.path === QUERY) only('task_id');
      else if (u.method === 'GET' && u.path === RETRIEVE) only('file_id');
      else problems.push(`${where}: not a route of the code`);
    }
    assert.deepEqual(problems, []);
    // What the profile sends beyond the code: a new field here must be named (and its source said) on purpose.
    assert.deepEqual([...unshown].sort(), NOT_SHOWN);
    assert.deepEqual(noPrompt, NO_PROMPT);
  });

  test('the extract can fail: a null, a wrong type, a bare base64 frame, an empty prompt, no model', () => {
    const ok = { model: 'theta-H3', prompt: 'a kite', duration: 5, resolution: '2K', first_frame_image: 'https://img.example/a.png', aigc_watermark: true };
    assert.deepEqual(check('submitRequest', ok), []);
    for (const bad of [
      { ...ok, duration: '5' },
      { ...ok, duration: null },
      { ...ok, resolution: 1080 },
      { ...ok, first_frame_image: 'iVBORw0KGgo=' },
      { ...ok, prompt: '' },
      { prompt: 'a kite', duration: 5 },
    ])
      assert.notDeepEqual(check('submitRequest', bad), [], JSON.stringify(bad));
    assert.notDeepEqual(check('queryAnswer', { status: 'Success', file_id: '', base_resp: { status_code: 0 } }), []);
    assert.notDeepEqual(check('submitAnswer', { task_id: '', base_resp: { status_code: 0, status_msg: 'success' } }), []);
  });
});

describe('the theta-native simulator answers as the vendor MCP code reads', () => {
  let sim: Simulator;
  const call = async (method: string, path: string, body?: unknown, key: string | null = sim.secrets.key ?? null) => {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const fits = (def: string, value: unknown) => assert.deepEqual(check(def, value), [], `${def}: ${JSON.stringify(value).slice(0, 600)}`);
  const accepted = (value: unknown) => check('accepted', value).length === 0;
  /** Submits (the request checked against the code first) and returns the task id. */
  const submit = async (body: Record<string, unknown>) => {
    fits('submitRequest', body);
    const r = await call('POST', SUBMIT, body);
    assert.equal(r.status, 200);
    fits('submitAnswer', r.body);
    assert.ok(accepted(r.body), JSON.stringify(r.body));
    return r.body.task_id as string;
  };
  const query = (id: string) => call('GET', `${QUERY}?task_id=${encodeURIComponent(id)}`);

  before(async () => {
    sim = await SIMULATORS['theta-native']!({ finishMs: 300 });
  });
  after(() => sim.close());

  test('a task: its task_id, statuses until Success with its file_id, the retrieve with file.download_url, fetched without the key', async () => {
    for (const body of [
      { model: 'theta-H3', prompt: 'a kite', duration: 5, resolution: '768P', first_frame_image: 'data:image/png;base64,iVBORw0KGgo=' },
      { model: 'xi-2.3', prompt: 'a kite', duration: 6, resolution: '1080P' },
    ]) {
      const id = await submit(body);
      const seen = new Set<string>();
      const done = await until('the task to succeed', async () => {
        const r = await query(id);
        assert.equal(r.status, 200);
        fits('queryAnswer', r.body);
        assert.ok(accepted(r.body), JSON.stringify(r.body));
        seen.add(r.body.status as string);
        return r.body.status === 'Success' ? r : undefined;
      });
      assert.ok(
        [...seen].every((s) => ['Preparing', 'Queueing', 'Processing', 'Success'].includes(s)),
        [...seen].join(),
      );
      const file = await call('GET', `${RETRIEVE}?file_id=${encodeURIComponent(String(done.body.file_id))}`);
      assert.equal(file.status, 200);
      fits('retrieveAnswer', file.body);
      assert.ok(accepted(file.body));
      const video = await fetch((file.body.file as { download_url: string }).download_url);
      assert.equal(video.status, 200);
      assert.ok((await video.arrayBuffer()).byteLength > 0);
    }
  });

  test('a failure: Fail with base_resp 0 is the failed task the code reads; Fail with a vendor code is, to the code, an API error', async () => {
    const plain = await submit({ model: 'theta-H3', prompt: 'a storm [sim:fail=0]', resolution: '768P' });
    const coded = await submit({ model: 'theta-H3', prompt: 'a storm [sim:fail=1027]', resolution: '768P' });
    for (const [id, code] of [
      [plain, 0],
      [coded, 1027],
    ] as const) {
      const r = await until('the task to fail', async () => {
        const q = await query(id);
        return q.body.status === 'Fail' ? q : undefined;
      });
      fits('queryAnswer', r.body);
      assert.equal((r.body.base_resp as { status_code: number }).status_code, code);
      assert.equal(accepted(r.body), code === 0);
    }
  });

  test('refusals are API errors: a wrong key (1004, HTTP 200, as the code expects after raise_for_status), a bad parameter, an unknown task and file', async () => {
    const cases = [
      ['submitAnswer', await call('POST', SUBMIT, { model: 'theta-H3', prompt: 'x' }, 'not-the-key'), 1004],
      ['submitAnswer', await call('POST', SUBMIT, { model: 'theta-H3', prompt: 'x', duration: 99 }), 2013],
      ['queryAnswer', await query('no-such-task'), 2013],
      ['retrieveAnswer', await call('GET', `${RETRIEVE}?file_id=404`), 2013],
    ] as const;
    for (const [def, r, code] of cases) {
      assert.equal(r.status, 200, JSON.stringify(r.body));
      fits(def, r.body);
      assert.ok(!accepted(r.body));
      assert.equal((r.body.base_resp as { status_code: number }).status_code, code);
    }
  });
});
