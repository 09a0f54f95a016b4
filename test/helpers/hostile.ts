/**
 * Tools for hostile-input tests: a bounded HTTP client over node:http (so headers, methods and
 * bodies go out exactly as written), a raw-socket exchange for what node:http refuses to send, a
 * strict shape-A check against the error catalogue, and a JSON path toolkit for mutating bodies.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dottedPath } from '../../src/schema/describe-error.js';
import { Agent, request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { catalogue, isErrorCode } from '../../src/errors/catalogue.js';

/** A whole HTTP answer. */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** One request to send; the body goes out with a Content-Length unless `chunked`. */
export interface Call {
  readonly method?: string;
  readonly path: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string | Buffer | null;
  readonly timeoutMs?: number;
}

/** A client bound to one server: keep-alive, a few sockets, every request bounded in time. */
export class Client {
  readonly agent = new Agent({ keepAlive: true, maxSockets: 4 });
  /** 200 answers received so far, to compare with what the upstream saw. */
  ok = 0;

  constructor(
    readonly host: string,
    readonly port: number,
  ) {}

  send(call: Call): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: this.host, port: this.port, method: call.method ?? 'POST', path: call.path, headers: call.headers ?? {}, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            if (res.statusCode === 200) this.ok++;
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
          });
        },
      );
      req.setTimeout(call.timeoutMs ?? 10_000, () =>
        req.destroy(new Error(`no answer within ${call.timeoutMs ?? 10_000} ms: ${call.method ?? 'POST'} ${call.path.slice(0, 100)}`)),
      );
      req.on('error', reject);
      req.end(call.body ?? undefined);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * Sends a body in `chunkSize` pieces (chunked unless `headers` declare a Content-Length), waiting
 * for drain between pieces, and stops writing as soon as the answer arrives. Resolves with the
 * answer and how many body bytes had been handed to the socket by then. Errors after the answer
 * (the server closing a connection it refused) are expected and ignored.
 */
