/**
 * Mappings under load (issue 14): jsonata evaluates a node per promise, so an evaluation shares the
 * event loop with every other request, and a wall-clock limit failed healthy mappings when the
 * process was busy (HTTP 500 "the request could not be translated for the upstream"). A real
 * gateway in front of a small vendor serves many requests at once, whose request, response and
 * price mappings all run in jsonata (they read the clock, which the fast path leaves to jsonata:
 * an operator's mapping outside its subset runs there), while the process is kept
 * busy with synchronous work: no request may fail. Under the 250 ms wall-clock limit this test
 * had 145 of its 200 requests fail with exactly that 500: evaluations resumed in the same turn of
 * the event loop interleave, and each one's clock ran while the others worked.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { busyWait, startConfigGateway, type ConfigGateway } from '../helpers/config-gateway.js';
import { listenLocal } from '../helpers/local-server.js';
import { writeConfigFiles } from '../helpers/config-dir.js';

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
  // The run can be slow on a loaded machine: an idle connection closed by the vendor as the gateway
  // reuses it would be a 502 that says nothing about mappings.
  server.keepAliveTimeout = 120_000;
  return listenLocal(server).then((url) => ({ server, url }));
}

/** One route and one profile whose mappings read the clock ($millis, $now), which the fast path leaves to jsonata. */
function writeConfig(dir: string, vendorUrl: string): void {
  writeConfigFiles(dir, {
    'routes.yaml': `version: 1
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
    'channels.yaml': `version: 1
groups: { default: {} }
profiles:
  echo:
    auth: { type: none }
    operations:
      echo:
        request:
          method: POST
          path: '"/echo"'
          body: '{ "words": $map($split(body.prompt, " "), function($w, $i) { $uppercase($w) & "-" & $string($i) }), "sent": $millis() }'
        response:
          body: '{ "words": $map(body.out, function($w) { $lowercase($w) }), "count": $count($filter(body.out, function($w) { $contains($w, "-") })), "at": $now() }'
channels:
  - { name: echo, profile: echo, base_url: "${vendorUrl}", groups: [default], models: [echo-1] }
prices:
  default: 1
  models:
    "echo-*": { per_request: 1, resolution: '$millis() > 0 and $count($split(body.prompt, " ")[$length($) > 0]) > 100 ? "long" : "short"', factors: { long: 2 } }
`,
  });
}

let g: ConfigGateway;
let upstream: Awaited<ReturnType<typeof vendor>>;
before(async () => {
  upstream = await vendor();
  // A quota, so every request holds its price in the store (writes committed in groups) before it maps.
  g = await startConfigGateway((dir) => writeConfig(dir, upstream.url), { quota: 1_000_000 });
});
after(async () => {
  await g.close();
  await new Promise<void>((r) => upstream.server.close(() => r()));
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
      const res = await fetch(`${g.gateway.url()}/v1/echo/echo-1`, {
        method: 'POST',
        headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
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
  const op = g.snapshot.profiles.get('echo')!.operations.get('echo')!;
  for (const [what, m] of [
    ['request', op.request.body!],
    ['response', op.response.body],
  ] as const) {
    assert.equal(m.fast, false, `the ${what} mapping is left to jsonata`);
    assert.equal(m.stats.jsonata, REQUESTS, `jsonata evaluated the ${what} mapping of every request`);
  }
});
