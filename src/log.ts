import pino, { type Logger } from 'pino';

/**
 * The process logger: JSON lines on stdout. Key-bearing fields (and any headers object: a route may take its key in a header of its choosing) are redacted as a second line of
 * defence; the engine never puts a key or a secret in a log call in the first place.
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: ['*.authorization', '*.headers', '*.key', '*.secrets'], censor: '[redacted]' },
    },
    stdoutLines(),
  );
}

/** Bytes of log lines gathered before they are written; the access line is about 450. */
const LOG_BATCH_BYTES = 4096;
/** The longest a line waits for the batch to fill. */
const LOG_FLUSH_MS = 100;
/** Where a line's level starts: every line begins `{"level":NN` (no base fields before it). */
const LEVEL_AT = '{"level":'.length;

/**
 * Stdout, written in batches: lines are written once 4 KB have gathered or 100 ms have passed,
 * whichever comes first; a warning or worse is written at once with the lines before it (so an
 * operator, or a test, sees trouble as it happens and in order); what is left at exit is written
 * then (pino flushes it on `exit`, an uncaught error included). One write per access line was a
 * system call per request (bench/inflight, issue 30): batches make it about one per ten. A process
 * killed outright (SIGKILL, the OOM killer) loses at most the last 100 ms of info lines.
 */
function stdoutLines(): pino.DestinationStream & { flush(cb?: (err?: Error) => void): void } {
  const out = pino.destination({ dest: process.stdout.fd || 1, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS, sync: false });
  return {
    write(line: string) {
      out.write(line);
      if (line.charCodeAt(LEVEL_AT) >= 52 /* '4': warn (40) and above */) out.flush();
    },
    flush: (cb) => out.flush(cb),
  };
}

/** A logger that writes nothing, for tests and benchmarks that measure other things. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
