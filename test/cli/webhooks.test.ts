/**
 * `gateway webhooks …` as operators run it: real processes on a store file. The endpoints made
 * here are read back through the store, as the admin routes and the worker read them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-cli-webhooks-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('webhooks create, list, update, rotate, delete: the secret printed once; bad input a usage error (exit 2), an unknown endpoint exit 1', async () => {
  const env = { GATEWAY_DB: join(dir, 'hooks.db') };
  assert.equal(runCli(['tokens', 'create', '--group', 'default', '--name', 'hooked'], env).status, 0);
  const made = runCli(
    ['webhooks', 'create', '--token', 'hooked', '--url', 'https://93.184.216.34/in', '--events', 'task.completed,task.failed', '--description', 'ci'],
    env,
  );
  assert.equal(made.status, 0, made.stderr);
  const secret = made.stdout.trim();
  assert.match(secret, /^whsec_[A-Za-z0-9+/=]{44}$/);
  const id = /created webhook endpoint (we_[0-9a-f]+)/.exec(made.stderr)?.[1];
  assert.ok(id, made.stderr);
  const listed = runCli(['webhooks', 'list', '--token', 'hooked', '--json'], env);
  assert.equal(listed.status, 0, listed.stderr);
  const [view] = JSON.parse(listed.stdout) as { id: string; url: string; events: string[]; description: string }[];
  assert.deepEqual([view?.id, view?.url, view?.events, view?.description], [id, 'https://93.184.216.34/in', ['task.completed', 'task.failed'], 'ci']);
  assert.ok(!listed.stdout.includes(secret), 'never the secret again');

  const updated = runCli(['webhooks', 'update', id, '--events', 'task.progress', '--progress-seconds', '60', '--disable'], env);
  assert.equal(updated.status, 0, updated.stderr);
  assert.match(updated.stdout, /events=task\.progress {2}progress_seconds=60 {2}disabled/);
  const rotated = runCli(['webhooks', 'rotate', id, '--grace-seconds', '120'], env);
  assert.equal(rotated.status, 0, rotated.stderr);
  assert.notEqual(rotated.stdout.trim(), secret);
  const store = await openStore(env.GATEWAY_DB);
  try {
    const e = await store.getWebhookEndpoint(id);
    assert.deepEqual([e?.secret, e?.previousSecret, e?.enabled, e?.progressEverySeconds], [rotated.stdout.trim(), secret, false, 60]);
    assert.deepEqual(
      (await store.findAudit({ before: null, limit: 10 })).map((r) => r.action).filter((a) => a.startsWith('webhook.')),
      ['webhook.rotate', 'webhook.update', 'webhook.create'],
    );
  } finally {
    await store.close();
  }

  for (const [args, pattern] of [
    [['webhooks', 'create', '--token', 'hooked', '--url', 'http://93.184.216.34/in', '--events', 'task.completed'], /https/],
    [['webhooks', 'create', '--token', 'hooked', '--url', 'https://10.0.0.1/in', '--events', 'task.completed'], /private/],
    [['webhooks', 'create', '--token', 'hooked', '--url', 'https://93.184.216.34/in', '--events', 'task.exploded'], /--events takes/],
    [['webhooks', 'create', '--url', 'https://93.184.216.34/in', '--events', 'task.completed'], /exactly one of token and group/],
    [['webhooks', 'create', '--token', 'hooked', '--url', 'https://93.184.216.34/in'], /--events is required/],
    [['webhooks', 'deliveries', '--status', 'lost'], /--status takes/],
  ] as const) {
    const r = runCli([...args], env);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
  }
  const unknown = runCli(['webhooks', 'delete', 'we_none'], env);
  assert.equal(unknown.status, 1, unknown.stderr);
  const deleted = runCli(['webhooks', 'delete', id], env);
  assert.equal(deleted.status, 0, deleted.stderr);
  assert.equal(runCli(['webhooks', 'list', '--json'], env).stdout.trim(), '[]');
  const empty = runCli(['webhooks', 'deliveries'], env);
  assert.deepEqual([empty.status, empty.stdout], [0, '']);
});

test('webhooks deliveries lists the log, filtered; resend makes a delivery pending again with the same id', async () => {
  const env = { GATEWAY_DB: join(dir, 'log.db') };
  const store = await openStore(env.GATEWAY_DB);
  let id: string;
  try {
    const t = await store.createToken({ name: 'logged', keyHash: 'logged', group: 'default', models: null, quota: null });
    await store.createWebhookEndpoint(
      {
        id: 'we_cli',
        tokenId: t.id,
        group: null,
        url: 'https://93.184.216.34/in',
        callbackOrigins: null,
        events: ['task.completed'],
        progressEverySeconds: 30,
        enabled: true,
        description: null,
        secret: 'whsec_c2VjcmV0',
        createdAt: 1,
      },
      10,
    );
    await store.createTask({
      id: 'task_cli',
      tokenId: t.id,
      kind: 'video',
      route: 'r',
      model: 'm',
      upstreamModel: 'm',
      channel: 'c',
      price: 0,
      createdAt: 1,
      deadlineAt: 9e12,
    });
    const q = await store.updateTask('task_cli', 1, { status: 'queued', upstreamId: 'u', updatedAt: 2 });
    await store.updateTask('task_cli', q!.version, { status: 'completed', completedAt: 3, updatedAt: 3, settle: 0 });
    const [d] = await store.claimDeliveries('test', Date.now() + 1000, Date.now() + 2000, 1, 1);
    id = d!.id;
    await store.finishAttempt(id, 'test', { status: 'failed', nextAt: 0, code: 500, error: 'answered 500', at: Date.now() });
  } finally {
    await store.close();
  }
  const listed = runCli(['webhooks', 'deliveries', '--task', 'task_cli', '--status', 'failed', '--json'], env);
  assert.equal(listed.status, 0, listed.stderr);
  assert.deepEqual(
    (JSON.parse(listed.stdout) as { id: string; status: string; last_status_code: number }[]).map((x) => [x.id, x.status, x.last_status_code]),
    [[id, 'failed', 500]],
  );
  const resent = runCli(['webhooks', 'resend', id], env);
  assert.equal(resent.status, 0, resent.stderr);
  assert.match(resent.stdout, new RegExp(`^${id} .* pending {2}attempts=1`));
  assert.equal(runCli(['webhooks', 'resend', 'msg_none'], env).status, 1);
});
