import type { Readable } from 'node:stream';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { type ArchiveBackend, ArchiveMissing, type ByteRange, checkKey, type PutOptions } from './backend.js';
import { ByteLimit } from './byte-limit.js';

/** Bytes of each part of a multipart upload; lib-storage holds at most QUEUE + 1 parts of a copy at once. */
const PART_BYTES = 8 * 1024 * 1024;
/** Parts of one copy uploaded at once. */
const QUEUE = 2;

/** An S3 archive: `s3://bucket/prefix`, as GATEWAY_ARCHIVE names it. */
export interface S3Place {
  readonly bucket: string;
  /** '' or a prefix ending in `/`. */
  readonly prefix: string;
}

/** `s3://bucket[/prefix]` read into its parts; null when it is not one. */
export function s3PlaceOf(spec: string): S3Place | null {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/.*)?$/.exec(spec.trim());
  if (!m?.[1]) return null;
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket: m[1], prefix: prefix === '' ? '' : `${prefix}/` };
}

/**
 * The archive in an S3-compatible bucket, through the official AWS SDK (loaded only here, only
 * when the archive is a bucket, so a gateway without one pays nothing at start). Where the bucket
 * is and who may write it come from the standard AWS settings (AWS_REGION, AWS_ENDPOINT_URL_S3,
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, a profile or a role), which the SDK reads itself;
 * `pathStyle` (GATEWAY_ARCHIVE_S3_PATH_STYLE) addresses the bucket in the path, as most servers
 * other than AWS want. Files are written by multipart upload (lib-storage's `Upload`): streamed,
 * a few parts in memory at a time, and an upload that fails is aborted, so no object is left.
 */
export async function s3Backend(place: S3Place, opts: { pathStyle: boolean; client?: S3ClientConfig }): Promise<ArchiveBackend> {
  const s3 = await import('@aws-sdk/client-s3');
  const { Upload } = await import('@aws-sdk/lib-storage');
  const client: S3Client = new s3.S3Client({
    forcePathStyle: opts.pathStyle,
    // Checksums only where S3 requires them: the newer trailing checksums are not understood by
    // many S3-compatible servers, and TLS already guards the bytes in transit.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...opts.client,
  });
  const Bucket = place.bucket;
  const keyOf = (key: string) => `${place.prefix}${checkKey(key)}`;
  const missing = (err: unknown) => {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
  };
  return {
    kind: 's3',
    where: `s3://${Bucket}/${place.prefix}`,
    async put(key: string, body: Readable, put: PutOptions) {
      const limit = new ByteLimit(put.maxBytes);
      body.on('error', (err) => limit.destroy(err));
      body.pipe(limit);
      const upload = new Upload({
        client,
        params: { Bucket, Key: keyOf(key), Body: limit, ...(put.contentType ? { ContentType: put.contentType } : {}) },
        partSize: PART_BYTES,
        queueSize: QUEUE,
        leavePartsOnError: false,
      });
      const abort = () => void upload.abort().catch(() => undefined);
      put.signal?.addEventListener('abort', abort, { once: true });
      // A source that fails (the vendor cut the file off) must fail the upload, not complete a short object.
      let failed: Error | null = null;
      limit.on('error', (err) => {
        failed = err;
        abort();
      });
      try {
        await upload.done();
      } catch (err) {
        throw failed ?? err;
      } finally {
        put.signal?.removeEventListener('abort', abort);
      }
      if (failed) {
        await client.send(new s3.DeleteObjectCommand({ Bucket, Key: keyOf(key) })).catch(() => undefined);
        throw failed;
      }
      return { size: limit.seen };
    },
    async get(key: string, range: ByteRange | null) {
      try {
        const out = await client.send(new s3.GetObjectCommand({ Bucket, Key: keyOf(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }));
        return out.Body as Readable;
      } catch (err) {
        if (missing(err)) throw new ArchiveMissing(key);
        throw err;
      }
    },
    async stat(key: string) {
      try {
        const out = await client.send(new s3.HeadObjectCommand({ Bucket, Key: keyOf(key) }));
        return { size: out.ContentLength ?? 0 };
      } catch (err) {
        if (missing(err)) return null;
        throw err;
      }
    },
    async delete(key: string) {
      await client.send(new s3.DeleteObjectCommand({ Bucket, Key: keyOf(key) }));
    },
    async close() {
      client.destroy();
    },
  };
}
