/**
 * The line in front of a full `max_concurrency` (issue 30, docs/routing.md "Saturation"): a
 * request that finds its channel or group full waits, first come first served, and is served when
 * a slot frees; past the line's length or its wait it gets 429 in shape B with Retry-After; every
 * wait is seen in /metrics and /admin/channels; a client that leaves gives its place up. A real
 * gateway over simulators; slow vendor answers (`[sim:fault=slow-headers:MS]`) hold the slots.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ADMIN, alpha, channel, IMAGE, IMAGE_PATH, imageBody, type Routed, routed } from '../helpers/routed-gateway.js';
import { until } from '../helpers/until.js';

/** A slow request: its vendor answers after `ms`. */
const slow = (g: Routed, ms: number) => g.post(IMAGE_PATH, imageBody(`hold [sim:fault=slow-headers:${ms}]`));

/** The value of one series of /metrics, 0 when absent. */
async function metric(g: Routed, series: string): Promise<number> {
  const text = await (await fetch(`${g.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** A slow request that has taken the only slot of channel `one`: resolves once it holds it, with its answer still to come (wrapped: a promise returned bare would be awaited too). */
async function holdingTheSlot(g: Routed, ms: number): Promise<{ answer: Promise<{ status: number }> }> {
  const answer = slow(g, ms);
  await until('the slot to be taken', async () => (await g.admin('/admin/channels')).json.channels[0].inflight === 1);
  return { answer };
}

const channelWaiting = async (g: Routed, name = 'one') => (await g.admin('/admin/channels')).json.channels.find((c: any) => c.name === name).waiting;

describe('the queue of a channel at its max_concurrency', () => {
  it('a request that finds the channel full waits in line, is seen waiting, and is served when the slot frees', async () => {
    const a = await alpha();
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE], 'max_concurrency: 1'));
    after(() => g.close());
    const { answer: first } = await holdingTheSlot(g, 1500);
    const second = g.post(IMAGE_PATH, imageBody());
    await until('the second request to wait in line', async () => (await channelWaiting(g)) === 1);
    assert.equal(await metric(g, 'gateway_upstream_queue_length{scope="channel",name="one"}'), 1);
    assert.equal(a.stats.requests, 1, 'the waiting request has not reached the vendor');
    const [r1, r2] = await Promise.all([first, second]);
    assert.equal(r1.status, 200);
    assert.equal(r2.status, 200, r2.text);
    assert.equal(a.stats.requests, 2);
    assert.equal(await channelWaiting(g), 0);
    assert.equal(await metric(g, 'gateway_upstream_queue_wait_seconds_count{scope="channel",outcome="served"}'), 1);
  });

  it('a full line → 429 in shape B with Retry-After at once, counted, and no vendor call', async () => {
    const a = await alpha();
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE], 'max_concurrency: 1\nqueue: { max_waiting: 1 }'));
    after(() => g.close());
    const { answer: first } = await holdingTheSlot(g, 1500);
    const second = g.post(IMAGE_PATH, imageBody());
    await until('the line to be full', async () => (await channelWaiting(g)) === 1);
    const third = await g.post(IMAGE_PATH, imageBody());
    assert.equal(third.status, 429);
    assert.deepEqual(Object.keys(third.json).sort(), ['code', 'data', 'message']);
    assert.equal(third.json.code, 'too_many_requests');
    assert.match(third.json.message, /the channel one is at its max_concurrency and its queue is full/);
    assert.equal(third.headers.get('retry-after'), '3');
    assert.equal(await metric(g, 'gateway_upstream_queue_refused_total{scope="channel",reason="full"}'), 1);
    assert.equal((await first).status, 200);
    assert.equal((await second).status, 200);
    assert.equal(a.stats.requests, 2, 'the refused request reached no vendor');
  });

  it('a wait that runs out (max_wait_ms) → 429 with Retry-After, counted as a timeout', async () => {
    const a = await alpha();
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE], 'max_concurrency: 1\nqueue: { max_wait_ms: 200 }'));
    after(() => g.close());
    const { answer: first } = await holdingTheSlot(g, 3000);
    const started = performance.now();
    const second = await g.post(IMAGE_PATH, imageBody());
    assert.ok(performance.now() - started >= 190, 'it waited for its slot first');
    assert.equal(second.status, 429);
    assert.equal(second.json.code, 'too_many_requests');
    assert.match(second.json.message, /no slot came free in \d+ ms/);
    assert.equal(second.headers.get('retry-after'), '3');
    assert.equal(await metric(g, 'gateway_upstream_queue_refused_total{scope="channel",reason="timeout"}'), 1);
    assert.equal(await metric(g, 'gateway_upstream_queue_wait_seconds_count{scope="channel",outcome="timeout"}'), 1);
    assert.equal(await channelWaiting(g), 0);
    assert.equal((await first).status, 200);
    assert.equal(a.stats.requests, 1);
  });

  it('first come first served: the line is served in order, and a newcomer does not overtake it', async () => {
    const a = await alpha();
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE], 'max_concurrency: 1\nqueue: { max_waiting: 5 }'));
    after(() => g.close());
    const order: string[] = [];
    const track = (name: string, p: Promise<{ status: number }>) =>
      p.then((r) => {
        order.push(name);
        return r.status;
      });
    const first = track('first', slow(g, 800));
    await until('the slot to be taken', async () => (await g.admin('/admin/channels')).json.channels[0].inflight === 1);
    // Each waiter holds the slot a little once served, so the order of the answers is the order of service.
    const b = track('b', slow(g, 200));
    await until('b to wait', async () => (await channelWaiting(g)) === 1);
    const c = track('c', slow(g, 200));
    await until('c to wait', async () => (await channelWaiting(g)) === 2);
    const d = track('d', slow(g, 200));
    await until('d to wait', async () => (await channelWaiting(g)) === 3);
    assert.deepEqual(await Promise.all([first, b, c, d]), [200, 200, 200, 200]);
    assert.deepEqual(order, ['first', 'b', 'c', 'd']);
  });

  it('a client that leaves while it waits gives its place up', async () => {
    const a = await alpha();
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE], 'max_concurrency: 1\nqueue: { max_waiting: 1 }'));
    after(() => g.close());
    const { answer: first } = await holdingTheSlot(g, 1500);
    const gone = new AbortController();
    const leaving = fetch(`${g.url}${IMAGE_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(imageBody()),
      signal: gone.signal,
    }).catch((e: Error) => e);
    await until('the leaving client to wait', async () => (await channelWaiting(g)) === 1);
    gone.abort();
    assert.equal(((await leaving) as Error).name, 'AbortError');
    await until('its place to be given up', async () => (await channelWaiting(g)) === 0);
    // The line has room again: the next request waits instead of a 429, and is served.
    const next = await g.post(IMAGE_PATH, imageBody());
    assert.equal(next.status, 200, next.text);
    assert.equal((await first).status, 200);
    assert.equal(a.stats.requests, 2, 'the client that left never reached the vendor');
  });

  it('a request waits for the best full channel only when no other channel can serve it', async () => {
    const [a, b] = [await alpha(), await alpha()];
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE], 'priority: 10\nmax_concurrency: 1') + channel('two', 'alpha-native', b, [IMAGE]));
    after(() => g.close());
    const first = slow(g, 1500);
    await until('the slot of one to be taken', async () => (await g.admin('/admin/channels')).json.channels[0].inflight === 1);
    // One is full; two has room: served there at once, nobody waits.
    const second = await g.post(IMAGE_PATH, imageBody());
    assert.equal(second.status, 200);
    assert.equal(b.stats.requests, 1);
    assert.equal(await metric(g, 'gateway_upstream_queue_wait_seconds_count{scope="channel",outcome="served"}'), 0);
    assert.equal((await first).status, 200);
  });
});

