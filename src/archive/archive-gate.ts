import type { Logger } from 'pino';
import { DependencyGate } from '../dependencies/dependency-gate.js';
import type { Metrics } from '../metrics/metrics.js';
import { type ArchiveBackend, ArchiveMissing, ArchiveTimeout } from './backend.js';

/**
 * The archive as an optional dependency (DependencyGate, the rule Redis follows too): a call of a
 * download's path that runs past `timeoutMs` (GATEWAY_ARCHIVE_TIMEOUT_MS) or fails as an outage
 * fails (refused, reset, a 5xx, a timeout of the S3 client; never a file not there) marks the
 * archive away for the process: `gateway_archive_up` reads 0, one warning is logged, downloads go
 * to the vendor at once and the copier claims no copy, until the backend's probe (S3 HeadBucket,
 * a directory's root) answers again; `onBack` then runs (the copier claims what waited).
 */
export function archiveGate(
  backend: ArchiveBackend,
  o: { log: Logger; metrics: Metrics; timeoutMs: number; probeEveryMs?: number; onBack: () => void },
): DependencyGate {
  return new DependencyGate({
    name: 'archive',
    log: o.log,
    metrics: o.metrics,
    help: '1 while the result archive answers; 0 while it is away and downloads are served by the vendor (no copy starts meanwhile)',
    timeoutMs: o.timeoutMs,
    probeEveryMs: o.probeEveryMs ?? 1_000,
    probe: (signal) => backend.probe(signal),
    isOutage: (err) => !(err instanceof ArchiveMissing),
    isTimeout: (err) => err instanceof ArchiveTimeout || (err as { name?: string } | null)?.name === 'TimeoutError',
    onMove: (up) => {
      if (up) o.onBack();
    },
    saying: {
      away: 'result archive unreachable: downloads are served by the vendor, and no copy starts, until it answers again',
      back: 'result archive reachable again: downloads are served from it and copies resume',
    },
    logged: { archive: backend.where, kind: backend.kind },
  });
}
