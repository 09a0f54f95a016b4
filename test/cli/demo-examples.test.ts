/**
 * The demo's printed examples work as printed (issue #12): a real `gateway demo` process, every
 * `curl` line it prints run by the shell with the real curl, exactly as a newcomer would paste it
 * (only `<id>` is filled in, with the id a printed task submission answered). The gamma line once
 * lacked its `?Action=…&Version=…`; an unquoted `&` would also have cut the command short.
 * Each task example's follow-up commands are run too (issue #40): the music and gamma tasks were
 * once sent to `/v1/videos/<id>`, which does not serve their families; and the alpha example once
 * printed 6.6 KB of base64 into the terminal.
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

/** One printed example: its command, and the commands printed under it that follow its task. */
interface Example {
  readonly command: string;
  readonly follow: string[];
}

/** The printed examples, each command joined from its `\`-continued lines; a follow-up is indented deeper than its example. */
function examples(text: string): Example[] {
  const out: Example[] = [];
  for (const line of text.replace(/ \\\n\s+/g, ' ').split('\n')) {
    const m = /^( *)curl /.exec(line);
    if (!m || line.includes('/admin/')) continue;
    if (m[1]!.length > 2) out.at(-1)?.follow.push(line.trim());
    else out.push({ command: line.trim(), follow: [] });
  }
  return out;
}

/** Runs one printed command in the shell, in a scratch directory; curl adds the status after what it prints (through its pipe, if any). */
async function shell(command: string): Promise<{ status: number; body: string }> {
  const withStatus = command.replace(/^curl -s /, `curl -s -w '\\n%{http_code}' `);
  const { stdout: raw } = await run('sh', ['-c', withStatus], { cwd: scratch, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  // A pipe's `cut` ends the status line with a newline of its own.
  const stdout = raw.replace(/\n$/, '');
  const cut = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

const TASK_ID = /task_[A-Za-z0-9_-]{24}/;

test('every example the demo prints answers 2xx as printed, without flooding the terminal with base64', async () => {
  const all = examples(printed);
  assert.ok(all.length >= 8, `the demo prints its examples:\n${printed}`);
  for (const { command } of all) {
    const r = await shell(command);
    assert.ok(r.status >= 200 && r.status < 300, `${command}\n-> ${r.status} ${r.body.slice(0, 500)}`);
    // The alpha answer once printed 6.6 KB of base64 into the terminal.
    assert.ok(r.body.length < 2_000, `${command}\nprints ${r.body.length} characters:\n${r.body.slice(0, 500)}`);
  }
  assert.match(printed, /cut to \d+ characters a line/, 'a cut answer is explained');
});

test("each task example prints commands on its own family's routes that follow the task and download its result", async () => {
  const tasks = examples(printed).filter((e) => e.follow.length > 0);
  // The video, music (iota), gamma and lambda examples.
  assert.ok(tasks.length >= 4, `the task examples print their follow-ups:\n${printed}`);
  assert.ok(
    tasks.some((t) => t.follow.some((l) => l.includes('/iota/fetch/<id>'))),
    'the music task is followed on the iota route',
  );
  assert.ok(
    tasks.some((t) => t.follow.some((l) => l.includes('CVSync2AsyncGetResult'))),
    "the gamma task is followed with gamma's GetResult",
  );
  await Promise.all(
    tasks.map(async ({ command, follow }) => {
      const submitted = await shell(command);
      const id = TASK_ID.exec(submitted.body)?.[0];
      assert.ok(id, `${command}\nanswered no task id: ${submitted.body}`);
      const [query, download] = follow.map((l) => l.replaceAll('<id>', id)) as [string, string | undefined];
      assert.ok(download, `${command}\nprints a download command`);
      await until(
        `the result of ${command.slice(0, 80)}`,
        async () => {
          const q = await shell(query);
          assert.equal(q.status, 200, `${query}\n-> ${q.body}`);
          assert.ok(q.body.includes(id), `${query}\nanswers the task: ${q.body}`);
          assert.doesNotMatch(q.body, /"(task_)?status":"fail/, q.body);
          const got = await shell(download);
          // Not yet completed: task_not_ready.
          if (got.status === 409) {
            await new Promise((r) => setTimeout(r, 200));
            return false;
          }
          assert.equal(got.status, 200, `${download}\n-> ${got.status} ${got.body}`);
          return true;
        },
        60_000,
      );
      const file = /-o (\S+)$/.exec(download)![1]!;
      assert.ok(statSync(join(scratch, file)).size > 0, `${file} was written`);
    }),
  );
});
