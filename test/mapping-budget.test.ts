/**
 * Mappings under load (issue 14): jsonata evaluates a node per promise, so an evaluation shares the
 * event loop with every other request, and a wall-clock limit failed healthy mappings when the
 * process was busy (HTTP 500 "the request could not be translated for the upstream"). A real
 * gateway in front of a small vendor serves many requests at once, whose request, response and
 * price mappings all run in jsonata (lambdas: outside the fast path), while the process is kept
 * busy with synchronous work: no request may fail. Under the 250 ms wall-clock limit this test
 * had 145 of its 200 requests fail with exactly that 500: evaluations resumed in the same turn of
 * the event loop interleave, and each one's clock ran while the others worked.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadConfigOrThrow } from '../src/config/load.js';
import type { Snapshot } from '../src/config/snapshot.js';
import { createGateway, type Gateway } from '../src/gateway.js';
import { silentLogger } from '../src/log.js';
import { openStore } from '../src/store/open-store.js';
import type { Store } from '../src/store/store.js';
import { generateKey, hashKey } from '../src/tokens/keys.js';

const REQUESTS = 200;
/** Requests in flight at once: enough that their mappings interleave on the event loop. */
const IN_FLIGHT = 50;

/** The vendor: answers each POST with the words it was sent, reversed, after a short wait. */
function vendor(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { words } = JSON.parse(Buffer.concat(chunks).toString()) as { words: string[] };
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ out: [...words].reverse() })), 5);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

/** One route and one profile whose mappings use lambdas, which the fast path leaves to jsonata. */
function writeConfig(dir: string, vendorUrl: string): void {
  writeFileSync(join(dir, 'body.json'), JSON.stringify({ type: 'object', required: ['prompt'], properties: { prompt: { type: 'string' } } }));
  writeFileSync(
    join(dir, 'routes.yaml'),
    `version: 1
routes:
  - id: echo
    method: POST
    path: /v1/echo/{model}
    kind: sync
    operation: echo
    model: { path: model }
    models: [echo-1]
    body: { schema: body.json }
families:
  - { name: echoes, models: [echo-1] }
`,
  );
  writeFileSync(
    join(dir, 'channels.yaml'),
    `version: 1
groups: { default: {} }
profiles:
  echo:
    auth: { type: none }
    operations:
      echo:
        request:
          method: POST
          path: '"/echo"'
          body: '{ "words": $map($split(body.prompt, " "), function($w, $i) { $uppercase($w) & "-" & $string($i) }) }'
        response:
          body: '{ "words": $map(body.out, function($w) { $lowercase($w) }), "count": $count($filter(body.out, function($w) { $contains($w, "-") })) }'
channels:
  - { name: echo, profile: echo, base_url: "${vendorUrl}", groups: [default], models: [echo-1] }
prices:
  default: 1
  models:
    "echo-*": { per_request: 1, resolution: '$count($split(body.prompt, " ")[$length($) > 0]) > 100 ? "long" : "short"', factors: { long: 2 } }
`,
  );
}

/** Blocks the event loop for `ms`, as other requests' work or a GC pause would. */
function busyWait(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

let dir: string;
let upstream: Awaited<ReturnType<typeof vendor>>;
let store: Store;
let gateway: Gateway;
let snapshot: Snapshot;
let key: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-mapping-budget-'));
  upstream = await vendor();
  writeConfig(dir, upstream.url);
  snapshot = loadConfigOrThrow(dir, { env: {} });
  store = await openStore(':memory:');
  key = generateKey();
  // A quota, so every request holds its price in the store (writes committed in groups) before it maps.
  await store.createToken({ name: 'busy', keyHash: hashKey(key), group: 'default', models: null, quota: 1_000_000 });
  gateway = createGateway({ snapshot: () => snapshot, store, log: silentLogger() });
  await gateway.listen(0);
});
after(async () => {
  await gateway.close();
  await store.close();
  await new Promise<void>((r) => upstream.server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

test('many concurrent requests whose mappings run in jsonata all succeed while the process is kept busy', async () => {
  // 600 words: some 6,000 steps per mapping, far below the budget, enough for many to interleave.
  const words = Array.from({ length: 600 }, (_, i) => `w${i}`);
  const failures: string[] = [];
  let served = 0;
  let next = 0;
  const one = async (): Promise<void> => {
    while (next < REQUESTS) {
      const i = next++;
      const res = await fetch(`${gateway.url()}/v1/echo/echo-1`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: [`r${i}`, ...words].join(' ') }),
      });
      const text = await res.text();
      if (res.status !== 200) {
        failures.push(`#${i}: ${res.status} ${text.slice(0, 200)}`);
        continue;
      }
      const body = JSON.parse(text) as { words: string[]; count: number };
      if (body.count !== words.length + 1 || body.words[words.length] !== `r${i}-0`) failures.push(`#${i}: unexpected ${text.slice(0, 200)}`);
      else served++;
    }
  };
  // Synchronous work every few milliseconds: the requests in flight wait for it.
  let busyRounds = 0;
  const busy = setInterval(() => {
    busyRounds++;
    busyWait(20);
  }, 20);
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, one));
  } finally {
    clearInterval(busy);
  }
  assert.deepEqual(failures, [], `${failures.length} of ${REQUESTS} requests failed`);
  assert.equal(served, REQUESTS);
  assert.ok(busyRounds > 10, `the process was kept busy during the run (${busyRounds} busy rounds)`);
  const op = snapshot.profiles.get('echo')!.operations.get('echo')!;
  for (const [what, m] of [['request', op.request.body!], ['response', op.response.body]] as const) {
    assert.equal(m.fast, false, `the ${what} mapping is left to jsonata`);
    assert.equal(m.stats.jsonata, REQUESTS, `jsonata evaluated the ${what} mapping of every request`);
  }
});
