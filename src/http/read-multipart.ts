import busboy from 'busboy';
import { GatewayError } from '../errors/gateway-error.js';

/** Most text fields one multipart body may carry. */
const MAX_FIELDS = 100;
const NAME = /^([A-Za-z_][A-Za-z0-9_-]{0,63})(?:\[([A-Za-z0-9_-]{0,63})\])?$/;

/**
 * Turns a multipart/form-data body into the object its JSON form would be (docs/routes-yaml.md, "Multipart
 * bodies"): text fields are strings (a value that is a JSON object, such as `metadata`, is parsed),
 * an uploaded file becomes a `data:<type>;base64,…` string, a repeated name or `name[]` makes an
 * array, and `name[key]` sets a key of an object. The body is already read, within the route's size limit.
 */
export function parseMultipart(raw: Buffer, contentType: string, maxFiles: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const out: Record<string, unknown> = {};
    const fail = (message: string, param = '') => reject(new GatewayError('invalid_request', message, { param }));
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: { 'content-type': contentType },
        limits: { files: maxFiles, fields: MAX_FIELDS, parts: maxFiles + MAX_FIELDS, fieldSize: raw.length + 1 },
      });
    } catch (err) {
      fail(`the multipart body cannot be read: ${(err as Error).message}`);
      return;
    }
    let failed = false;
    const put = (name: string, value: unknown) => {
      const m = NAME.exec(name);
      if (!m) {
        failed = true;
        fail(
          name === ''
            ? 'a multipart part has no name (content-disposition: form-data; name="…")'
            : `multipart field name ${JSON.stringify(name)} is not accepted`,
          name,
        );
        return;
      }
      const [, key, sub] = m as unknown as [string, string, string | undefined];
      if (key === '__proto__' || sub === '__proto__') return;
      if (sub === undefined) {
        const prev = out[key];
        out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
      } else if (sub === '') {
        const prev = out[key];
        out[key] = Array.isArray(prev) ? [...prev, value] : prev === undefined ? [value] : [prev, value];
      } else {
        const obj = out[key] !== null && typeof out[key] === 'object' && !Array.isArray(out[key]) ? (out[key] as Record<string, unknown>) : {};
        obj[sub] = value;
        out[key] = obj;
      }
    };
    // busboy gives `undefined` for a part whose content-disposition has no name: the body's, not ours.
    const nameOf = (name: string | undefined): string => (typeof name === 'string' ? name.slice(0, 80) : '');
    bb.on('field', (rawName: string | undefined, value: string | undefined) => {
      const name = nameOf(rawName);
      // busboy gives no text for a part in a charset it cannot decode.
      if (typeof value !== 'string') {
        failed = true;
        fail(`multipart field ${JSON.stringify(name)} is in a charset that cannot be read; send UTF-8`, name);
        return;
      }
      let v: unknown = value;
      if (value.startsWith('{')) {
        try {
          v = JSON.parse(value);
        } catch {
          // stays text; the schema says whether text is acceptable there
        }
      }
      put(name, v);
    });
    bb.on('file', (rawName: string | undefined, stream, info) => {
      const name = nameOf(rawName);
      const chunks: Buffer[] = [];
      // A body that ends inside a file part errors this stream as well as busboy itself; without a
      // listener that second 'error' is an uncaught exception and takes the whole process down.
      stream.on('error', (err: Error) => {
        failed = true;
        fail(`the multipart body is malformed: ${err.message}`, name);
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const type = /^[a-z]+\/[A-Za-z0-9.+-]+$/.test(info.mimeType) ? info.mimeType : 'application/octet-stream';
        put(name, `data:${type};base64,${Buffer.concat(chunks).toString('base64')}`);
      });
    });
    bb.on('filesLimit', () => {
      failed = true;
      fail(`a multipart body may carry at most ${maxFiles} files`);
    });
    bb.on('partsLimit', () => {
      failed = true;
      fail(`a multipart body may carry at most ${maxFiles + MAX_FIELDS} parts`);
    });
    bb.on('fieldsLimit', () => {
      failed = true;
      fail(`a multipart body may carry at most ${MAX_FIELDS} fields`);
    });
    bb.on('error', (err: Error) => {
      failed = true;
      fail(`the multipart body is malformed: ${err.message}`);
    });
    bb.on('close', () => {
      if (!failed) resolve(out);
    });
    bb.end(raw);
  });
}
