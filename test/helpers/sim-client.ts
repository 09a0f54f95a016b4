/**
 * The one HTTP client the simulator tests (test/sim/) speak through, so that each test's `client()`
 * is only what is particular to its vendor (paths, auth scheme, extra headers) and the common part is
 * written once: auth headers on every request, a body sent as JSON unless it is already a string or
 * a FormData, and the answer read as `{status, headers, body}`.
 */
import type { Simulator } from '../../src/sim/http.js';

/** A simulator's answer with its JSON body read. */
export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, any>;
}

/** Reads a response into an Answer (the body must be JSON). */
export async function answerOf(res: Response): Promise<Answer> {
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

type Fields = Record<string, string>;

/** Headers to send on every request, or a function giving them afresh for each (a token that expires). */
export type SimAuth = Fields | (() => Fields);

/** The init of `SimClient.fetch`: a RequestInit whose headers are a plain object. */
export type SimInit = Omit<RequestInit, 'headers'> & { headers?: Fields };

export interface SimClient {
  /** POSTs `body` (JSON-encoded unless a string or FormData; JSON content type unless FormData). */
  post(path: string, body: unknown, headers?: Fields): Promise<Answer>;
  get(path: string, headers?: Fields): Promise<Answer>;
  del(path: string, headers?: Fields): Promise<Answer>;
  /** A plain fetch with the auth headers, for downloads: `target` is a path on the simulator or a whole URL. */
  fetch(target: string, init?: SimInit): Promise<Response>;
}

/**
 * A client of `sim` sending `auth` on every request; headers given to a call are merged over the
 * auth and content type, so a test can replace either.
 */
export function simClient(sim: Simulator, auth: SimAuth = {}): SimClient {
  const authHeaders = typeof auth === 'function' ? auth : () => auth;
  const raw = (target: string, init: SimInit = {}) =>
    fetch(/^https?:\/\//.test(target) ? target : sim.url + target, { ...init, headers: { ...authHeaders(), ...init.headers } });
  return {
    async post(path, body, headers = {}) {
      const form = body instanceof FormData;
      return answerOf(
        await raw(path, {
          method: 'POST',
          headers: { ...(form ? {} : { 'content-type': 'application/json' }), ...headers },
          body: form || typeof body === 'string' ? body : JSON.stringify(body),
        }),
      );
    },
    async get(path, headers = {}) {
      return answerOf(await raw(path, { headers }));
    },
    async del(path, headers = {}) {
      return answerOf(await raw(path, { method: 'DELETE', headers }));
    },
    fetch: raw,
  };
}
