/**
 * The `image` keyword (src/schema/image-keyword.ts) as every compiler of the project has it (the
 * ajv of src/schema/ajv.ts): section 8's bounds, each refusal's words through describeError, URLs
 * passed unread, rules that contradict themselves refused when the schema compiles, and the words
 * of the catalogue.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAjv } from '../../src/schema/ajv.js';
import { describeError, dottedPath } from '../../src/schema/describe-error.js';
import { describeImageRule, type ImageRule } from '../../src/schema/image-keyword.js';
import { makePng } from '../../src/sim/png.js';
import { dataUri, makeJpeg, makeWebpExtended, makeWebpLossless, makeWebpLossy } from '../helpers/images.js';

const SECTION_8: ImageRule = { min_width: 128, min_height: 128, min_aspect: '1:4', max_aspect: '4:1', max_bytes: '50mb', formats: ['png', 'jpeg', 'webp'] };

/** The refusal of `images` by a schema whose items carry `rule`, as a client reads it; null when accepted. */
function refusal(rule: ImageRule, images: unknown[]): { message: string; param: string } | null {
  const validate = createAjv({ allErrors: false }).compile({ type: 'object', properties: { images: { type: 'array', items: { image: rule } } } });
  if (validate({ images })) return null;
  const problem = describeError(validate.errors![0]!, 'body');
  return { message: problem.message, param: dottedPath(problem.path) };
}

const png = (w: number, h: number) => dataUri('image/png', makePng(w, h));

