/**
 * The lines in front of a full max_concurrency (src/routing/wait-lines.ts, through RoutingState):
 * a slot given back goes to the longest waiter even when a newcomer asks for it first, a full
 * line refuses at once, and a wait ends at its time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { CompiledChannel, Snapshot } from '../../src/config/snapshot.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { RoutingState, type Slot } from '../../src/routing/routing-state.js';

const base = loadConfigOrThrow(PROJECT_ROOT, { env: { ALPHA_BASE_URL: 'http://127.0.0.1:9', ALPHA_API_KEY: 'k' } });
const alpha = base.channelsByName.get('alpha-primary')!;

function state(maxWaiting: number, maxWaitMs = 10_000): { routing: RoutingState; channel: CompiledChannel } {
  const channel: CompiledChannel = { ...alpha, maxConcurrency: 1, queue: { maxWaiting, maxWaitMs } };
  const snapshot: Snapshot = { ...base, channels: [channel], channelsByName: new Map([[channel.name, channel]]) };
  return { routing: new RoutingState(new Metrics(), () => snapshot), channel };
}

const isSlot = (s: unknown): s is Slot => typeof s === 'object' && s !== null && 'done' in s;

describe('wait lines', () => {
  it('a slot given back goes to the one waiting, not to a newcomer who asks in between', async () => {
    const { routing, channel } = state(5);
    const held = await routing.enter(channel);
    assert.ok(isSlot(held));
    const waiting = routing.enterWaiting(channel, performance.now() + 10_000);
    assert.equal(routing.waiting('channel', channel.name), 1);
    held.done('success');
    // The waiter is woken but has not taken its slot yet: the newcomer must not get it.
    assert.deepEqual(await routing.enter(channel), { reason: 'saturated' });
    const got = await waiting;
    assert.ok('slot' in got && isSlot(got.slot), 'the waiter got the slot');
    assert.deepEqual(await routing.enter(channel), { reason: 'saturated' }, 'and holds it');
    got.slot.done('success');
    assert.ok(isSlot(await routing.enter(channel)), 'free again once given back, with nobody waiting');
  });

  it('a full line refuses at once; max_waiting 0 never waits', async () => {
    for (const maxWaiting of [0, 1]) {
      const { routing, channel } = state(maxWaiting);
      const held = await routing.enter(channel);
      assert.ok(isSlot(held));
      const waiters = Array.from({ length: maxWaiting }, () => routing.enterWaiting(channel, performance.now() + 10_000));
      const refused = await routing.enterWaiting(channel, performance.now() + 10_000);
      assert.ok('refused' in refused && refused.refused === 'full', `max_waiting ${maxWaiting}`);
      held.done('success');
      for (const w of waiters) {
        const got = await w;
        assert.ok('slot' in got && isSlot(got.slot));
        got.slot.done('success');
      }
    }
  });

  it('a wait ends at max_wait_ms, or earlier at the deadline it is given', async () => {
    const { routing, channel } = state(5, 100);
    const held = await routing.enter(channel);
    assert.ok(isSlot(held));
    const t0 = performance.now();
    const timedOut = await routing.enterWaiting(channel, performance.now() + 10_000);
    assert.ok('refused' in timedOut && timedOut.refused === 'timeout');
    assert.ok(performance.now() - t0 >= 95);
    const pastDeadline = await routing.enterWaiting(channel, performance.now() - 1);
    assert.ok('refused' in pastDeadline && pastDeadline.refused === 'timeout');
    assert.equal(routing.waiting('channel', channel.name), 0);
    held.done('success');
  });

  it('a client already gone does not take a place in line', async () => {
    const { routing, channel } = state(1);
    const held = await routing.enter(channel);
    assert.ok(isSlot(held));
    const gone = new AbortController();
    gone.abort();
    const waited = await routing.enterWaiting(channel, performance.now() + 10_000, gone.signal);
    assert.ok('refused' in waited && waited.refused === 'timeout');
    assert.equal(routing.waiting('channel', channel.name), 0);
    held.done('success');
  });
});
