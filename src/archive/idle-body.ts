import { pipeline, type Readable, Transform } from 'node:stream';
import { ArchiveTimeout } from './backend.js';

/**
 * `body` (the archive's answer to a GET), cut with ArchiveTimeout when no byte came for `idleMs`
 * while its reader wanted more. Unlike a socket's idle timeout, the time a reader takes nothing
 * (a client that pauses a download) is not counted: what it has not taken waits in the buffer,
 * and only an archive that sends nothing while the buffer is short is cut.
 */
export function idleBounded(body: Readable, idleMs: number, what: string): Readable {
  let last = performance.now();
  const out = new Transform({
    transform(chunk, _encoding, done) {
      last = performance.now();
      done(null, chunk);
    },
  });
  const timer = setInterval(
    () => {
      const wanting = out.writableLength === 0 && out.readableLength < out.readableHighWaterMark;
      if (!wanting) last = performance.now();
      else if (performance.now() - last > idleMs)
        out.destroy(new ArchiveTimeout(`no byte of ${what} came from the archive for ${idleMs} ms (GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS)`));
    },
    Math.max(20, Math.min(1_000, Math.floor(idleMs / 4))),
  );
  timer.unref();
  pipeline(body, out, () => clearInterval(timer));
  out.once('close', () => clearInterval(timer));
  return out;
}
