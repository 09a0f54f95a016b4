import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { Webhook } from 'standardwebhooks';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { retryDelay } from '../../src/webhooks/delivery-worker.js';
import { isPrivateAddress, resolvedProblem, urlProblem } from '../../src/webhooks/outbound-url.js';
import { queryRouteFor } from '../../src/webhooks/payload.js';
import { newSecret, signatureHeader, signingSecrets } from '../../src/webhooks/signature.js';
import { webhookSettingsFromEnv } from '../../src/webhooks/webhook-settings.js';

const headersOf = (secrets: string[], id: string, ts: number, body: string) => ({
  'webhook-id': id,
  'webhook-timestamp': String(ts),
  'webhook-signature': signatureHeader(secrets, id, ts, body),
});

test('webhook signatures verify with the standardwebhooks package and the openai SDK; a changed body or another secret does not', async () => {
  const secret = newSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const body = JSON.stringify({ type: 'task.completed', timestamp: new Date().toISOString(), data: { id: 'task_x' } });
  const ts = Math.floor(Date.now() / 1000);
  const headers = headersOf([secret], 'msg_1', ts, body);
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  assert.throws(() => new Webhook(secret).verify(`${body} `, headers), /signature/i);
  assert.throws(() => new Webhook(newSecret()).verify(body, headers), /signature/i);
  // The same bytes as the package's own signer.
  assert.equal(headers['webhook-signature'], new Webhook(secret).sign('msg_1', new Date(ts * 1000), body));
  const openai = new OpenAI({ apiKey: 'unused', baseURL: 'http://127.0.0.1:9' });
  await openai.webhooks.verifySignature(body, headers, secret);
  await assert.rejects(openai.webhooks.verifySignature(body, headers, newSecret()));
});

test('webhook signatures: during a rotation both secrets sign, and a receiver holding either verifies', () => {
  const [oldSecret, newOne] = [newSecret(), newSecret()];
  const endpoint = { secret: newOne, previousSecret: oldSecret, previousSecretUntil: 10_000 };
  assert.deepEqual(signingSecrets(endpoint, 9_999), [newOne, oldSecret]);
  assert.deepEqual(signingSecrets(endpoint, 10_000), [newOne], 'the grace is over');
  const body = '{"type":"task.failed"}';
  const ts = Math.floor(Date.now() / 1000);
  const headers = headersOf(signingSecrets(endpoint, 9_999), 'msg_2', ts, body);
  assert.equal(headers['webhook-signature'].split(' ').length, 2);
  for (const s of [oldSecret, newOne]) new Webhook(s).verify(body, headers);
  assert.throws(() => new Webhook(newSecret()).verify(body, headers));
});

test('webhook retries wait twice as long each time, jittered in the upper half, within the cap', () => {
  assert.equal(
    retryDelay(1, 1000, 60_000, () => 0),
    500,
  );
  assert.equal(
    retryDelay(1, 1000, 60_000, () => 1),
    1000,
  );
  assert.equal(
    retryDelay(3, 1000, 60_000, () => 1),
    4000,
  );
  assert.equal(
    retryDelay(40, 1000, 60_000, () => 1),
    60_000,
    'capped',
  );
  for (let i = 0; i < 100; i++) {
    const d = retryDelay(5, 1000, 60_000, Math.random);
    assert.ok(d >= 8000 && d <= 16_000, `${d}`);
  }
});

test("webhook slots: 16 per replica and 4 per endpoint by default; an endpoint's share must fit in the slots", () => {
  const of = (env: NodeJS.ProcessEnv) => {
    const s = webhookSettingsFromEnv(env);
    return [s.concurrency, s.perEndpoint];
  };
  assert.deepEqual(of({}), [16, 4]);
  assert.deepEqual(of({ GATEWAY_WEBHOOK_CONCURRENCY: '64', GATEWAY_WEBHOOK_PER_ENDPOINT: '8' }), [64, 8]);
  assert.deepEqual(of({ GATEWAY_WEBHOOK_CONCURRENCY: '2' }), [2, 2], 'the default share within fewer slots');
  assert.throws(() => of({ GATEWAY_WEBHOOK_PER_ENDPOINT: '17' }), /GATEWAY_WEBHOOK_PER_ENDPOINT must be a whole number from 1 to 16/);
  assert.throws(() => of({ GATEWAY_WEBHOOK_PER_ENDPOINT: '0' }), /GATEWAY_WEBHOOK_PER_ENDPOINT/);
  assert.throws(() => of({ GATEWAY_WEBHOOK_CONCURRENCY: '0' }), /GATEWAY_WEBHOOK_CONCURRENCY must be a whole number from 1 to 256/);
});

test('webhook URLs: https only, no private, loopback, link-local, CGNAT, unique-local or metadata address, unless allowed', async () => {
  for (const a of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fd00:ec2::254',
    'fe80::1',
    'fc00::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
  ]) {
    assert.equal(isPrivateAddress(a), true, a);
  }
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) assert.equal(isPrivateAddress(a), false, a);
  assert.equal(urlProblem('https://hooks.example.com/in', false), null);
  assert.match(urlProblem('http://hooks.example.com/in', false) ?? '', /https/);
  assert.match(urlProblem('https://169.254.169.254/latest', false) ?? '', /private/);
  assert.match(urlProblem('https://[fd00:ec2::254]/', false) ?? '', /private/);
  assert.match(urlProblem('https://localhost:8443/', false) ?? '', /private/);
  assert.match(urlProblem('https://user:pw@hooks.example.com/', false) ?? '', /user name/);
  assert.match(urlProblem('not a url', false) ?? '', /absolute URL/);
  assert.match(urlProblem(`https://a.example/${'x'.repeat(3000)}`, false) ?? '', /at most/);
  assert.equal(urlProblem('http://127.0.0.1:9/in', true), null, 'allowed by the operator');
  assert.match(urlProblem('ftp://127.0.0.1/in', true) ?? '', /https/);
  // A name is checked where it resolves: localhost is loopback.
  assert.match((await resolvedProblem('https://localhost./x', false)) ?? '', /private|does not resolve/);
  assert.equal(await resolvedProblem('https://localhost./x', true), null);
});

test('a webhook payload shows a task as the query route of its family closest to the route that made it', async () => {
  const snapshot = await loadConfigOrThrow(PROJECT_ROOT);
  const viaVideos = queryRouteFor(snapshot, { kind: 'video', route: 'videos' });
  assert.equal(viaVideos?.path, '/v1/videos/{task_id}');
  const viaGenerations = queryRouteFor(snapshot, { kind: 'video', route: 'video-generations' });
  assert.equal(viaGenerations?.path, '/v1/video/generations/{task_id}');
  assert.equal(queryRouteFor(snapshot, { kind: 'no-such-family', route: 'videos' }), null);
});
