/**
 * The `media` keyword (src/schema/media-keyword.ts) and the count under it (src/schema/inline-media.ts):
 * a bound on the DECODED size of a base64 value, exact at the edge in every padding form, bare or
 * as a data URI; a value that is not base64 refused as such (white space and line breaks included,
 * anywhere in the text); URLs and other types passed; the rule's words for the catalogue.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { createAjv } from '../../src/schema/ajv.js';
import { describeError, dottedPath } from '../../src/schema/describe-error.js';
import { inlineMedia } from '../../src/schema/inline-media.js';
import { describeMediaRule, type MediaRule } from '../../src/schema/media-keyword.js';

const ajv = createAjv({ allErrors: false });
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

/** The refusal of `{video: value}` by a schema whose `video` carries the rule, as a client reads it; null when accepted. */
function refusal(rule: MediaRule, value: unknown): { message: string; param: string } | null {
  const key = JSON.stringify(rule);
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = ajv.compile({ type: 'object', properties: { video: { media: rule } } })));
  if (validate({ video: value })) return null;
  const problem = describeError(validate.errors![0]!, 'body');
  return { message: problem.message, param: dottedPath(problem.path) };
}

/** The three ways a client may write `bytes`: padded, unpadded, as a data URI. */
function forms(bytes: Buffer): Record<string, string> {
  const padded = bytes.toString('base64');
  return { padded, unpadded: padded.replace(/=+$/, ''), 'data URI': `data:video/mp4;base64,${padded}` };
}

