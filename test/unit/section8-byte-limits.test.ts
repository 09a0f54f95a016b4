/**
 * Interface.md section 8's byte sizes as the shipped config says them (routes.yaml, routes.d/),
 * checked on the compiled family limits: each counts DECODED bytes, exactly at its edge (issue 26:
 * the omni-fast-v2v reference video was bounded in characters of base64). Values here are too large
 * for the routes' body limits where a 50 MB image is concerned, so the limits are called directly;
 * test/e2e/omni.test.ts sends the 15 MB video through the route.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { ValidateFunction } from 'ajv';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { familyOf } from '../../src/config/lookups.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import { describeError, dottedPath } from '../../src/schema/describe-error.js';
import { makePng } from '../../src/sim/png.js';

const MiB = 1024 * 1024;

/** Base64 of `n` zero bytes, built as text (no buffer of `n` bytes): `A` is six zero bits. */
function zeros(n: number): string {
  const tail = ['', 'AA==', 'AAA='][n % 3]!;
  return 'A'.repeat(Math.floor(n / 3) * 4) + tail;
}

/** Base64 of a 300x300 PNG followed by zero bytes, `n` bytes in all: an image whose header reads, of any size. */
function pngOfSize(n: number): string {
  const png = makePng(300, 300);
  // A head of whole groups of three, so its base64 and the zeros' join without padding between.
  const head = Buffer.concat([png, Buffer.alloc((3 - (png.length % 3)) % 3)]);
  return head.toString('base64') + zeros(n - head.length);
}

/** What the validator says of `body`: null when it passes, else the first refusal's field and keyword. */
function verdict(validate: ValidateFunction, body: unknown): { param: string; keyword: string; rule: unknown } | null {
  if (validate(body)) return null;
  const e = validate.errors![0]!;
  return { param: dottedPath(describeError(e, 'body').path), keyword: e.keyword, rule: (e.params as { rule?: unknown }).rule };
}

describe('section 8 byte sizes count decoded bytes', () => {
  let snapshot: Snapshot;
  before(() => {
    snapshot = loadConfigOrThrow(PROJECT_ROOT);
  });
  const family = (model: string) => familyOf(snapshot.families, model)!;

  test('omni-fast-v2v: a reference video of 15 MiB decoded passes under each of its names; one byte more is refused naming the field', () => {
    const limit = family('omni-fast-v2v').modelLimits.get('omni-fast-v2v')!;
    for (const field of ['video', 'video_url', 'input_video']) {
      assert.equal(verdict(limit, { model: 'omni-fast-v2v', [field]: `data:video/mp4;base64,${zeros(15 * MiB)}` }), null, `${field}: 15 MiB as a data URI`);
      assert.equal(verdict(limit, { model: 'omni-fast-v2v', [field]: zeros(15 * MiB) }), null, `${field}: 15 MiB bare`);
      assert.deepEqual(verdict(limit, { model: 'omni-fast-v2v', [field]: `data:video/mp4;base64,${zeros(15 * MiB + 1)}` }), {
        param: field,
        keyword: 'media',
        rule: 'max_bytes',
      });
      // Issue 26's value: 15 MiB + 60 bytes as bare base64, which the old bound of 20,971,600 characters let through.
      assert.deepEqual(verdict(limit, { model: 'omni-fast-v2v', [field]: zeros(15 * MiB + 60) }), { param: field, keyword: 'media', rule: 'max_bytes' });
      assert.equal(verdict(limit, { model: 'omni-fast-v2v', [field]: 'https://vid.example/clip.mp4' }), null, `${field}: a URL is not read`);
    }
  });

  test('omni: first_image_url and last_image_url at most 50 MiB decoded (image file size)', () => {
    const limits = family('omni-fast').limits!;
    for (const field of ['first_image_url', 'last_image_url']) {
      assert.equal(verdict(limits, { model: 'omni-fast', [field]: `data:image/png;base64,${pngOfSize(50 * MiB)}` }), null, `${field}: 50 MiB`);
      assert.deepEqual(verdict(limits, { model: 'omni-fast', [field]: `data:image/png;base64,${pngOfSize(50 * MiB + 1)}` }), {
        param: field,
        keyword: 'media',
        rule: 'max_bytes',
      });
    }
  });

  test("beta-prefixed: the image keyword's 50mb is 50 MiB decoded, exactly (image file size)", () => {
    const limits = family('beta-q3-pro').limits!;
    assert.equal(verdict(limits, { model: 'beta-q3-pro', image: `data:image/png;base64,${pngOfSize(50 * MiB)}` }), null, '50 MiB as a data URI');
    assert.equal(verdict(limits, { model: 'beta-q3-pro', images: [pngOfSize(50 * MiB)] }), null, '50 MiB bare');
    assert.deepEqual(verdict(limits, { model: 'beta-q3-pro', image: `data:image/png;base64,${pngOfSize(50 * MiB + 1)}` }), {
      param: 'image',
      keyword: 'image',
      rule: 'max_bytes',
    });
    assert.deepEqual(verdict(limits, { model: 'beta-q3-pro', images: [pngOfSize(50 * MiB + 2)] }), { param: 'images[0]', keyword: 'image', rule: 'max_bytes' });
  });

  test('no family limit bounds a string by a character count of a megabyte or more (a byte size said in characters of base64)', () => {
    const found: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) {
        node.forEach((n, i) => {
          walk(n, `${where}[${i}]`);
        });
      } else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === 'maxLength' && typeof v === 'number' && v >= MiB) found.push(`${where}: maxLength ${v}`);
          walk(v, `${where}.${k}`);
        }
      }
    };
    for (const f of snapshot.families) {
      walk(f.rawLimits, `${f.name} limits`);
      walk(f.rawModelLimits, `${f.name} model_limits`);
    }
    assert.deepEqual(found, [], 'bound decoded bytes with `media: {max_bytes}` or `image: {max_bytes}` instead');
  });
});
