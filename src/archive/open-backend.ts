import { isAbsolute, resolve } from 'node:path';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { ArchiveBackend } from './backend.js';
import { dirBackend } from './dir-backend.js';
import { ARCHIVE_DEFAULTS } from './result-archive.js';
import type { S3Timeouts } from './s3-backend.js';

/** The S3 client's bounds when none are given: the defaults of the settings that name them. */
const S3_TIMEOUT_DEFAULTS: S3Timeouts = {
  connectMs: ARCHIVE_DEFAULTS.s3ConnectTimeoutMs,
  answerMs: ARCHIVE_DEFAULTS.timeoutMs,
  idleMs: ARCHIVE_DEFAULTS.idleTimeoutMs,
};

/**
 * The backend GATEWAY_ARCHIVE names: `s3://bucket[/prefix]` is a bucket (./s3-backend.ts, loaded
 * only then), anything else a directory (relative to the working directory), created if missing.
 */
export async function openArchiveBackend(
  spec: string,
  opts: { pathStyle: boolean; s3Timeouts?: S3Timeouts; s3Client?: S3ClientConfig } = { pathStyle: false },
): Promise<ArchiveBackend> {
  if (spec.startsWith('s3://')) {
    const { s3Backend, s3PlaceOf } = await import('./s3-backend.js');
    const place = s3PlaceOf(spec);
    if (!place) throw new Error('GATEWAY_ARCHIVE: an S3 archive is s3://<bucket>[/<prefix>], the bucket named as S3 names buckets');
    return s3Backend(place, { pathStyle: opts.pathStyle, timeouts: opts.s3Timeouts ?? S3_TIMEOUT_DEFAULTS, client: opts.s3Client });
  }
  if (spec.includes('://')) throw new Error('GATEWAY_ARCHIVE: a directory, or s3://<bucket>[/<prefix>]');
  return dirBackend(isAbsolute(spec) ? spec : resolve(spec));
}