export function sendStreaming(
  host: string,
  port: number,
  path: string,
  headers: OutgoingHttpHeaders,
  totalBytes: number,
  chunkSize: number,
  timeoutMs: number,
  /** False: the body never ends, so only a refusal while it is still arriving can draw an answer. */
  endBody = true,
): Promise<{ answer: Answer; written: number }> {
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    // Keep-alive, as clients are by default: the gateway then drops an unread body after its answer
    // instead of closing at once (a close with unread data is a reset that can swallow the answer).
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const req = request({ host, port, method: 'POST', path, headers, agent });
    req.once('close', () => agent.destroy());
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms after ${written} bytes`));
    }, timeoutMs);
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const done = () => {
        clearTimeout(timer);
        resolve({ answer: { status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }, written });
        req.destroy();
      };
      res.on('end', done);
      res.on('error', done);
    });
    req.on('error', (err) => {
      if (answered) return;
      clearTimeout(timer);
      reject(new Error(`connection failed after ${written} bytes and before any answer: ${err.message}`));
    });
    const piece = Buffer.alloc(chunkSize, 0x20);
    const pump = () => {
      // One chunk per turn of the event loop: an answer that arrived meanwhile is seen before the
      // next write. Writing in a loop for as long as the socket took it (a fast local drain rarely
      // pushes back) kept the answer unread through megabytes, until the gateway's drain bound cut
      // the connection and the reset swallowed it (seen on Node 24 in CI).
      if (!answered && !req.destroyed && written < totalBytes) {
        const n = Math.min(chunkSize, totalBytes - written);
        written += n;
        if (req.write(n === chunkSize ? piece : piece.subarray(0, n))) setImmediate(pump);
        else req.once('drain', pump);
        return;
      }
      // With nothing to send the request stays open: only the declared length can draw an answer.
      if (endBody && totalBytes > 0 && !answered && !req.destroyed && written >= totalBytes) req.end();
    };
    req.flushHeaders();
    pump();
  });
}

/**
 * Writes raw bytes on a new connection and collects everything until the server closes it (or
 * `timeoutMs` passes). The request should carry `Connection: close`.
 */
export function rawExchange(host: string, port: number, bytes: string | Buffer, timeoutMs = 10_000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: false });
    }, timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: true });
    });
    socket.write(bytes);
  });
}

/** Splits a raw HTTP/1.1 answer into status and body (enough for one non-chunked answer). */
export function parseRaw(text: string): { status: number; body: string } | null {
  const m = /^HTTP\/1\.1 (\d{3}) [^\r\n]*\r\n/.exec(text);
  if (!m) return null;
  const end = text.indexOf('\r\n\r\n');
  return { status: Number(m[1]), body: end === -1 ? '' : text.slice(end + 4) };
}

/** The shape-A error of an answer, checked field by field against docs/spec/interface.md section 7 and the catalogue. */
export interface ShapeA {
  readonly message: string;
  readonly type: string;
  readonly param: string;
  readonly code: string;
}

/** Asserts a 4xx whose body is of shape A with a catalogue code of this very status; returns it. */
export function assertShapeA(status: number, text: string, context = ''): ShapeA {
  assert.ok(status >= 400 && status < 500, `expected a 4xx, got ${status}${context ? ` (${context})` : ''}: ${text.slice(0, 300)}`);
  return assertErrorBody(status, text, context);
}

/** Asserts an error body of shape A whose code is in the catalogue with this very status (4xx or 5xx); returns it. */
export function assertErrorBody(status: number, text: string, context = ''): ShapeA {
  const where = context ? ` (${context})` : '';
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    assert.fail(`a ${status} answer whose body is not JSON${where}: ${JSON.stringify(text.slice(0, 300))}`);
  }
  assert.ok(body !== null && typeof body === 'object' && !Array.isArray(body), `error body is not an object${where}: ${text.slice(0, 300)}`);
  assert.deepEqual(Object.keys(body as object), ['error'], `shape A has exactly one field, error${where}: ${text.slice(0, 300)}`);
  const e = (body as { error: Record<string, unknown> }).error;
  assert.deepEqual(Object.keys(e).sort(), ['code', 'message', 'param', 'type'], `fields of error${where}: ${text.slice(0, 300)}`);
  assert.equal(e.type, 'svc_api_error', `error.type${where}`);
  assert.equal(typeof e.message, 'string', `error.message is a string${where}`);
  assert.ok((e.message as string).length > 0, `error.message is not empty${where}`);
  assert.equal(typeof e.param, 'string', `error.param is a string${where}`);
  assert.ok(isErrorCode(e.code), `error.code ${JSON.stringify(e.code)} is in the catalogue${where}`);
  const entry = catalogue[e.code];
  assert.equal(entry.shape, 'A', `code ${e.code} is a shape-A code${where}`);
  assert.equal(entry.status, status, `code ${e.code} is answered with its catalogue status${where}`);
  return e as unknown as ShapeA;
}

/** Asserts a shape-A answer with this code (and so the catalogue status of that code). */
export function expectError(a: Answer, code: string, context = ''): ShapeA {
  const e = assertErrorBody(a.status, a.text, context);
  assert.equal(e.code, code, `error.code${context ? ` (${context})` : ''}: ${a.text.slice(0, 300)}`);
  assert.match(String(a.headers['content-type']), /^application\/json/, 'error answers are JSON');
  return e;
}

// ---------------------------------------------------------------------------------------------
// JSON paths

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Seg = string | number;

/** Renders a path the way error.param does: `contents[0].parts[1].inlineData`. */
export function dotted(path: readonly Seg[]): string {
  return dottedPath(path);
}

/** Every path inside a value (not the root itself), parents before children. */
export function pathsOf(value: Json, prefix: Seg[] = []): Seg[][] {
  const out: Seg[][] = [];
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push([...prefix, i], ...pathsOf(v, [...prefix, i]));
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push([...prefix, k], ...pathsOf(v, [...prefix, k]));
  }
  return out;
}

export function getAt(value: Json, path: readonly Seg[]): Json {
  let v: Json = value;
  for (const seg of path) v = (v as Record<string | number, Json>)[seg]!;
  return v;
}

/** A deep copy with the value at `path` replaced (or removed when `replacement` is undefined). */
export function withAt(value: Json, path: readonly Seg[], replacement: Json | undefined): Json {
  const copy = structuredClone(value);
  const parent = getAt(copy, path.slice(0, -1));
  const last = path[path.length - 1]!;
  if (Array.isArray(parent)) {
    if (replacement === undefined) parent.splice(last as number, 1);
    else parent[last as number] = replacement;
  } else {
    const obj = parent as Record<string, Json>;
    if (replacement === undefined) delete obj[last as string];
    else Object.defineProperty(obj, last as string, { value: replacement, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** JSON kind: null, boolean, number, string, array or object. */
export function kindOf(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** A JSON value whose kind (null, boolean, number, string, array, object) differs from `kind`; integers and doubles are one kind, number. */
export const otherKindArb = (kind: string): fc.Arbitrary<Json> =>
  fc
    .oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.string({ maxLength: 10 }),
      fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
    )
    .filter((v) => kindOf(v as Json) !== kind) as fc.Arbitrary<Json>;

/** Whether `param` is the field at `path` or one of its ancestors (never the root). */
export function namesFieldOrAncestor(param: string, path: readonly Seg[]): boolean {
  for (let n = path.length; n >= 1; n--) if (dotted(path.slice(0, n)) === param) return true;
  return false;
}
