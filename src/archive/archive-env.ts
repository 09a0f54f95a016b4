import { openArchiveBackend } from './open-backend.js';
import { ARCHIVE_DEFAULTS, type ArchiveOptions } from './result-archive.js';

/** The archive's settings as the environment gives them (docs/operating.md); checked by `openArchive`. */
export interface ArchiveEnv {
  /** GATEWAY_ARCHIVE: a directory or s3://bucket[/prefix]. */
  readonly spec: string;
  readonly keepDays: number;
  readonly maxMb: number;
  readonly copies: number;
  readonly attempts: number;
  readonly s3PathStyle: boolean;
  /** GATEWAY_ARCHIVE_S3_CONNECT_TIMEOUT_MS, GATEWAY_ARCHIVE_TIMEOUT_MS, GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS. */
  readonly s3ConnectTimeoutMs: number;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
}

/** GATEWAY_ARCHIVE and its companions; null when GATEWAY_ARCHIVE is unset or empty (no archive). Malformed numbers are NaN, refused at start. */
export function archiveFromEnv(env: NodeJS.ProcessEnv): ArchiveEnv | null {
  const spec = env.GATEWAY_ARCHIVE?.trim();
  if (!spec) return null;
  const num = (raw: string | undefined, fallback: number) => (raw === undefined || raw.trim() === '' ? fallback : Number(raw));
  return {
    spec,
    keepDays: num(env.GATEWAY_ARCHIVE_KEEP_DAYS, ARCHIVE_DEFAULTS.keepDays),
    maxMb: num(env.GATEWAY_ARCHIVE_MAX_MB, ARCHIVE_DEFAULTS.maxMb),
    copies: num(env.GATEWAY_ARCHIVE_COPIES, ARCHIVE_DEFAULTS.copies),
    attempts: num(env.GATEWAY_ARCHIVE_ATTEMPTS, ARCHIVE_DEFAULTS.attempts),
    s3PathStyle: /^(1|true|yes|on)$/i.test(env.GATEWAY_ARCHIVE_S3_PATH_STYLE?.trim() ?? ''),
    s3ConnectTimeoutMs: num(env.GATEWAY_ARCHIVE_S3_CONNECT_TIMEOUT_MS, ARCHIVE_DEFAULTS.s3ConnectTimeoutMs),
    timeoutMs: num(env.GATEWAY_ARCHIVE_TIMEOUT_MS, ARCHIVE_DEFAULTS.timeoutMs),
    idleTimeoutMs: num(env.GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS, ARCHIVE_DEFAULTS.idleTimeoutMs),
  };
}

/** A whole number within bounds, else an error naming the variable. */
function check(name: string, value: number, min: number, max: number, what: string): void {
  if (!(Number.isInteger(value) && value >= min && value <= max)) throw new Error(`${name} must be ${what} from ${min} to ${max}`);
}

/** Checks the settings and opens the backend (an S3 bucket loads the AWS SDK only now). */
export async function openArchive(e: ArchiveEnv): Promise<ArchiveOptions> {
  check('GATEWAY_ARCHIVE_KEEP_DAYS', e.keepDays, 1, 3650, 'whole days');
  check('GATEWAY_ARCHIVE_MAX_MB', e.maxMb, 1, 1_048_576, 'whole megabytes');
  check('GATEWAY_ARCHIVE_COPIES', e.copies, 1, 64, 'a whole number');
  check('GATEWAY_ARCHIVE_ATTEMPTS', e.attempts, 1, 100, 'a whole number');
  check('GATEWAY_ARCHIVE_S3_CONNECT_TIMEOUT_MS', e.s3ConnectTimeoutMs, 100, 600_000, 'a whole number of ms');
  check('GATEWAY_ARCHIVE_TIMEOUT_MS', e.timeoutMs, 100, 600_000, 'a whole number of ms');
  check('GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS', e.idleTimeoutMs, 100, 3_600_000, 'a whole number of ms');
  const s3Timeouts = { connectMs: e.s3ConnectTimeoutMs, answerMs: e.timeoutMs, idleMs: e.idleTimeoutMs };
  const backend = await openArchiveBackend(e.spec, { pathStyle: e.s3PathStyle, s3Timeouts });
  return {
    backend,
    settings: {
      keepDays: e.keepDays,
      maxBytes: e.maxMb * 1024 * 1024,
      copies: e.copies,
      attempts: e.attempts,
      timeoutMs: e.timeoutMs,
      idleTimeoutMs: e.idleTimeoutMs,
    },
  };
}
