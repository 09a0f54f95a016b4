/**
 * An S3 server (s3rver) in a child process (./s3-child.ts), so a test can fail it as a real one
 * fails: `kill` (SIGKILL: connections refused from then on), `pause` (SIGSTOP: connections are
 * still accepted by the kernel, nothing is answered) and `resume` (SIGCONT). Its objects are kept
 * in a temporary directory, removed by `close`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { type Running, startProcess } from './process.js';

/** The running child and how to fail it. */
export interface S3Process {
  readonly endpoint: string;
  readonly bucket: string;
  /** The AWS environment a gateway process reaches it with. */
  readonly env: Record<string, string>;
  readonly proc: Running;
  /** SIGKILL: every connection is refused from now on. */
  kill(): Promise<void>;
  /** SIGSTOP: the server hangs (connections are accepted, nothing answered). */
  pause(): void;
  /** SIGCONT: it answers again. */
  resume(): void;
  /** Kills it (if alive) and removes its objects. */
  close(): Promise<void>;
}

/** Starts s3rver in a child process with bucket `bucket`, and waits for its port. */
export async function startS3Process(bucket = 'archive-test'): Promise<S3Process> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-proc-'));
  const proc = startProcess(process.execPath, [join(PROJECT_ROOT, 'dist/test/helpers/s3-child.js'), directory, bucket], {
    cwd: PROJECT_ROOT,
    env: { ...process.env },
  });
  const [, port] = await proc.waitFor(/"s3rver_port":(\d+)/, 20_000).catch(async (err: unknown) => {
    await proc.stop('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
    throw err;
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const signal = (s: NodeJS.Signals) => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(s);
  };
  return {
    endpoint,
    bucket,
    proc,
    env: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      GATEWAY_ARCHIVE_S3_PATH_STYLE: '1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    async kill() {
      await proc.stop('SIGKILL');
    },
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    async close() {
      await proc.stop('SIGKILL');
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
