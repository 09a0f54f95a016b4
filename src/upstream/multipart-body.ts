import { randomBytes } from 'node:crypto';

/**
 * Encodes a request mapping's output as multipart/form-data (operation `request.encoding:
 * multipart`), for vendors that take uploads as files. Each key becomes a part: a `data:` URI
 * becomes a file part (its bytes, its media type, a file name made from the key), any other string,
 * number or boolean a text part, an object a JSON text part; an array gives one part per item
 * under the same name; null and absent values give none.
 */
export function encodeMultipart(fields: unknown): { body: Buffer; contentType: string } {
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) throw new Error('a multipart body mapping must give an object');
  const boundary = `----gateway${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  let files = 0;
  for (const [name, value] of Object.entries(fields)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === null || item === undefined) continue;
      const file = typeof item === 'string' ? DATA_URI.exec(item.slice(0, 200)) : null;
      const safe = name.replace(/["\r\n\\]/g, '_');
      if (file) {
        const type = (file[1] ?? '').toLowerCase();
        const bytes = Buffer.from(item.slice(file[0].length), 'base64');
        const filename = `${safe.replace(/\[\]$/, '')}-${++files}.${EXTENSIONS[type] ?? 'bin'}`;
        chunks.push(
          Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${safe}"; filename="${filename}"\r\ncontent-type: ${type}\r\n\r\n`),
          bytes,
          CRLF,
        );
      } else {
        const text = typeof item === 'object' ? JSON.stringify(item) : String(item);
        chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${safe}"\r\n\r\n${text}\r\n`));
      }
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

const CRLF = Buffer.from('\r\n');
const DATA_URI = /^data:([a-z]+\/[a-z0-9.+-]+);base64,/i;
const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/jpg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'video/mp4': 'mp4',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
};