describe('the queue of a group at its max_concurrency', () => {
  it('a request waits for a slot of its group and is served when one frees; a full line answers 429', async () => {
    const a = await alpha();
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE]), { group: '{ max_concurrency: 1, queue: { max_waiting: 1 } }' });
    after(() => g.close());
    const group = async () => (await g.admin('/admin/channels')).json.groups.find((x: any) => x.name === 'rt');
    const first = slow(g, 1500);
    await until('the group slot to be taken', async () => (await group()).inflight === 1);
    const second = g.post(IMAGE_PATH, imageBody());
    await until('the second request to wait for the group', async () => (await group()).waiting === 1);
    assert.equal(await metric(g, 'gateway_upstream_queue_length{scope="group",name="rt"}'), 1);
    const third = await g.post(IMAGE_PATH, imageBody());
    assert.equal(third.status, 429);
    assert.match(third.json.message, /the group rt is at its max_concurrency and its queue is full/);
    assert.equal(third.headers.get('retry-after'), '3');
    assert.equal(await metric(g, 'gateway_upstream_queue_refused_total{scope="group",reason="full"}'), 1);
    assert.deepEqual(
      (await Promise.all([first, second])).map((r) => r.status),
      [200, 200],
    );
    assert.equal(await metric(g, 'gateway_upstream_queue_wait_seconds_count{scope="group",outcome="served"}'), 1);
    assert.equal(a.stats.requests, 2);
  });
});