describe('the media keyword', () => {
  test('the bound is on decoded bytes, exactly, whatever the padding (=, ==, none) and with or without a data URI', () => {
    // Limits of each remainder mod 3, so the value at the limit ends in each padding form.
    for (const limit of [9, 10, 11]) {
      for (const [form, value] of Object.entries(forms(randomBytes(limit)))) {
        assert.equal(refusal({ max_bytes: limit }, value), null, `${limit} bytes, ${form}, at a limit of ${limit}`);
      }
      for (const [form, value] of Object.entries(forms(randomBytes(limit + 1)))) {
        assert.deepEqual(
          refusal({ max_bytes: limit }, value),
          { message: `video decodes to ${limit + 1} bytes; at most ${limit} bytes are allowed`, param: 'video' },
          `${limit + 1} bytes, ${form}, at a limit of ${limit}`,
        );
      }
    }
  });

  test('15mb is 15 MiB: 15,728,640 decoded bytes pass (20,971,520 characters), one byte more is refused', () => {
    const MiB15 = 15 * 1024 * 1024;
    const edge = Buffer.alloc(MiB15, 0x5a).toString('base64');
    assert.equal(edge.length, 20_971_520);
    assert.equal(refusal({ max_bytes: '15mb' }, `data:video/mp4;base64,${edge}`), null);
    assert.equal(refusal({ max_bytes: '15mb' }, edge), null);
    // The finding of issue 26: 15 MiB + 60 bytes as bare base64 fitted the old bound of 20,971,600 characters.
    const over = Buffer.alloc(MiB15 + 60, 0x5a).toString('base64');
    assert.equal(over.length, 20_971_600, 'the value the old character bound let through');
    assert.equal(refusal({ max_bytes: '15mb' }, over)?.message, 'video decodes to 15,728,700 bytes; at most 15,728,640 bytes (15 MB) are allowed');
    const oneMore = Buffer.alloc(MiB15 + 1, 0x5a).toString('base64');
    assert.equal(refusal({ max_bytes: '15mb' }, oneMore)?.message, 'video decodes to 15,728,641 bytes; at most 15,728,640 bytes (15 MB) are allowed');
  });

  test('the count agrees with a decoder for every length and padding form', () => {
    for (let n = 1; n <= 40; n++) {
      const bytes = randomBytes(n);
      for (const [form, value] of Object.entries(forms(bytes))) {
        const media = inlineMedia(value, 'whole');
        assert.equal(media.kind, 'base64', `${n} bytes, ${form}`);
        if (media.kind === 'base64') {
          assert.equal(media.size, n, `${n} bytes, ${form}`);
          assert.ok(Buffer.from(value.slice(media.start, media.end), 'base64').equals(bytes), `${n} bytes, ${form}: start and end frame the data`);
        }
      }
    }
    const withParams = inlineMedia('data:video/mp4;name=clip.mp4;BASE64,AAAA', 'whole');
    assert.deepEqual(withParams, { kind: 'base64', start: 36, end: 40, size: 3 }, 'parameters in the data URI, base64 in capitals');
  });

  test('what is not base64 is refused as such, with where, also past the first kilobyte', () => {
    const why = (value: string) =>
      refusal({ max_bytes: '15mb' }, value)?.message.replace(/^video must be an http\(s\) URL, a data:<type>;base64,… URI or bare base64; this /, '');
    assert.equal(why('QUJD\nREVG'), 'is not base64 (a line break at character 5)');
    assert.equal(why('QUJD\r\nREVG'), 'is not base64 (a line break at character 5)');
    assert.equal(why('QUJD REVG'), 'is not base64 (white space at character 5)');
    assert.equal(why(`data:video/mp4;base64,${'A'.repeat(4000)}\nAAA`), 'is a data URI whose data is not base64 (a line break at character 4001)');
    assert.equal(why(`${'A'.repeat(100_000)}*AAA`), 'is not base64 ("*" at character 100001)');
    assert.equal(why('QU-_'), 'is not base64 ("-" at character 3)', 'the URL-safe alphabet is not standard base64');
    assert.equal(why('QQ==QQ=='), 'is not base64 ("=" at character 3)', 'padding in the middle');
    assert.equal(why('QUJD==='), 'is not base64 ("=" at character 5)', 'three padding characters');
    assert.equal(why('QUJDR'), 'is not base64 (its length, 5 characters, is not one base64 can have)');
    assert.equal(why('QUJDRQ='), 'is not base64 (its length, 7 characters, is not one base64 can have)', 'padding that does not complete a group of four');
    assert.equal(why('QQ='), 'is not base64 (its length, 3 characters, is not one base64 can have)');
    assert.equal(why('=='), 'is not base64 (it is empty)');
    assert.equal(why(''), 'is not base64 (it is empty)');
    assert.equal(why('data:video/mp4;base64,'), 'is a data URI whose data is not base64 (it is empty)');
    assert.equal(why('data:video/mp4,rawbytes'), 'is a data URI that is not base64');
    assert.equal(why(`data:video/mp4;base64${'A'.repeat(300)}`), 'is a data URI without its data');
    assert.equal(why('ftp://vid.example/clip.mp4'), 'is not base64 (":" at character 4)');
    assert.equal(why('asset://asset-1'), 'is not base64 (":" at character 6)');
  });

  test('an http(s) URL passes unread, however long; other types are left to `type`', () => {
    for (const url of ['https://vid.example/clip.mp4', 'http://127.0.0.1:1/clip.mp4', 'HTTPS://VID.EXAMPLE/A.MP4', `https://vid.example/${'a'.repeat(100)}`]) {
      assert.equal(refusal({ max_bytes: 1 }, url), null, url);
    }
    for (const other of [7, null, true, { url: 'x' }, ['QUJD']]) assert.equal(refusal({ max_bytes: 1 }, other), null, JSON.stringify(other));
  });

  test('a rule that is not one does not compile, naming what is wrong', () => {
    const compile = (rule: unknown) => () => createAjv({ allErrors: false }).compile({ media: rule });
    assert.throws(compile({ max_bytes: '15mb', max_byte: 1 }), /media: unknown field max_byte \(it takes max_bytes\)/);
    assert.throws(compile({}), /media/);
    assert.throws(compile({ max_bytes: '15 MB' }), /media/);
    assert.throws(compile({ max_bytes: 0 }), /media/);
    assert.throws(compile('15mb'), /media/);
    assert.doesNotThrow(compile({ max_bytes: '15mb' }));
    assert.doesNotThrow(compile({ max_bytes: 15_000_000 }));
  });

  test("the catalogue's words for a rule give the exact count beside the binary unit", () => {
    assert.equal(describeMediaRule({ max_bytes: '15mb' }), 'at most 15 MB decoded (15,728,640 bytes)');
    assert.equal(describeMediaRule({ max_bytes: '50mb' }), 'at most 50 MB decoded (52,428,800 bytes)');
    assert.equal(describeMediaRule({ max_bytes: 15_000_000 }), 'at most 14.31 MB decoded (15,000,000 bytes)');
    assert.equal(describeMediaRule({ max_bytes: 10 }), 'at most 10 bytes decoded');
  });
});
