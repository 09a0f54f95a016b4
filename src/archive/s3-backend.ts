import type { Readable } from 'node:stream';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { type ArchiveBackend, ArchiveMissing, ArchiveTimeout, type ByteRange, checkKey, type PutOptions } from './backend.js';
import { ByteLimit } from './byte-limit.js';
import { idleBounded } from './idle-body.js';

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

/** How long S3 may take (GATEWAY_ARCHIVE_S3_CONNECT_TIMEOUT_MS, GATEWAY_ARCHIVE_TIMEOUT_MS, GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS), ms. */
export interface S3Timeouts {
  /** Opening a connection. */
  readonly connectMs: number;
  /** The answer's headers: the whole call for HEAD and DELETE, the first byte of a GET. */
  readonly answerMs: number;
  /** No byte moving on a connection, either way, while a body streams (each part of an upload, a GET's body). */
  readonly idleMs: number;
}

/**
 * The archive in an S3-compatible bucket, through the official AWS SDK (loaded only here, only
 * when the archive is a bucket, so a gateway without one pays nothing at start). Where the bucket
 * is and who may write it come from the standard AWS settings (AWS_REGION, AWS_ENDPOINT_URL_S3,
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, a profile or a role), which the SDK reads itself;
 * `pathStyle` (GATEWAY_ARCHIVE_S3_PATH_STYLE) addresses the bucket in the path, as most servers
 * other than AWS want. Files are written by multipart upload (lib-storage's `Upload`): streamed,
 * a few parts in memory at a time, and an upload that fails is aborted, so no object is left.
 * Every call is bounded (`timeouts`): a connection not made, an answer that does not come, a body
 * that stops moving fail the call, so a hung S3 never holds a download or a copy for ever.
 */
export async function s3Backend(place: S3Place, opts: { pathStyle: boolean; timeouts: S3Timeouts; client?: S3ClientConfig }): Promise<ArchiveBackend> {
  const s3 = await import('@aws-sdk/client-s3');
  const { Upload } = await import('@aws-sdk/lib-storage');
  const config: S3ClientConfig = {
    forcePathStyle: opts.pathStyle,
    // Checksums only where S3 requires them: the newer trailing checksums are not understood by
    // many S3-compatible servers, and TLS already guards the bytes in transit.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...opts.client,
  };
  const { connectMs, answerMs, idleMs } = opts.timeouts;
  // A connection not made, and a socket on which nothing moves (an upload's part included), are
  // bounded by the client's handler; the wait for an answer's headers is bounded per call below.
  const client: S3Client = new s3.S3Client({ ...config, requestHandler: { connectionTimeout: connectMs, socketTimeout: idleMs } });
  // GETs have a client of their own, without the socket's idle timeout: a client that pauses a
  // download leaves the socket idle without S3 being at fault, so a GET's body is bounded by
  // idleBounded instead, which counts only the time its reader wants bytes and none come.
  const reader: S3Client = new s3.S3Client({ ...config, requestHandler: { connectionTimeout: connectMs } });
  /** `call`'s answer, or ArchiveTimeout once `answerMs` passed without it; `outer` aborts it too. Its timer is gone once it answered. */
  const answered = async <T>(what: string, outer: AbortSignal | undefined, call: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const abort = new AbortController();
    const late = new ArchiveTimeout(`S3 did not answer ${what} within ${answerMs} ms (GATEWAY_ARCHIVE_TIMEOUT_MS)`);
    const timer = setTimeout(() => abort.abort(late), answerMs);
    const cut = () => abort.abort(outer?.reason);
    if (outer?.aborted) cut();
    else outer?.addEventListener('abort', cut, { once: true });
    try {
      return await call(abort.signal);
    } catch (err) {
      throw abort.signal.reason === late ? late : err;
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', cut);
    }
  };
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
        const command = new s3.DeleteObjectCommand({ Bucket, Key: keyOf(key) });
        await answered('a DELETE', undefined, (abortSignal) => client.send(command, { abortSignal })).catch(() => undefined);
        throw failed;
      }
      return { size: limit.seen };
    },
    async get(key: string, range: ByteRange | null, signal?: AbortSignal) {
      try {
        const command = new s3.GetObjectCommand({ Bucket, Key: keyOf(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) });
        const out = await answered(`a GET of ${key}`, signal, (abortSignal) => reader.send(command, { abortSignal }));
        return idleBounded(out.Body as Readable, idleMs, key);
      } catch (err) {
        if (missing(err)) throw new ArchiveMissing(key);
        throw err;
      }
    },
    async stat(key: string, signal?: AbortSignal) {
      try {
        const command = new s3.HeadObjectCommand({ Bucket, Key: keyOf(key) });
        const out = await answered(`a HEAD of ${key}`, signal, (abortSignal) => client.send(command, { abortSignal }));
        return { size: out.ContentLength ?? 0 };
      } catch (err) {
        if (missing(err)) return null;
        throw err;
      }
    },
    async delete(key: string, signal?: AbortSignal) {
      const command = new s3.DeleteObjectCommand({ Bucket, Key: keyOf(key) });
      await answered(`a DELETE of ${key}`, signal, (abortSignal) => client.send(command, { abortSignal }));
    },
    async probe(signal: AbortSignal) {
      await answered('HeadBucket', signal, (abortSignal) => client.send(new s3.HeadBucketCommand({ Bucket }), { abortSignal }));
    },
    async close() {
      client.destroy();
      reader.destroy();
    },
  };
}
