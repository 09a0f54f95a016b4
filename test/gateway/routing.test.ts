/**
 * Channel routing under faults (issue #5): fallback after a 500, a reset, a timeout; a creation
 * that may have been received is never sent again; saturation answers 429 in shape B with
 * Retry-After; the circuit breaker opens, fails fast, and lets a probe close it again. Each case
 * runs a real gateway over the project's config plus an extra directory of test channels that
 * point at simulators, and a token of the test group `rt`, which sees only those channels.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ADMIN, alpha, channel, IMAGE, IMAGE_PATH, imageBody, routed, zeta } from '../helpers/routed-gateway.js';
import { until } from '../helpers/until.js';
import { closedPortUrl } from '../helpers/local-server.js';

describe('fallback on a synchronous route', () => {
  for (const fault of ['500', '503', 'reset', 'slow-headers:2000']) {
    it(`the primary answers ${fault} → the next channel serves the request`, async () => {
      const [a, b] = [await alpha(), await alpha()];
      const g = await routed(
        channel('primary', 'alpha-native', a, [IMAGE], 'priority: 10\ntimeouts: { headers_ms: 400 }') + channel('backup', 'alpha-native', b, [IMAGE]),
      );
      after(() => g.close());
      a.faults.push(fault);
      const res = await g.post(IMAGE_PATH, imageBody());
      assert.equal(res.status, 200, res.text);
      assert.ok(res.json.candidates?.length > 0);
      assert.equal(a.stats.requests, 1);
      assert.equal(b.stats.requests, 1);
    });
  }

  it('a connection refused on the primary falls back, and priority decides who is first', async () => {
    const b = await alpha();
    const dead = { url: await closedPortUrl(), secrets: { key: 'k' } };
    const g = await routed(channel('dead', 'alpha-native', dead, [IMAGE], 'priority: 5') + channel('backup', 'alpha-native', b, [IMAGE]));
    after(() => g.close());
    const res = await g.post(IMAGE_PATH, imageBody());
    assert.equal(res.status, 200, res.text);
    assert.equal(b.stats.requests, 1);
  });

  it('a request the vendor rejects as malformed (400) is not sent to another channel', async () => {
    const [a, b] = [await alpha(), await alpha()];
    const g = await routed(channel('primary', 'alpha-native', a, [IMAGE], 'priority: 10') + channel('backup', 'alpha-native', b, [IMAGE]));
    after(() => g.close());
    a.faults.push('400');
    const res = await g.post(IMAGE_PATH, imageBody());
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, 'invalid_request');
    assert.equal(b.stats.requests, 0);
  });

  it('attempts stop at routing.max_attempts; the last failure is the answer and the quota is refunded', async () => {
    const [a, b, c] = [await alpha(), await alpha(), await alpha()];
    const g = await routed(
      channel('one', 'alpha-native', a, [IMAGE], 'priority: 3') +
        channel('two', 'alpha-native', b, [IMAGE], 'priority: 2') +
        channel('three', 'alpha-native', c, [IMAGE], 'priority: 1'),
      { routing: '{ max_attempts: 2, backoff_ms: 0 }', quota: 5 },
    );
    after(() => g.close());
    a.faults.push('500');
    b.faults.push('502');
    const res = await g.post(IMAGE_PATH, imageBody());
    assert.equal(res.status, 502);
    assert.equal(res.json.error.code, 'bad_response');
    assert.equal([a.stats.requests, b.stats.requests, c.stats.requests].join(), '1,1,0');
    // The refund is written after the answer (src/quota/hold-endings.ts): written now.
    await g.gateway.holdEndings.flush();
    const token = (await g.store.listTokens()).find((t) => t.name === 'rt')!;
    assert.equal(token.used, 0, 'a failed request is refunded');
  });

  it('inside a priority tier the weights share the traffic', async () => {
    const [a, b] = [await alpha(), await alpha()];
    const g = await routed(channel('heavy', 'alpha-native', a, [IMAGE], 'weight: 9') + channel('light', 'alpha-native', b, [IMAGE], 'weight: 1'));
    after(() => g.close());
    for (let i = 0; i < 60; i++) assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 200);
    // 60 draws at 90 %: fewer than 42 on the heavy channel has a probability under 1e-4.
    assert.ok(a.stats.requests >= 42, `heavy channel served ${a.stats.requests} of 60`);
    assert.ok(b.stats.requests >= 1, 'the light channel served some');
  });
});

describe('task creation is never sent twice unless the vendor certainly did not take it', () => {
  const VIDEO = { model: 'epsilon-video-3', prompt: 'a paper boat', seconds: '4' };

  for (const fault of ['500', '429']) {
    it(`the primary answers ${fault} → the next channel accepts, and the task is followed there`, async () => {
      const [a, b] = [await zeta(), await zeta()];
      const g = await routed(
        channel('primary', 'zeta-openai', a, ['epsilon-video-3'], 'priority: 10') + channel('backup', 'zeta-openai', b, ['epsilon-video-3']),
      );
      after(() => g.close());
      a.faults.push(fault);
      const sub = await g.post('/v1/videos', VIDEO);
      assert.equal(sub.status, 200, sub.text);
      assert.equal(a.stats.submits, 1);
      assert.equal(b.stats.submits, 1);
      const record = await g.store.getTask(sub.json.id);
      assert.equal(record?.channel, 'backup');
      const done = await until('the task to complete', async () => {
        const q = await fetch(`${g.url}/v1/videos/${sub.json.id}`, { headers: { authorization: `Bearer ${g.key}` } }).then(
          (r) => r.json() as Promise<{ status: string }>,
        );
        return q.status === 'completed' || q.status === 'failed' ? q : null;
      });
      assert.equal(done.status, 'completed');
      assert.equal(a.stats.queries, 0, 'the refusing channel is never asked about the task');
    });
  }

  it('a connection refused falls back: the request certainly never left', async () => {
    const b = await zeta();
    const dead = { url: await closedPortUrl(), secrets: { key: 'k' } };
    const g = await routed(
      channel('dead', 'zeta-openai', dead, ['epsilon-video-3'], 'priority: 10') + channel('backup', 'zeta-openai', b, ['epsilon-video-3']),
    );
    after(() => g.close());
    const sub = await g.post('/v1/videos', VIDEO);
    assert.equal(sub.status, 200, sub.text);
    assert.equal(b.stats.submits, 1);
  });

  for (const [fault, code] of [
    ['slow-headers:1500', 'upstream_timeout'],
    ['reset', 'bad_response'],
    ['malformed-json', 'bad_response'],
  ] as const) {
    it(`the primary ${fault === 'reset' ? 'resets after the create was sent' : fault === 'malformed-json' ? 'answers an unreadable 2xx' : 'times out after the create was sent'} → no second create, ${code}, refunded`, async () => {
      const [a, b] = [await zeta(), await zeta()];
      const g = await routed(
        channel('primary', 'zeta-openai', a, ['epsilon-video-3'], 'priority: 10\ntimeouts: { headers_ms: 300 }') +
          channel('backup', 'zeta-openai', b, ['epsilon-video-3']),
        { quota: 3 },
      );
      after(() => g.close());
      a.faults.push(fault);
      const sub = await g.post('/v1/videos', VIDEO);
      assert.equal(sub.status, code === 'upstream_timeout' ? 504 : 502, sub.text);
      assert.equal(sub.json.error.code, code);
      assert.equal(a.stats.submits, 1);
      assert.equal(b.stats.submits, 0, 'the create was not sent to a second vendor');
      const token = (await g.store.listTokens()).find((t) => t.name === 'rt')!;
      assert.equal(token.used, 0, 'the client is not charged for a task it never got');
    });
  }
});

describe('saturation', () => {
  it('every channel at its max_concurrency, with no queue → 429 in shape B with Retry-After at once, and no vendor call', async () => {
    const [a, b] = [await alpha(), await alpha()];
    const noQueue = 'max_concurrency: 1\nqueue: { max_waiting: 0 }';
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE], noQueue) + channel('two', 'alpha-native', b, [IMAGE], noQueue));
    after(() => g.close());
    // Two slow calls hold both channels; the prompt marker makes each simulator answer late.
    const slow = [g.post(IMAGE_PATH, imageBody('hold [sim:fault=slow-headers:1500]')), g.post(IMAGE_PATH, imageBody('hold [sim:fault=slow-headers:1500]'))];
    await until('both channels to be busy', async () =>
      (await g.admin('/admin/channels')).json.channels.filter((c: any) => c.inflight === 1).length === 2 ? true : null,
    );
    const res = await g.post(IMAGE_PATH, imageBody());
    assert.equal(res.status, 429);
    assert.deepEqual(Object.keys(res.json).sort(), ['code', 'data', 'message']);
    assert.equal(res.json.code, 'too_many_requests');
    assert.equal(res.json.data, null);
    assert.equal(res.headers.get('retry-after'), '3');
    assert.equal(a.stats.requests + b.stats.requests, 2, 'the refused request reached no vendor');
    for (const r of await Promise.all(slow)) assert.equal(r.status, 200);
    // The slots are free again.
    assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 200);
  });

  it("a group's max_concurrency bounds its requests over all channels (no queue: 429 at once)", async () => {
    const a = await alpha();
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE]), { group: '{ max_concurrency: 1, queue: { max_waiting: 0 } }' });
    after(() => g.close());
    const slow = g.post(IMAGE_PATH, imageBody('hold [sim:fault=slow-headers:1500]'));
    await until('the group slot to be taken', async () =>
      (await g.admin('/admin/channels')).json.groups.find((x: any) => x.name === 'rt').inflight === 1 ? true : null,
    );
    const res = await g.post(IMAGE_PATH, imageBody());
    assert.equal(res.status, 429);
    assert.equal(res.json.code, 'too_many_requests');
    assert.equal(res.headers.get('retry-after'), '3');
    assert.equal((await slow).status, 200);
  });

  it('every channel answering 429 → 429 in shape B with the vendor Retry-After', async () => {
    const [a, b] = [await alpha(), await alpha()];
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE], 'priority: 1') + channel('two', 'alpha-native', b, [IMAGE]));
    after(() => g.close());
    a.faults.push('429');
    b.faults.push('429');
    const res = await g.post(IMAGE_PATH, imageBody());
    assert.equal(res.status, 429);
    assert.equal(res.json.code, 'too_many_requests');
    assert.equal(res.json.data, null);
    assert.equal(res.headers.get('retry-after'), '2', "the simulators' own Retry-After");
    assert.equal(a.stats.requests + b.stats.requests, 2);
  });

  it('every channel answering 429 with a wait stated in its error body → Retry-After is the shortest stated wait', async () => {
    const [a, b] = [await alpha(), await alpha()];
    const g = await routed(channel('one', 'alpha-native', a, [IMAGE], 'priority: 1') + channel('two', 'alpha-native', b, [IMAGE]));
    after(() => g.close());
    // The vendor states these waits in a RetryInfo detail of its body and sends no Retry-After header.
    a.faults.push('429:wait:25');
    b.faults.push('429:wait:40');
    const res = await g.post(IMAGE_PATH, imageBody());
    assert.equal(res.status, 429);
    assert.deepEqual(res.json, { code: 'too_many_requests', message: 'the upstream is rate limiting this channel; retry later', data: null });
    assert.equal(res.headers.get('retry-after'), '25', 'the shorter of the two stated waits, not the last one nor retry_after_s (3)');
    assert.deepEqual([a.stats.requests, b.stats.requests], [1, 1]);
  });

  it('a 503 whose body states a wait → upstream_unavailable (shape A) with that Retry-After', async () => {
    const a = await alpha();
    const g = await routed(channel('only', 'alpha-native', a, [IMAGE]));
    after(() => g.close());
    a.faults.push('503:wait:30');
    const res = await g.post(IMAGE_PATH, imageBody());
    assert.equal(res.status, 503);
    assert.equal(res.json.error.code, 'upstream_unavailable');
    assert.equal(res.headers.get('retry-after'), '30');
  });
});

describe('circuit breaker', () => {
  it('opens after consecutive failures, fails fast, shows at /admin/channels and /metrics, and a probe closes it', async () => {
    const a = await alpha();
    const g = await routed(channel('only', 'alpha-native', a, [IMAGE], 'breaker: { consecutive_failures: 2, cooldown_ms: 300 }'));
    after(() => g.close());
    a.faults.push('500', '500');
    assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 502);
    assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 502);
    const fast = await g.post(IMAGE_PATH, imageBody());
    assert.equal(fast.status, 503);
    assert.equal(fast.json.error.code, 'upstream_unavailable');
    assert.ok(Number(fast.headers.get('retry-after')) >= 1);
    assert.equal(a.stats.requests, 2, 'an open breaker sends nothing to the vendor');

    const view = (await g.admin('/admin/channels')).json.channels.find((c: any) => c.name === 'only');
    assert.equal(view.breaker.state, 'open');
    assert.equal(view.breaker.consecutive_failures, 2);
    assert.equal(view.last_failure.code, 'bad_response');
    assert.deepEqual(view.recent, { window_s: 300, calls: 2, failures: 2 }, 'the two failed calls are the recent error rate (the refused third made no call)');
    assert.ok(view.breaker.probe_at);
    assert.ok(!JSON.stringify(view).includes(a.secrets.key!), 'no secret in the admin view');
    const metrics = (await g.admin('/metrics')).text;
    assert.match(metrics, /gateway_channel_breaker_state\{channel="only"\} 2/);
    assert.match(metrics, /gateway_breaker_transitions_total\{channel="only",state="open"\} 1/);

    await until('the cool-down to end', async () =>
      (await g.admin('/admin/channels')).json.channels.find((c: any) => c.name === 'only').breaker.state === 'half_open' ? true : null,
    );
    const probe = await g.post(IMAGE_PATH, imageBody());
    assert.equal(probe.status, 200, probe.text);
    assert.equal((await g.admin('/admin/channels')).json.channels.find((c: any) => c.name === 'only').breaker.state, 'closed');
    assert.match((await g.admin('/metrics')).text, /gateway_channel_breaker_state\{channel="only"\} 0/);
  });

  it('a failed probe opens the breaker again for another cool-down', async () => {
    const a = await alpha();
    const g = await routed(channel('only', 'alpha-native', a, [IMAGE], 'breaker: { consecutive_failures: 1, cooldown_ms: 200 }'));
    after(() => g.close());
    a.faults.push('500', '503');
    assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 502);
    await until('the cool-down to end', async () => ((await g.admin('/admin/channels')).json.channels[0].breaker.state === 'half_open' ? true : null));
    assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 503, 'the probe fails');
    assert.equal((await g.admin('/admin/channels')).json.channels.find((c: any) => c.name === 'only').breaker.state, 'open');
    assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 503);
    assert.equal(a.stats.requests, 2);
  });

  it('an open channel is passed over for the next one while it cools down', async () => {
    const [a, b] = [await alpha(), await alpha()];
    const g = await routed(
      channel('primary', 'alpha-native', a, [IMAGE], 'priority: 10\nbreaker: { consecutive_failures: 1, cooldown_ms: 60000 }') +
        channel('backup', 'alpha-native', b, [IMAGE]),
    );
    after(() => g.close());
    a.faults.push('500');
    assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 200, 'the first failure falls back');
    for (let i = 0; i < 3; i++) assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 200);
    assert.equal(a.stats.requests, 1, 'the open primary got nothing more');
    assert.equal(b.stats.requests, 4);
  });

  it('client errors and rate limits do not open the breaker', async () => {
    const a = await alpha();
    const g = await routed(channel('only', 'alpha-native', a, [IMAGE], 'breaker: { consecutive_failures: 1 }'));
    after(() => g.close());
    a.faults.push('400', '429');
    assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 400);
    assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 429);
    assert.equal((await g.post(IMAGE_PATH, imageBody())).status, 200);
    assert.equal((await g.admin('/admin/channels')).json.channels[0].breaker.state, 'closed');
  });
});

describe('admin routes', () => {
  it('need the admin key: none, a client key or a wrong one is 401', async () => {
    const a = await alpha();
    const g = await routed(channel('only', 'alpha-native', a, [IMAGE]));
    after(() => g.close());
    for (const auth of [undefined, `Bearer ${g.key}`, 'Bearer nope']) {
      const res = await fetch(`${g.url}/admin/channels`, { headers: auth ? { authorization: auth } : {} });
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as any).error.code, 'invalid_api_key');
    }
    assert.equal((await fetch(`${g.url}/metrics`)).status, 401);
    const wrong = await fetch(`${g.url}/admin/channels`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    assert.equal(wrong.status, 405);
    assert.equal((await fetch(`${g.url}/admin/nothing`, { headers: { authorization: `Bearer ${ADMIN}` } })).status, 404);
  });
});
