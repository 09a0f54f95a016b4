/**
 * The demo's printed examples work as printed (issue #12): a real `gateway demo` process, every
 * `curl` line it prints run by the shell with the real curl, exactly as a newcomer would paste it
 * (only `<id>` is filled in, with the id a printed task submission answered). The gamma line once
 * lacked its `?Action=…&Version=…`; an unquoted `&` would also have cut the command short.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { channelEnvNames } from '../../src/config/env.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { startCli, type Running } from '../helpers/process.js';
import { until } from '../helpers/until.js';

const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'gw-demo-examples-'));
let demo: Running;
let printed = '';

before(async () => {
  const unset = Object.fromEntries(channelEnvNames(PROJECT_ROOT).map((n) => [n, '']));
  demo = startCli(['demo'], { ...unset, PORT: '0', GATEWAY_DB: join(scratch, 'demo.db'), GATEWAY_WATCH: '0', LOG_LEVEL: 'warn', GATEWAY_ADMIN_KEY: '' });
  // The reload line is the last thing the demo prints.
  await demo.waitFor(/curl -s -X POST \S+\/admin\/reload[^\n]*\n/, 30_000);
  printed = demo.output();
});
after(async () => {
  await demo?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** The printed curl commands, each joined from its `\`-continued lines. */
function curlLines(text: string): string[] {
  return text
    .replace(/ \\\n\s+/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('curl '));
}

/** Runs one printed command in the shell, in a scratch directory; curl adds the status after the body. */
async function shell(command: string): Promise<{ status: number; body: string }> {
  const { stdout } = await run('sh', ['-c', `${command} -w '\\n%{http_code}'`], { cwd: scratch, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  const cut = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

test('every example request the demo prints answers 2xx as printed, and its task can be followed and downloaded', async () => {
  const lines = curlLines(printed);
  const direct = lines.filter((l) => !l.includes('<id>'));
  const followed = lines.filter((l) => l.includes('<id>'));
  assert.ok(direct.length >= 8, `the demo prints its examples:\n${printed}`);
  assert.equal(followed.length, 2, 'a query and a download line');
  let videoId: string | null = null;
  for (const line of direct) {
    const r = await shell(line);
    assert.ok(r.status >= 200 && r.status < 300, `${line}\n-> ${r.status} ${r.body.slice(0, 500)}`);
    if (line.includes('/v1/video/generations')) videoId = (JSON.parse(r.body) as { id: string }).id;
  }
  assert.ok(videoId, 'the video example answered a task id');

  const [query, download] = followed.map((l) => l.replaceAll('<id>', videoId!)) as [string, string];
  await until(
    'the demo task to complete',
    async () => {
      const r = await shell(query);
      assert.equal(r.status, 200, r.body);
      const status = (JSON.parse(r.body) as { status: string }).status;
      assert.notEqual(status, 'failed', r.body);
      return status === 'completed';
    },
    60_000,
  );
  const got = await shell(download);
  assert.equal(got.status, 200);
  assert.ok(statSync(join(scratch, 'video.mp4')).size > 0, 'video.mp4 was written');
});
