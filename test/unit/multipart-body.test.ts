import assert from 'node:assert/strict';
import { test } from 'node:test';
import busboy from 'busboy';
import { encodeMultipart } from '../../src/upstream/multipart-body.js';

/** Parses what encodeMultipart made with busboy, as a vendor would. */
async function parse(body: Buffer, contentType: string) {
  const parts: { name: string; value?: string; filename?: string; type?: string; bytes?: Buffer }[] = [];
  await new Promise<void>((resolve, reject) => {
    const bb = busboy({ headers: { 'content-type': contentType } });
    bb.on('field', (name, value) => parts.push({ name, value }));
    bb.on('file', (name, stream, info) => {
      // Kept in wire order: the part is listed when it starts, its bytes filled in when it ends.
      const part: (typeof parts)[number] = { name, filename: info.filename, type: info.mimeType };
      parts.push(part);
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => (part.bytes = Buffer.concat(chunks)));
    });
    bb.on('close', resolve);
    bb.on('error', reject);
    bb.end(body);
  });
  return parts;
}

test('multipart encoding: text parts, data URIs as files, arrays repeated, nulls left out', async () => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
  const { body, contentType } = encodeMultipart({
    prompt: 'a cat',
    n: 2,
    flag: true,
    options: { a: 1 },
    'image[]': [`data:image/png;base64,${png.toString('base64')}`, 'https://example.test/x.png'],
    mask: null,
    gone: undefined,
  });
  assert.match(contentType, /^multipart\/form-data; boundary=----gateway[0-9a-f]{24}$/);
  const parts = await parse(body, contentType);
  assert.deepEqual(
    parts.map((p) => [p.name, p.value ?? p.filename, p.type ?? null]),
    [
      ['prompt', 'a cat', null],
      ['n', '2', null],
      ['flag', 'true', null],
      ['options', '{"a":1}', null],
      ['image[]', 'image-1.png', 'image/png'],
      ['image[]', 'https://example.test/x.png', null],
    ],
  );
  assert.ok(parts[4]!.bytes!.equals(png), 'the file part carries the decoded bytes');
});

test('multipart encoding refuses a mapping that gives no object', () => {
  assert.throws(() => encodeMultipart(['a']), /must give an object/);
  assert.throws(() => encodeMultipart('x'), /must give an object/);
});
