import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { outcomeOf, mayRetry, withFallback, type Outcome } from '../../src/routing/attempts.js';
import { RoutingState } from '../../src/routing/routing-state.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { silentLogger } from '../../src/log.js';
import type { RequestContext } from '../../src/pipeline/context.js';
import { likeliestOrder, rankChannels } from '../../src/routing/rank-channels.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { isModelRoute, restrictChannels } from '../../src/config/lookups.js';
import type { CompiledChannel, Snapshot } from '../../src/config/snapshot.js';
import type { TokenRecord } from '../../src/store/store.js';

const token = (p: Partial<TokenRecord> = {}): TokenRecord => ({
  id: 't',
  name: 't',
  keyHash: 'h',
  group: 'default',
  models: null,
  quota: null,
  used: 0,
  disabled: false,
  createdAt: 0,
  ...p,
});

/** The shipped config with the alpha channel copied under other names, priorities and weights. */
function withAlphaCopies(copies: { name: string; priority: number; weight: number; upstream?: string }[]): Snapshot {
  const base = loadConfigOrThrow(PROJECT_ROOT, { env: { ALPHA_BASE_URL: 'http://127.0.0.1:9', ALPHA_API_KEY: 'k' } });
  const alpha = base.channelsByName.get('alpha-primary')!;
  const made: CompiledChannel[] = copies.map((c) => ({
    ...alpha,
    name: c.name,
    priority: c.priority,
    weight: c.weight,
    models: new Map([...alpha.models].map(([k, v]) => [k, c.upstream ?? v])),
  }));
  return restrictChannels({ ...base, channels: [...base.channels, ...made] }, (c) => c.name !== 'alpha-primary');
}

describe('rankChannels', () => {
  const route = () =>
    loadConfigOrThrow(PROJECT_ROOT)
      .routes.filter(isModelRoute)
      .find((r) => r.path.includes(':generateContent'))!;

  it('puts higher priority tiers first, and renames the model per channel', () => {
    const s = withAlphaCopies([
      { name: 'low', priority: 0, weight: 1 },
      { name: 'high', priority: 10, weight: 1, upstream: 'vendor-name' },
      { name: 'mid', priority: 5, weight: 1 },
    ]);
    const ranked = rankChannels(s, route(), 'alpha-3-pro-image-preview', token(), () => 0.5);
    assert.deepEqual(
      ranked.map((c) => c.channel.name),
      ['high', 'mid', 'low'],
    );
    assert.equal(ranked[0]!.upstreamModel, 'vendor-name');
    assert.equal(ranked[1]!.upstreamModel, 'alpha-3-pro-image-preview');
  });

  it('orders a tier by weighted draws without replacement', () => {
    const s = withAlphaCopies([
      { name: 'a', priority: 0, weight: 1 },
      { name: 'b', priority: 0, weight: 3 },
    ]);
    // Weights 1 and 3: a draw under 0.25 picks a, the rest b.
    assert.deepEqual(
      rankChannels(s, route(), 'alpha-3-pro-image-preview', token(), () => 0.1).map((c) => c.channel.name),
      ['a', 'b'],
    );
    assert.deepEqual(
      rankChannels(s, route(), 'alpha-3-pro-image-preview', token(), () => 0.3).map((c) => c.channel.name),
      ['b', 'a'],
    );
  });

  it('likeliestOrder draws nothing: tiers first, the heaviest first inside one, declaration order between equals', () => {
    const s = withAlphaCopies([
      { name: 'light', priority: 0, weight: 1 },
      { name: 'heavy', priority: 0, weight: 3 },
      { name: 'light-too', priority: 0, weight: 1 },
      { name: 'top', priority: 5, weight: 1 },
    ]);
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(
        likeliestOrder(s, route(), 'alpha-3-pro-image-preview', token()).map((c) => c.channel.name),
        ['top', 'heavy', 'light', 'light-too'],
      );
    }
    assert.throws(
      () => likeliestOrder(s, route(), 'alpha-3-pro-image-preview', token({ group: 'nobody' })),
      (e: GatewayError) => e.code === 'model_not_allowed',
    );
  });

  it("refuses a model outside the token's list, or a group no channel serves", () => {
    const s = withAlphaCopies([{ name: 'a', priority: 0, weight: 1 }]);
    assert.throws(
      () => rankChannels(s, route(), 'alpha-3-pro-image-preview', token({ models: ['other'] })),
      (e: GatewayError) => e.code === 'model_not_allowed',
    );
    assert.throws(
      () => rankChannels(s, route(), 'alpha-3-pro-image-preview', token({ group: 'nobody' })),
      (e: GatewayError) => e.code === 'model_not_allowed',
    );
  });
});

