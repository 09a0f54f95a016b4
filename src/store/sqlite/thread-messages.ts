/**
 * What the event loop and the store's thread (./store-thread.ts, ./store-thread-worker.ts) say to
 * each other. Calls go in batches, one message per turn of the loop; so do their answers.
 */
import type { LedgerEntry } from '../quota-store.js';

/** One store call: its number, the method, its arguments, and the caller's clock at the call (Unix ms). */
export type Call = readonly [id: number, method: string, args: readonly unknown[], now: number];

/** An error thrown in the thread, as data: its class is rebuilt on the other side (./store-thread.ts). */
export interface SentError {
  readonly name: string;
  readonly message: string;
  /** A driver's code (SQLITE_BUSY, …). */
  readonly code?: string;
  /** A GatewayError's catalogue code and the details that can be copied (not its cause). */
  readonly gateway?: { readonly code: string; readonly param?: string; readonly retryAfter?: number };
  /** TokenNameTaken's name. */
  readonly tokenName?: string;
}

/** An answer: the call's number, then its value or its error. */
export type Answer = readonly [id: number, ok: true, value: unknown] | readonly [id: number, ok: false, error: SentError];

/** To the thread. */
export type ToThread = { readonly kind: 'calls'; readonly calls: readonly Call[] } | { readonly kind: 'listen-ledger' } | { readonly kind: 'close' };

/** From the thread. */
export type FromThread =
  | { readonly kind: 'ready'; readonly methods: readonly string[] }
  | { readonly kind: 'failed'; readonly error: SentError }
  /** One turn of the thread: the ledger rows its commits wrote (heard before the answers, as in-process) and the answers. */
  | { readonly kind: 'turn'; readonly ledger: readonly LedgerEntry[]; readonly answers: readonly Answer[] }
  | { readonly kind: 'closed' };

/** What the thread is started with. */
export interface ThreadData {
  readonly path: string;
}