describe('the image keyword', () => {
  test('section 8: at least 128x128, naming the field and the index', () => {
    assert.deepEqual(refusal(SECTION_8, [png(128, 128), png(64, 64)]), {
      message: 'images[1]: the image is 64x64; at least 128x128 is required',
      param: 'images[1]',
    });
    assert.deepEqual(refusal(SECTION_8, [png(127, 300)])?.message, 'images[0]: the image is 127x300; at least 128x128 is required');
    assert.equal(refusal(SECTION_8, [png(128, 128)]), null);
  });

  test('section 8: aspect ratio within 1:4 to 4:1, the edges included', () => {
    assert.equal(refusal(SECTION_8, [png(640, 128)])?.message, 'images[0]: the image is 640x128, an aspect ratio of 5:1; it must be between 1:4 and 4:1');
    assert.equal(refusal(SECTION_8, [png(128, 513)])?.message, 'images[0]: the image is 128x513, an aspect ratio of 128:513; it must be between 1:4 and 4:1');
    assert.equal(refusal(SECTION_8, [png(512, 128), png(128, 512)]), null);
    assert.equal(refusal({ max_aspect: 1.5 }, [png(300, 200)]), null);
    assert.equal(
      refusal({ max_aspect: 1.5 }, [png(301, 200)])?.message,
      'images[0]: the image is 301x200, an aspect ratio of 301:200; it must be at most 1.5:1',
    );
    assert.equal(refusal({ min_aspect: 0.5625 }, [png(9, 16)]), null, 'a decimal ratio at its edge passes');
  });

  test('JPEG and WebP are read as PNG is, bare base64 as data URIs', () => {
    assert.equal(refusal(SECTION_8, [dataUri('image/jpeg', makeJpeg(100, 100))])?.message, 'images[0]: the image is 100x100; at least 128x128 is required');
    assert.equal(
      refusal(SECTION_8, [makeJpeg(1000, 200).toString('base64')])?.message,
      'images[0]: the image is 1000x200, an aspect ratio of 5:1; it must be between 1:4 and 4:1',
    );
    assert.equal(refusal(SECTION_8, [dataUri('image/webp', makeWebpLossy(64, 64))])?.message, 'images[0]: the image is 64x64; at least 128x128 is required');
    assert.equal(
      refusal(SECTION_8, [dataUri('image/webp', makeWebpLossless(128, 1000))])?.message,
      'images[0]: the image is 128x1000, an aspect ratio of 16:125; it must be between 1:4 and 4:1',
    );
    assert.equal(refusal(SECTION_8, [dataUri('image/jpeg', makeJpeg(1920, 1080)), makeWebpExtended(300, 300).toString('base64')]), null);
  });

  test('maximum sizes, bytes and formats', () => {
    assert.equal(refusal({ max_width: 1024, max_height: 1024 }, [png(1025, 10)])?.message, 'images[0]: the image is 1025x10; at most 1024x1024 is allowed');
    assert.equal(refusal({ min_width: 100 }, [png(99, 1)])?.message, 'images[0]: the image is 99x1; at least 100 pixels wide is required');
    const big = makePng(300, 300, 5);
    assert.ok(big.length > 1024);
    assert.match(refusal({ max_bytes: '1kb' }, [dataUri('image/png', big)])!.message, /^images\[0\]: the image is [0-9.]+ KB; at most 1 KB is allowed$/);
    assert.equal(refusal({ max_bytes: big.length }, [dataUri('image/png', big)]), null, 'the size is counted from the base64, exactly');
    assert.equal(refusal({ formats: ['png'] }, [dataUri('image/jpeg', makeJpeg(200, 200))])?.message, 'images[0]: the image is a JPEG; only PNG is accepted');
    assert.equal(
      refusal({ formats: ['png', 'jpg'] }, [dataUri('image/webp', makeWebpLossy(200, 200))])?.message,
      'images[0]: the image is a WebP; only PNG or JPEG is accepted',
    );
  });

  test('what is not an image is refused in words; a URL is never read, other types are left to `type`', () => {
    assert.equal(
      refusal(SECTION_8, ['data:image/gif;base64,R0lGODlhAQABAAAAACw='])?.message,
      'images[0]: the image is not a PNG, JPEG or WebP (its header could not be read)',
    );
    assert.equal(
      refusal(SECTION_8, ['a cat'])?.message,
      'images[0]: the image must be an http(s) URL, a data:image/<type>;base64,… URI or bare base64; this is not base64',
    );
    assert.equal(
      refusal(SECTION_8, ['data:image/png,rawbytes'])?.message,
      'images[0]: the image must be an http(s) URL, a data:image/<type>;base64,… URI or bare base64; this is a data URI that is not base64',
    );
    assert.equal(refusal(SECTION_8, ['https://img.example/64x64.png', 'http://127.0.0.1:1/tiny.png', 7, null, { url: 'x' }]), null);
  });

  test('a rule that is not one, or contradicts itself, does not compile', () => {
    const compile = (rule: unknown) => () => createAjv({ allErrors: false }).compile({ image: rule });
    assert.throws(compile({ min_widht: 128 }), /image: unknown field min_widht \(it takes min_width, /);
    assert.throws(compile({}), /image/);
    assert.throws(compile({ max_bytes: '50 MB' }), /image/);
    assert.throws(compile({ formats: ['gif'] }), /image/);
    assert.throws(compile({ min_width: 200, max_width: 100 }), /min_width is above max_width/);
    assert.throws(compile({ min_aspect: '4:1', max_aspect: '1:4' }), /min_aspect is above max_aspect/);
    assert.throws(compile({ min_aspect: '0:1' }), /both sides above 0/);
    assert.doesNotThrow(compile(SECTION_8));
  });

  test("the catalogue's words for a rule", () => {
    assert.equal(describeImageRule(SECTION_8), '128x128 or more, aspect 1:4 to 4:1, at most 50 MB; PNG, JPEG, WebP');
    assert.equal(
      describeImageRule({ min_width: 64, min_height: 64, max_width: 4096, max_height: 4096, min_aspect: 0.25 }),
      '64x64 to 4096x4096, aspect at least 1:4; PNG, JPEG, WebP',
    );
    assert.equal(describeImageRule({ formats: ['jpg'] }), 'JPEG');
  });
});
