import pino, { type Logger } from 'pino';

/**
 * The process logger: JSON lines on stdout. Key-bearing fields (and any headers object: a route may take its key in a header of its choosing) are redacted as a second line of
 * defence; the engine never puts a key or a secret in a log call in the first place.
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: undefined,
    redact: { paths: ['*.authorization', '*.headers', '*.key', '*.secrets'], censor: '[redacted]' },
  });
}

/** A logger that writes nothing, for tests and benchmarks that measure other things. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
