import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import { FILE_HEADERS } from '../operations/vendor-file.js';
import type { ArchivedFile } from '../store/store.js';
import type { ArchiveBackend, ByteRange } from './backend.js';

/** How long a client may take no byte before an archived download is cut (as a vendor's is by its channel's body timeout). */
const STALL_MS = 120_000;

/** The entity tag of an archived file: a copy is never changed, so its key, size and copy time name its bytes. */
export function etagOf(file: ArchivedFile): string {
  return `"a-${createHash('sha256').update(`${file.key}\n${file.size}\n${file.archivedAt}`).digest('base64url').slice(0, 22)}"`;
}

/** What a request asks of an archived file: all of it, one range, or a range it cannot have. */
export type Wanted = { readonly kind: 'whole' } | { readonly kind: 'range'; readonly range: ByteRange } | { readonly kind: 'unsatisfiable' };

/**
 * The part of a file of `size` bytes a request asks for (RFC 9110, 14.2): one `bytes=` range
 * (`a-b`, `a-`, `-n`) is served as 206; several ranges, or a `Range` of another unit or out of
 * shape, are served whole (a server may ignore `Range`); a range past the end is 416. `If-Range`
 * that names another version (not this ETag, nor this Last-Modified) gets the whole file.
 */
export function wantedOf(req: IncomingMessage, size: number, etag: string, lastModified: string): Wanted {
  const header = req.headers.range;
  if (typeof header !== 'string') return { kind: 'whole' };
  const ifRange = req.headers['if-range'];
  if (typeof ifRange === 'string' && ifRange.trim() !== etag && ifRange.trim() !== lastModified) return { kind: 'whole' };
  const m = /^bytes=\s*([0-9]*)-([0-9]*)\s*$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'whole' };
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (!Number.isSafeInteger(start) || start >= size) return { kind: 'unsatisfiable' };
  if (end < start) return { kind: 'whole' };
  return { kind: 'range', range: { start, end } };
}

/**
 * Serves an archived file: 200 whole, 206 with `Content-Range`, 416 past its end, 304 to a client
 * that has this version (`If-None-Match`); with `Accept-Ranges`, an ETag and `Last-Modified`, and the
 * headers every file served through the gateway has (FILE_HEADERS). The bytes are streamed from the
 * backend as fast as the client takes them.
 */
export async function serveArchived(
  req: IncomingMessage,
  res: ServerResponse,
  backend: Pick<ArchiveBackend, 'get'>,
  file: ArchivedFile,
  ids: { readonly requestId: string; readonly log: Logger },
  extra: Readonly<Record<string, string>> = {},
): Promise<void> {
  const etag = etagOf(file);
  const lastModified = new Date(file.archivedAt).toUTCString();
  const headers: Record<string, string | number> = {
    'x-request-id': ids.requestId,
    ...FILE_HEADERS,
    'content-type': file.contentType ?? 'application/octet-stream',
    'accept-ranges': 'bytes',
    etag,
    'last-modified': lastModified,
    ...extra,
  };
  const inm = req.headers['if-none-match'];
  if (typeof inm === 'string' && inm.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
    res.writeHead(304, { 'x-request-id': ids.requestId, etag, 'last-modified': lastModified, ...extra });
    res.end();
    return;
  }
  const wanted = wantedOf(req, file.size, etag, lastModified);
  if (wanted.kind === 'unsatisfiable') {
    res.writeHead(416, { ...headers, 'content-range': `bytes */${file.size}`, 'content-length': 0 });
    res.end();
    return;
  }
  const range = wanted.kind === 'range' ? wanted.range : null;
  // Opened before the headers go: a file the backend lost is the caller's to fall back from.
  const body = await backend.get(file.key, range);
  if (range) {
    headers['content-range'] = `bytes ${range.start}-${range.end}/${file.size}`;
    headers['content-length'] = range.end - range.start + 1;
  } else headers['content-length'] = file.size;
  res.writeHead(range ? 206 : 200, headers);
  let stalled = false;
  res.setTimeout(STALL_MS, () => {
    stalled = true;
    res.destroy();
  });
  try {
    await pipeline(body, res);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (stalled) ids.log.info({ req_id: ids.requestId, key: file.key }, 'archived download cut: the client took no byte for two minutes');
    else if (code !== 'ERR_STREAM_PREMATURE_CLOSE')
      ids.log.warn({ req_id: ids.requestId, key: file.key, err: (err as Error).message }, 'archived download cut off');
    body.destroy();
    res.destroy();
  }
}
