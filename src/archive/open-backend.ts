import { isAbsolute, resolve } from 'node:path';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { ArchiveBackend } from './backend.js';
import { dirBackend } from './dir-backend.js';

/**
 * The backend GATEWAY_ARCHIVE names: `s3://bucket[/prefix]` is a bucket (./s3-backend.ts, loaded
 * only then), anything else a directory (relative to the working directory), created if missing.
 */
export async function openArchiveBackend(
  spec: string,
  opts: { pathStyle: boolean; s3Client?: S3ClientConfig } = { pathStyle: false },
): Promise<ArchiveBackend> {
  if (spec.startsWith('s3://')) {
    const { s3Backend, s3PlaceOf } = await import('./s3-backend.js');
    const place = s3PlaceOf(spec);
    if (!place) throw new Error('GATEWAY_ARCHIVE: an S3 archive is s3://<bucket>[/<prefix>], the bucket named as S3 names buckets');
    return s3Backend(place, { pathStyle: opts.pathStyle, client: opts.s3Client });
  }
  if (spec.includes('://')) throw new Error('GATEWAY_ARCHIVE: a directory, or s3://<bucket>[/<prefix>]');
  return dirBackend(isAbsolute(spec) ? spec : resolve(spec));
}
