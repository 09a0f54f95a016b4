/**
 * Broken multipart/form-data bodies: a fixed list of the ways a body can be cut, malformed or
 * oversized (each one named, for the unit tests and the hostile-body tests of every multipart
 * route), and random mutations of a valid body for the fuzzer.
 */
import fc from 'fast-check';

/** One multipart body as sent: its Content-Type header and its bytes. */
export interface MultipartCase {
  readonly name: string;
  readonly contentType: string;
  readonly body: Buffer;
}

const B = 'XB';
const CT = `multipart/form-data; boundary=${B}`;
const filePart = (name: string, data: string, type = 'image/png') =>
  `--${B}\r\ncontent-disposition: form-data; name="${name}"; filename="a.png"\r\ncontent-type: ${type}\r\n\r\n${data}`;
const fieldPart = (name: string, value: string) => `--${B}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}`;
const END = `\r\n--${B}--\r\n`;

/** A complete, valid body with a prompt, a model and one file (`model` as the route needs). */
export function validMultipart(model: string, fileField = 'image'): string {
  return `${fieldPart('model', model)}\r\n${fieldPart('prompt', 'a lighthouse')}\r\n${filePart(fileField, 'PNGDATA')}${END}`;
}

/** The named broken bodies; `maxBytes` is the route's body limit (for the oversized ones). */
export function multipartCases(model: string): MultipartCase[] {
  const c = (name: string, body: string | Buffer, contentType = CT): MultipartCase => ({
    name,
    contentType,
    body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'),
  });
  const valid = validMultipart(model);
  return [
    // The body of the issue: it ends inside a file part, without a closing boundary.
    c('ends inside a file part', filePart('image', 'PNGDATA')),
    c('ends inside a file part after a field', `${fieldPart('model', model)}\r\n${filePart('image', 'PNG')}`),
    c('ends inside a text field', fieldPart('prompt', 'a lighth')),
    c('ends inside part headers', `--${B}\r\ncontent-disposition: form-data; name="ima`),
    c('ends inside a boundary', `${fieldPart('model', model)}\r\n--X`),
    c('ends right after the first boundary', `--${B}`),
    c('cut in half', valid.slice(0, Math.floor(valid.length / 2))),
    c('cut one byte short', valid.slice(0, -1)),
    c('only the closing boundary', `--${B}--\r\n`),
    c('empty', ''),
    c('only a preamble', 'hello there, no parts at all'),
    c('boundary not in the body', valid, 'multipart/form-data; boundary=NOTTHERE'),
    c('no boundary parameter', valid, 'multipart/form-data'),
    c('empty boundary parameter', valid, 'multipart/form-data; boundary='),
    c('boundary over 70 characters', valid.replaceAll(B, 'Q'.repeat(200)), `multipart/form-data; boundary=${'Q'.repeat(200)}`),
    c('LF line ends only', valid.replaceAll('\r\n', '\n')),
    c('a part without content-disposition', `--${B}\r\ncontent-type: text/plain\r\n\r\nhello${END}`),
    // Found by the fuzzer: a nameless file part that ends the body crashed the error handler itself.
    c('a nameless file part, cut off', `--${B}\r\ncontent-disposition: form-data; filename="a.png"\r\ncontent-type: image/png\r\n\r\nPNG`),
    c('a nameless file part', `--${B}\r\ncontent-disposition: form-data; filename="a.png"\r\n\r\nPNG${END}`),
    c('a nameless field', `--${B}\r\ncontent-disposition: form-data\r\n\r\nhello${END}`),
    c(
      'a nameless field in a charset busboy cannot read',
      `--${B}\r\ncontent-disposition: form-data\r\ncontent-type: text/plain; charset=x-unknown-42\r\n\r\nhi${END}`,
    ),
    c('a part header without a colon', `--${B}\r\nthis is not a header\r\n\r\nhello${END}`),
    c('part headers of 100 kB', `--${B}\r\ncontent-disposition: form-data; name="prompt"\r\nx-pad: ${'p'.repeat(100_000)}\r\n\r\nhello${END}`),
    c('a field name of 10 kB', `${fieldPart('n'.repeat(10_000), 'v')}${END}`),
    c(
      'prototype field names',
      `${fieldPart('__proto__', '{"polluted":true}')}\r\n${fieldPart('constructor[prototype]', 'x')}\r\n${fieldPart('metadata[__proto__]', 'x')}\r\n${fieldPart('model', model)}${END}`,
    ),
    c(
      'a field in a charset busboy cannot read',
      `--${B}\r\ncontent-disposition: form-data; name="prompt"\r\ncontent-type: text/plain; charset=x-unknown-42\r\n\r\nhi${END}`,
    ),
    c('a field of deeply nested JSON', `${fieldPart('model', model)}\r\n${fieldPart('metadata', '{"a":'.repeat(5000) + '1' + '}'.repeat(5000))}${END}`),
    c('a field of broken JSON', `${fieldPart('model', model)}\r\n${fieldPart('metadata', '{"a":')}${END}`),
    c('500 parts', `${Array.from({ length: 500 }, (_, i) => fieldPart(`f${i}`, 'v')).join('\r\n')}${END}`),
    c('50 files', `${Array.from({ length: 50 }, () => filePart('image', 'PNG')).join('\r\n')}${END}`),
    c(
      'nested multipart/mixed',
      `--${B}\r\ncontent-disposition: form-data; name="image"\r\ncontent-type: multipart/mixed; boundary=IN\r\n\r\n--IN\r\ncontent-disposition: file; filename="a.png"\r\n\r\nPNG\r\n--IN--${END}`,
    ),
    c(
      'NUL bytes and high bytes',
      Buffer.concat([Buffer.from(`--${B}\r\ncontent-disposition: form-data; name="prompt"\r\n\r\n`), Buffer.from([0, 0xff, 0xfe, 0, 0x80]), Buffer.from(END)]),
    ),
    c('random bytes', Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7919 + 13) % 256))),
    c('JSON sent as multipart', JSON.stringify({ model, prompt: 'x' })),
  ];
}

/**
 * Random damage to a valid body: cut at any byte, bytes flipped or inserted, the boundary changed,
 * CRLFs dropped. For the fuzzer; every result must be answered 4xx (or 200) and never hurt the process.
 */
export function brokenMultipartArb(model: string): fc.Arbitrary<MultipartCase> {
  const valid = Buffer.from(validMultipart(model), 'latin1');
  const cut = fc.integer({ min: 0, max: valid.length }).map((n) => ({ name: `cut at ${n}`, contentType: CT, body: valid.subarray(0, n) }));
  const flip = fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }).map((edits) => {
    const body = Buffer.from(valid);
    for (const [at, byte] of edits) body[at] = byte;
    return { name: `bytes changed at ${edits.map((e) => e[0]).join(',')}`, contentType: CT, body };
  });
  const insert = fc.tuple(fc.nat(valid.length), fc.uint8Array({ minLength: 1, maxLength: 64 })).map(([at, bytes]) => ({
    name: `${bytes.length} bytes inserted at ${at}`,
    contentType: CT,
    body: Buffer.concat([valid.subarray(0, at), Buffer.from(bytes), valid.subarray(at)]),
  }));
  const boundary = fc
    .string({ maxLength: 90 })
    .map((b) => ({ name: `boundary ${JSON.stringify(b.slice(0, 20))}`, contentType: `multipart/form-data; boundary=${b}`, body: valid }));
  const named = fc.constantFrom(...multipartCases(model));
  return fc.oneof(cut, flip, insert, boundary, named);
}
