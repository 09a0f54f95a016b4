/**
 * The body budget's accounting, with stand-ins for the request and the response: a declared body
 * is reserved up front and refused whole when it does not fit, a chunked one grows as it arrives,
 * and every reservation is given back exactly once when the answer closes.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { test } from 'node:test';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { BodyBudget, defaultBodyBudget } from '../../src/http/body-budget.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const res = (destroyed = false) => Object.assign(new EventEmitter(), { destroyed }) as unknown as ServerResponse;
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof GatewayError ? err.code : String(err);
  }
};

test('declared bodies are reserved before reading, refused 503 when they do not fit, given back when the answer closes', () => {
  const budget = new BodyBudget(100);
  const a = res();
  const b = res();
  budget.admit(req({ 'content-length': '60' }), a, 1000);
  budget.admit(req({ 'content-length': '40' }), b, 1000);
  assert.equal(budget.held, 100);
  assert.equal(
    codeOf(() => budget.admit(req({ 'content-length': '1' }), res(), 1000)),
    'server_busy',
  );
  a.emit('close');
  a.emit('close');
  assert.equal(budget.held, 40, 'given back once');
  budget.admit(req({ 'content-length': '60' }), res(), 1000);
  assert.equal(budget.held, 100);
  assert.equal(budget.peak, 100);
});

test('a declared body over the whole budget is 413 (it could never fit); over the route limit it is left to the reader', () => {
  const budget = new BodyBudget(100);
  assert.equal(
    codeOf(() => budget.admit(req({ 'content-length': '101' }), res(), 1000)),
    'payload_too_large',
  );
  // Over the route's own limit: readBody answers 413 without reading; nothing is reserved.
  budget.admit(req({ 'content-length': '5000' }), res(), 1000);
  assert.equal(budget.held, 0);
});

test('a chunked body is reserved as it arrives; outgrowing the room is refused, and what it held goes back on close', () => {
  const budget = new BodyBudget(100);
  budget.admit(req({ 'content-length': '70' }), res(), 1000);
  const r = res();
  const admission = budget.admit(req({ 'transfer-encoding': 'chunked' }), r, 1000);
  assert.equal(budget.held, 70, 'nothing reserved before a byte arrives');
  assert.equal(admission.cover(20), null);
  assert.equal(budget.held, 90);
  assert.equal(admission.cover(31)?.code, 'server_busy');
  assert.equal(budget.held, 90, 'a refused growth reserves nothing');
  r.emit('close');
  assert.equal(budget.held, 70);
  assert.equal(admission.cover(50), null, 'after the answer, nothing more is held');
  assert.equal(budget.held, 70);
});

test('an answer already closed reserves nothing; a request without a body reserves nothing', () => {
  const budget = new BodyBudget(100);
  budget.admit(req({ 'content-length': '50' }), res(true), 1000).cover(50);
  budget.admit(req({}), res(), 1000);
  assert.equal(budget.held, 0);
});

test('the default budget is a share of the heap limit', () => {
  const n = defaultBodyBudget();
  assert.ok(n > 10 * 1024 * 1024 && Number.isSafeInteger(n), String(n));
});
