/**
 * The OpenAPI document's answer schemas against real answers: every success answer of the golden
 * cases (recorded from a real gateway) and of a real gateway in front of the simulators (each
 * route's example, then queries, the list, a deletion, the models, a link) passes the schema its
 * operation states in the document, resolved through the document as a client's validator would.
 * And the schemas say something: an answer that breaks the video object is refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { CompiledRoute, Snapshot } from '../../src/config/snapshot.js';
import { openApiDocument } from '../../src/openapi/openapi-document.js';
import type { OpenApiDocument } from '../../src/openapi/openapi-types.js';
import { channelEnv } from '../helpers/channel-env.js';
import { answersOf, goldenAnswers } from '../helpers/golden-answers.js';
import { answerValidator, documentSchemas, type DocumentSchemas } from '../helpers/openapi-schemas.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

/** Checks answers of routes against the document of `snapshot`; counts what it checked per route. */
function answerChecker(snapshot: Snapshot) {
  const doc: OpenApiDocument = openApiDocument(snapshot);
  const schemas: DocumentSchemas = documentSchemas(doc);
  const validators = new Map<string, ReturnType<typeof answerValidator>>();
  const seen = new Map<string, number>();
  return {
    doc,
    seen,
    check(route: CompiledRoute, body: unknown, where: string): void {
      const key = route.id;
      let validate = validators.get(key);
      if (!validate) validators.set(key, (validate = answerValidator(doc, schemas, route)));
      // An event stream is recorded as its frames' data: each is an answer, unless the client asked
      // for the stream (its events are the vendor protocol's).
      const answers = answersOf(route, body);
      if (answers === null) return;
      for (const answer of answers)
        assert.equal(validate(answer), true, `${where} (route ${route.id}): ${JSON.stringify(validate.errors)}\n${JSON.stringify(answer).slice(0, 600)}`);
      seen.set(key, (seen.get(key) ?? 0) + 1);
    },
  };
}

describe('the golden answers pass the document', () => {
  test("every 2xx JSON answer of test/golden passes its operation's answer schema", () => {
    const shipped = loadConfigOrThrow(PROJECT_ROOT, { env: channelEnv() });
    const checker = answerChecker(shipped);
    for (const { route, body, where } of goldenAnswers(shipped)) checker.check(route, body, where);
    const total = [...checker.seen.values()].reduce((a, b) => a + b, 0);
    assert.ok(total >= 500, `${total} answers checked`);
    // The golden cases reach every kind of answer but the list, the deletion and the models (below).
    assert.ok(checker.seen.size >= 25, `${checker.seen.size} routes: ${[...checker.seen.keys()].join(' ')}`);
  });
});

describe("a real gateway's answers pass the document", () => {
  let h: TaskHarness;
  let checker: ReturnType<typeof answerChecker>;
  before(async () => {
    h = await startTaskHarness({ finishMs: 200 });
    checker = answerChecker(h.snapshot);
  });
  after(() => h?.close());

  const route = (id: string) => {
    const r = h.snapshot.routes.find((x) => x.id === id);
    assert.ok(r, id);
    return r;
  };
  const send = async (method: string, path: string, body?: unknown, key = h.key) => {
    const res = await fetch(h.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `${method} ${path}: ${text.slice(0, 300)}`);
    // An event stream: its frames' data, as the golden cases record it.
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
      const frames = text.split('\r\n\r\n').filter((f) => f !== '');
      return frames.map((f) => JSON.parse(f.replace(/^data: /, ''))) as unknown as Record<string, unknown>;
    }
    return JSON.parse(text) as Record<string, unknown>;
  };

  test("each route's example, then its task's queries, the list, a deletion, the models and a link", async () => {
    const answers = new Map<string, Record<string, unknown>>();
    for (const r of h.snapshot.routes) {
      if (!r.example) continue;
      const answer = await send(r.method, r.example.path, r.example.body);
      checker.check(r, answer, `example of ${r.id}`);
      answers.set(r.id, answer);
    }
    assert.ok(answers.size >= 6, `${answers.size} examples`);

    // The video task of the unified route, followed to its end through each query route.
    const video = String(answers.get('video-generations')?.id);
    await h.waitFor(video, (t) => t.status === 'completed');
    for (const [id, path] of [
      ['videos-query', `/v1/videos/${video}`],
      ['video-generations-query', `/v1/video/generations/${video}`],
      ['video-query', `/v1/video/query?id=${video}`],
      ['videos-list', '/v1/videos?limit=2'],
      ['videos-list', '/v1/videos?order=asc&limit=1'],
      ['models-list', '/v1/models'],
      ['models-get', '/v1/models/epsilon-video-3'],
    ] as const) {
      checker.check(route(id), await send('GET', path), `GET ${path}`);
    }
    // An empty page: another key has no tasks, and its first and last ids are null.
    const empty = await send('GET', '/v1/videos', undefined, await h.createKey());
    assert.deepEqual(empty.data, []);
    checker.check(route('videos-list'), empty, 'an empty page');
    const done = await send('GET', `/v1/videos/${video}`);
    assert.equal(done.status, 'completed');
    assert.match(String(done.video_url), /^http:\/\/127\.0\.0\.1:\d+\/v1\/videos\/task_/);
    checker.check(route('videos-delete'), await send('DELETE', `/v1/videos/${video}`), 'DELETE');

    // The audio task of the music example, in both query forms.
    const music = String(answers.get('iota-submit-music')?.data);
    await h.waitFor(music, (t) => t.data?.status === 'SUCCESS', { path: (id) => `/iota/fetch/${id}` });
    checker.check(route('iota-fetch'), await send('GET', `/iota/fetch/${music}`), 'GET /iota/fetch/{id}');
    checker.check(route('iota-fetch-batch'), await send('POST', '/iota/fetch', { ids: [music, 'task_unknown'] }), 'POST /iota/fetch');

    // The image answer's link serves the image with no key.
    const images = answers.get('images-generations') as { data: { url: string }[] };
    const link = await fetch(images.data[0]!.url);
    assert.equal(link.status, 200);
    assert.ok((await link.arrayBuffer()).byteLength > 0);

    for (const id of ['videos-list', 'videos-delete', 'models-list', 'models-get', 'iota-fetch', 'iota-fetch-batch']) assert.ok(checker.seen.has(id), id);
  });

  test('the schemas refuse what the routes never answer: a video object with another status, a field left out, a stray field', async () => {
    const sub = await send('POST', '/v1/video/generations', { model: 'epsilon-video-3', prompt: 'a kite' });
    const validate = answerValidator(checker.doc, documentSchemas(checker.doc), route('video-generations'));
    assert.equal(validate(sub), true);
    assert.equal(validate({ ...sub, status: 'done' }), false, 'status is one of four words');
    const { video_url: _gone, ...without } = sub;
    assert.equal(validate(without), false, 'every field of the video object is there, null when unknown');
    assert.equal(validate({ ...sub, vendor_id: 'x' }), false, 'no field beyond them');
    assert.equal(validate({ ...sub, progress: 1.5 }), false, 'progress is a whole percent');
  });
});
