import assert from 'node:assert/strict';
import type { APIError } from 'openai';
import type OpenAI from 'openai';

/**
 * The fields the `openai` package's types require of the answers it parses (6.49.0:
 * resources/images.d.ts, resources/videos.d.ts). The package does not check them at run time, so a
 * contract test must: an answer without a required field type-checks in the client's code and
 * fails there, at the first read.
 */

/** Every key of `keys` is present on `value` (its own property; null counts when the type allows it). */
export function hasKeys(value: unknown, keys: readonly string[], what: string): void {
  assert.ok(value !== null && typeof value === 'object', `${what} is an object: ${JSON.stringify(value)}`);
  const missing = keys.filter((k) => !Object.hasOwn(value, k));
  assert.deepEqual(missing, [], `${what} lacks required field(s) ${missing.join(', ')}: ${JSON.stringify(value).slice(0, 400)}`);
}

/** `Video`: every field is required (nullable ones are present as null). */
export function assertVideo(v: OpenAI.Videos.Video): void {
  hasKeys(
    v,
    ['id', 'completed_at', 'created_at', 'error', 'expires_at', 'model', 'object', 'progress', 'prompt', 'remixed_from_video_id', 'seconds', 'size', 'status'],
    'Video',
  );
  assert.equal(v.object, 'video');
  assert.equal(typeof v.id, 'string');
  assert.equal(typeof v.created_at, 'number');
  assert.equal(typeof v.progress, 'number');
  assert.equal(typeof v.model, 'string');
  assert.equal(typeof v.seconds, 'string', 'seconds is a string');
  assert.ok(['720x1280', '1280x720', '1024x1792', '1792x1024'].includes(v.size), `size ${v.size} is a VideoSize`);
  assert.ok(['queued', 'in_progress', 'completed', 'failed'].includes(v.status), v.status);
  for (const k of ['completed_at', 'expires_at'] as const) assert.ok(v[k] === null || typeof v[k] === 'number', `${k}: ${v[k]}`);
  if (v.error !== null) hasKeys(v.error, ['code', 'message'], 'VideoCreateError');
}

/** `ImagesResponse`: `created`; each image has url or b64_json; `usage`, when given, with its required details. */
export function assertImages(r: OpenAI.ImagesResponse, n: number): void {
  hasKeys(r, ['created'], 'ImagesResponse');
  assert.equal(typeof r.created, 'number');
  assert.equal(r.data?.length, n, `${n} image(s)`);
  for (const img of r.data ?? []) assert.ok(typeof img.url === 'string' || typeof img.b64_json === 'string', JSON.stringify(img).slice(0, 200));
  if (r.usage !== undefined) assertUsage(r.usage);
}

/** `ImagesResponse.Usage`: input_tokens, input_tokens_details {image_tokens, text_tokens}, output_tokens, total_tokens. */
export function assertUsage(u: OpenAI.ImagesResponse.Usage): void {
  hasKeys(u, ['input_tokens', 'input_tokens_details', 'output_tokens', 'total_tokens'], 'ImagesResponse.Usage');
  hasKeys(u.input_tokens_details, ['image_tokens', 'text_tokens'], 'ImagesResponse.Usage.input_tokens_details');
  for (const n of [u.input_tokens, u.output_tokens, u.total_tokens, u.input_tokens_details.image_tokens, u.input_tokens_details.text_tokens])
    assert.equal(typeof n, 'number');
  assert.equal(u.input_tokens, u.input_tokens_details.image_tokens + u.input_tokens_details.text_tokens, 'the details add up to input_tokens');
  assert.equal(u.total_tokens, u.input_tokens + u.output_tokens);
}

/** The error a call fails with, which must be an `APIError` of class `cls`; fails the test when the call succeeds. */
export async function failsWith<T extends APIError>(call: Promise<unknown>, cls: new (...args: never[]) => T): Promise<T> {
  const err = await call.then(
    (v) => assert.fail(`expected ${cls.name}, got ${JSON.stringify(v)?.slice(0, 300)}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof cls, `expected ${cls.name}, got ${String(err)}`);
  return err as T;
}
