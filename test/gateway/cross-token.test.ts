/**
 * What a token creates is its own (docs/tokens-and-quota.md, "Authentication, tokens and quota"): for every route of
 * the config that reads, references or downloads a client-created resource (task query, download
 * and remix routes, asset routes, asset:// references in submissions), found from the config
 * itself, token B's attempt on token A's task or asset is answered exactly as B's attempt on an id
 * that never existed (same status, code, param and message, the id aside), and no vendor is called.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CompiledRoute } from '../../src/config/snapshot.js';
import { Client, type Answer } from '../helpers/hostile.js';
import { modelsOf, taskOf } from '../helpers/route-parts.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

/** A request body or path slot that names a resource. */
type Slot = { readonly from: 'path' | 'query' | 'body'; readonly name: string; readonly pointer: readonly string[] };

/** Bodies that pass each route's schema, the id aside (route examples where the config has one). */
const BASES: Readonly<Record<string, Record<string, unknown>>> = {
  'gamma-result': { req_key: 'gamma_t2i_v45' },
  'video-remix': { prompt: 'now at night' },
  'videos-remix': { prompt: 'now at night' },
};

describe('one token’s tasks and assets, tried by another', () => {
  let h: TaskHarness;
  let client: Client;
  let keyB: string;
  /** A's resources by task kind, and A's asset. */
  const mine = new Map<string, string>();
  const vendorCalls = () => Object.values(h.sims).reduce((n, s) => n + s.stats.requests, 0);

  before(async () => {
    h = await startTaskHarness({ finishMs: 100 });
    client = new Client('127.0.0.1', Number(new URL(h.url).port));
    keyB = await h.createKey(null);
    // A's own: a video, an audio task and a gamma task, each finished; and an asset.
    const created = [
      ['video', await h.post('/v1/videos', { model: 'epsilon-video-3', prompt: 'a paper boat' })],
      ['audio', await h.post('/iota/submit/music', { mv: 'iota-v4.5', prompt: 'a slow piano piece', title: 'Rain', tags: 'piano' })],
      [
        'gamma',
        await h.post('/gamma?Action=CVSync2AsyncSubmitTask&Version=2022-08-31', { req_key: 'gamma_t2i_v45', prompt: 'a red kite', width: 2048, height: 2048 }),
      ],
    ] as const;
    for (const [kind, a] of created) {
      assert.equal(a.status, 200, `${kind}: ${a.text}`);
      const id = (a.json.id ?? a.json.data?.task_id ?? a.json.data) as string;
      assert.match(id, /^task_/, `${kind}: ${a.text}`);
      mine.set(kind, id);
      if (kind === 'video') assert.equal((await h.waitFor(id, (t) => t.status === 'completed')).status, 'completed');
    }
    const asset = await h.post('/v1/kappa/asset/create', { type: 'image', url: 'https://img.example/cat.png' });
    assert.equal(asset.status, 200, asset.text);
    mine.set('asset', asset.json.id as string);
    // From here every vendor call is one a request made: the background poller would add its own.
    h.gateway.poller.stop();
  });
  after(async () => {
    client?.close();
    await h?.close();
  });

  /** Sends `route` with `id` in its slot, as the holder of `key`. */
  function send(route: CompiledRoute, slot: Slot, id: string, key: string, batch = false): Promise<Answer> {
    const model = [...modelsOf(route).exact][0] ?? 'x';
    let path = route.path.replace(/\{([^{}]+)\}/g, (_, name: string) =>
      encodeURIComponent(slot.from === 'path' && name === slot.name ? id : name === 'kind' ? 'text2video' : model),
    );
    const q = new URLSearchParams(route.matchQuery);
    if (slot.from === 'query') q.set(slot.name, id);
    if (q.size > 0) path += `?${q.toString()}`;
    let body: Record<string, unknown> | null = route.body ? { ...((route.example?.body as Record<string, unknown>) ?? {}), ...(BASES[route.id] ?? {}) } : null;
    if (body && slot.from === 'body') body = { ...body, [slot.pointer[0]!]: batch ? [id] : id };
    return client.send({
      method: route.method,
      path,
      body: body && JSON.stringify(body),
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    });
  }

  /** B's answer on A's id must be B's answer on an unknown id, and ask no vendor anything. */
  async function sameAsUnknown(what: string, attempt: (id: string) => Promise<Answer>, theirs: string): Promise<void> {
    const unknown = theirs.slice(0, -6) + 'ZZZZZZ';
    const calls = vendorCalls();
    const a = await attempt(theirs);
    const u = await attempt(unknown);
    assert.equal(vendorCalls(), calls, `${what}: no vendor was asked`);
    // A refusal, or (a batch query) an answer that leaves the task out, as for an id nobody has.
    assert.ok(a.status < 500, `${what}: ${a.status} ${a.text.slice(0, 200)}`);
    assert.equal(a.status, u.status, `${what}: ${a.text} vs ${u.text}`);
    assert.equal(a.text.split(theirs).join('<id>'), u.text.split(unknown).join('<id>'), `${what}: the same answer, the id aside`);
  }

  test('every route that reads, downloads or remixes a task: B on A’s task is B on an unknown one', async () => {
    // A's own request on a delete route deletes A's task: those go last, after every route that reads it.
    const last = (r: CompiledRoute) => Number(r.kind === 'task-delete');
    const routes = h.snapshot.routes.filter((r) => taskOf(r)?.id || taskOf(r)?.source).sort((a, b) => last(a) - last(b));
    assert.ok(routes.length >= 12, routes.map((r) => r.id).join(', '));
    for (const route of routes) {
      const task = taskOf(route)!;
      const slot = (task.id ?? task.source)!;
      const kind = task.kinds[0]!;
      const theirs = mine.get(kind);
      assert.ok(theirs, `A has a ${kind} task for ${route.id}`);
      const batch = task.id?.from === 'body' && task.maxIds > 1;
      const own = await send(route, { ...slot, pointer: 'pointer' in slot ? slot.pointer : [] }, theirs, h.key, batch);
      assert.ok(own.status < 500, `${route.id}: A itself is answered: ${own.status}`);
      await sameAsUnknown(route.id, (id) => send(route, { ...slot, pointer: 'pointer' in slot ? slot.pointer : [] }, id, keyB, batch), theirs);
    }
  });

  test('every route that reads an asset: B on A’s asset is B on an unknown one', async () => {
    const routes = h.snapshot.routes.filter((r) => r.resource?.id);
    assert.ok(routes.length >= 2);
    const theirs = mine.get('asset')!;
    for (const route of routes) {
      const slot = route.resource!.id!;
      assert.equal((await send(route, slot, theirs, h.key)).status, 200, `${route.id}: A reads its own asset`);
      await sameAsUnknown(route.id, (id) => send(route, slot, id, keyB), theirs);
      await sameAsUnknown(`${route.id} (asset:// form)`, (id) => send(route, slot, `asset://${id}`, keyB), theirs);
    }
  });

  test('every route that takes asset:// references: B naming A’s asset is B naming an unknown one', async () => {
    const routes = h.snapshot.routes.filter((r) => r.references.some((x) => x.kind === 'asset'));
    assert.ok(routes.length >= 2);
    const theirs = mine.get('asset')!;
    for (const route of routes) {
      const body = (id: string) => ({
        model: 'delta-vid-2-0-260128',
        content: [
          { type: 'text', text: 'x' },
          { type: 'image_url', image_url: { url: `asset://${id}` }, role: 'reference_image' },
        ],
      });
      const attempt = (key: string) => (id: string) =>
        client.send({
          method: 'POST',
          path: route.path,
          body: JSON.stringify({ ...body(id), ...(route.id === 'video-create' ? { model: 'theta-H3', prompt: 'x' } : {}) }),
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        });
      await sameAsUnknown(route.id, attempt(keyB), theirs);
    }
    // A may use its own: the task is accepted on the channel that holds the asset.
    const own = await h.post('/v1/video/generations', body0(theirs));
    assert.equal(own.status, 200, own.text);
    assert.equal((await h.record(own.json.id))?.channel, 'delta-ark');
  });
});

function body0(asset: string) {
  return {
    model: 'delta-vid-2-0-260128',
    content: [
      { type: 'text', text: 'x' },
      { type: 'image_url', image_url: { url: `asset://${asset}` }, role: 'reference_image' },
    ],
  };
}
