import type { Readable } from 'node:stream';

/**
 * Where the result archive keeps files (docs/archive.md): a directory or an S3-compatible bucket.
 * A backend knows nothing of tasks or vendors: it puts a stream under a key, serves a byte range
 * of it, says whether it is there, and deletes it. What a file is (its task, size, type, how long
 * it is kept) is the store's (src/store/archive-store.ts).
 */
export interface ArchiveBackend {
  /** `dir` or `s3`, for logs and metrics. */
  readonly kind: 'dir' | 's3';
  /** Where it is, for logs (no credentials). */
  readonly where: string;
  /**
   * Writes `body` under `key`, streamed, and resolves with its size once it is whole and durable;
   * a file of more than `maxBytes` is refused (`ArchiveTooLarge`) and nothing is left under `key`.
   * A put that fails or is aborted leaves nothing half written where `get` would find it.
   */
  put(key: string, body: Readable, opts: PutOptions): Promise<{ readonly size: number }>;
  /**
   * The bytes of `key`, from `range.start` to `range.end` (inclusive) or whole; `ArchiveMissing` when
   * it is not there. `signal` cuts the wait for the answer only: once it resolved, the body is the
   * caller's and no timer or signal of the call can cut it.
   */
  get(key: string, range: ByteRange | null, signal?: AbortSignal): Promise<Readable>;
  /** Its size, or null when it is not there. */
  stat(key: string, signal?: AbortSignal): Promise<{ readonly size: number } | null>;
  /** Deletes it; a key not there is no error. */
  delete(key: string, signal?: AbortSignal): Promise<void>;
  /** A cheap call that resolves while the archive answers (S3: HeadBucket; a directory: its root is there); the archive's gate sends it while the archive is away. */
  probe(signal: AbortSignal): Promise<void>;
  /** Lets go of what it holds (connections); pending writes are the caller's to finish first. */
  close(): Promise<void>;
}

/** How a file is put. */
export interface PutOptions {
  /** The media type it is served with (S3 keeps it on the object too). */
  readonly contentType: string | null;
  /** The most bytes it may have (GATEWAY_ARCHIVE_MAX_MB). */
  readonly maxBytes: number;
  /** Aborts the put (the gateway stops, a lease was lost). */
  readonly signal?: AbortSignal;
}

/** A range of bytes, both ends inclusive, within the file. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** A file longer than the archive takes (GATEWAY_ARCHIVE_MAX_MB): copying it again will not help. */
export class ArchiveTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file is larger than the archive takes (${maxBytes} bytes, GATEWAY_ARCHIVE_MAX_MB)`);
    this.name = 'ArchiveTooLarge';
  }
}

/** A key the archive does not have (purged, or deleted behind the gateway's back). */
export class ArchiveMissing extends Error {
  constructor(key: string) {
    super(`the archive has no file ${key}`);
    this.name = 'ArchiveMissing';
  }
}

/** A call the archive did not answer within its timeout (GATEWAY_ARCHIVE_TIMEOUT_MS, _S3_CONNECT_TIMEOUT_MS, _IDLE_TIMEOUT_MS). */
export class ArchiveTimeout extends Error {
  constructor(what: string) {
    super(what);
    this.name = 'ArchiveTimeout';
  }
}

/**
 * Keys are made by the gateway from its own ids only (`tasks/<task id>/<index>`,
 * `links/<link id>`), never from anything a vendor said; a key of another shape is a bug and is
 * refused before it can name a path or an object elsewhere.
 */
const KEY = /^(tasks\/task_[A-Za-z0-9_-]{1,64}\/[0-9]{1,3}|links\/[0-9a-f]{64})$/;

/** Throws unless `key` is one the gateway makes. */
export function checkKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`not an archive key: ${JSON.stringify(key.slice(0, 80))}`);
  return key;
}

/** The key of result `index` of a task. */
export function taskFileKey(taskId: string, index: number): string {
  return checkKey(`tasks/${taskId}/${index}`);
}

/** The key of the file behind a link (its id: the hash of its secret). */
export function linkFileKey(linkId: string): string {
  return checkKey(`links/${linkId}`);
}
