import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compilePathTemplate } from '../../src/config/path-template.js';

test('a parameter followed by a literal suffix in one segment', () => {
  const m = compilePathTemplate('/v1beta/models/{model}:generateContent');
  assert.deepEqual(m.match('/v1beta/models/alpha-3-pro-image-preview:generateContent'), { model: 'alpha-3-pro-image-preview' });
  assert.deepEqual(m.match('/v1beta/models/a%3Ab:generateContent'), { model: 'a:b' });
  assert.equal(m.match('/v1beta/models/x:generateContentX'), null);
  assert.equal(m.match('/v1beta/models/a/b:generateContent'), null, 'a parameter never spans a slash');
  assert.equal(m.match('/v1beta/models/:generateContent'), null, 'a parameter is never empty');
});

test('several parameters and plain segments', () => {
  const m = compilePathTemplate('/v1/videos/{task_id}/content');
  assert.deepEqual(m.params, ['task_id']);
  assert.deepEqual(m.match('/v1/videos/abc/content'), { task_id: 'abc' });
  assert.equal(m.match('/v1/videos/abc'), null);
  assert.equal(compilePathTemplate('/a.b').match('/aXb'), null, 'literal dots are not wildcards');
});

test('bad templates and bad escapes are refused', () => {
  assert.throws(() => compilePathTemplate('/a/{x'), /unbalanced/);
  assert.throws(() => compilePathTemplate('/a/{x}/{x}'), /twice/);
  assert.throws(() => compilePathTemplate('/v1/videos/{id}').match('/v1/videos/%E0%A4%A'), URIError);
});

test('error.param paths quote keys that are not plain names', async () => {
  const { dottedPath } = await import('../../src/schema/describe-error.js');
  assert.equal(dottedPath(['contents', 0, 'parts', 1, 'inlineData', 'data']), 'contents[0].parts[1].inlineData.data');
  assert.equal(dottedPath(['']), '[""]');
  assert.equal(dottedPath(['generationConfig', '']), 'generationConfig[""]');
  assert.equal(dottedPath(['labels', 'a.b']), 'labels["a.b"]');
  assert.equal(dottedPath(['x-y']), 'x-y');
});