describe('the retry rule', () => {
  const err = (code: 'bad_response' | 'too_many_requests' | 'invalid_request' | 'upstream_timeout', upstream?: GatewayError['details']['upstream']) =>
    new GatewayError(code, 'x', { upstream });
  const cases: [string, GatewayError | Error, Outcome, boolean, boolean][] = [
    ['connection refused', err('bad_response', { phase: 'unsent' }), 'unsent', true, true],
    ['a 429', err('too_many_requests', { phase: 'answered', status: 429 }), 'rate_limited', true, true],
    ['a rate limit inside a 2xx', err('too_many_requests', { phase: 'answered', status: 200 }), 'rate_limited', true, true],
    ['a 500', err('bad_response', { phase: 'answered', status: 500 }), 'refused', true, true],
    ['refused credentials (401 mapped to bad_response)', err('bad_response', { phase: 'answered', status: 401 }), 'refused', true, true],
    ['a 400', err('invalid_request', { phase: 'answered', status: 400 }), 'rejected', false, false],
    ['a read timeout after sending', err('upstream_timeout', { phase: 'unknown' }), 'unknown', true, false],
    ['a mapping of ours that failed', new Error('boom'), 'fault', false, false],
  ];
  for (const [what, e, outcome, syncRetries, createRetries] of cases) {
    it(`${what}: ${outcome}, a sync call ${syncRetries ? 'moves on' : 'stops'}, a creation ${createRetries ? 'moves on' : 'stops'}`, () => {
      assert.equal(outcomeOf(e), outcome);
      assert.equal(mayRetry(outcome, false), syncRetries);
      assert.equal(mayRetry(outcome, true), createRetries);
    });
  }
});

describe('withFallback', () => {
  const snapshotWith = (retry: Partial<Snapshot['retry']>) => {
    const s = withAlphaCopies([
      { name: 'a', priority: 2, weight: 1 },
      { name: 'b', priority: 1, weight: 1 },
      { name: 'c', priority: 0, weight: 1 },
    ]);
    return { ...s, retry: { ...s.retry, backoffMs: 0, ...retry } } as Snapshot;
  };
  const run = async (snapshot: Snapshot, fail: (name: string) => Error | null) => {
    const metrics = new Metrics();
    const routing = new RoutingState(metrics, () => snapshot);
    const route = snapshot.routes.filter(isModelRoute).find((r) => r.path.includes(':generateContent'))!;
    const ctx = { snapshot, token: token(), log: silentLogger(), requestId: 'r' } as unknown as RequestContext;
    const tried: string[] = [];
    const candidates = rankChannels(snapshot, route, 'alpha-3-pro-image-preview', token(), () => 0);
    const out = await withFallback(
      ctx,
      candidates,
      { routing, metrics },
      () => false,
      async (c) => {
        tried.push(c.channel.name);
        const e = fail(c.channel.name);
        if (e) throw e;
        return c.channel.name;
      },
    ).catch((e: GatewayError) => e);
    return { tried, out };
  };
  const refused = () => new GatewayError('bad_response', 'x', { upstream: { phase: 'answered', status: 500 } });

  it('goes down the ranking until a channel serves', async () => {
    const { tried, out } = await run(snapshotWith({}), (n) => (n === 'c' ? null : refused()));
    assert.deepEqual(tried, ['a', 'b', 'c']);
    assert.equal(out, 'c');
  });

  it('stops at max_attempts with the last error', async () => {
    const { tried, out } = await run(snapshotWith({ maxAttempts: 2 }), () => refused());
    assert.deepEqual(tried, ['a', 'b']);
    assert.equal((out as GatewayError).code, 'bad_response');
  });

  it('starts no call after deadline_ms: a backoff longer than the deadline ends the request', async () => {
    const { tried, out } = await run(snapshotWith({ backoffMs: 60_000, backoffMaxMs: 60_000, deadlineMs: 100 }), () => refused());
    assert.deepEqual(tried, ['a']);
    assert.equal((out as GatewayError).code, 'bad_response');
  });

  it('a failure of ours (no upstream phase) is not retried', async () => {
    const { tried, out } = await run(snapshotWith({}), () => new Error('mapping bug'));
    assert.deepEqual(tried, ['a']);
    assert.equal((out as Error).message, 'mapping bug');
  });
});
