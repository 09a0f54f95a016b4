/**
 * What replicas say to each other through Redis, as written and read: events on one pub/sub
 * channel (each with its sender, so a replica ignores its own) and each replica's status.
 */
import type { LiveEvent, ReplicaStatus } from './shared-live.js';

/** An event as published (with its sender), or null for anything else on the channel. */
export function parseEvent(text: string): { event: LiveEvent; from: string | undefined } | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const from = typeof o.from === 'string' ? o.from : undefined;
  let event: LiveEvent | null = null;
  if (o.t === 'reload') event = { t: 'reload' };
  else if (o.t === 'token' && typeof o.keyHash === 'string') event = { t: 'token', keyHash: o.keyHash };
  else if (o.t === 'breaker' && typeof o.channel === 'string' && (o.state === 'open' || o.state === 'closed')) {
    const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : null);
    event = { t: 'breaker', channel: o.channel, state: o.state, openedAt: n(o.openedAt), retryAt: n(o.retryAt) };
  }
  return event && { event, from };
}

/** A replica's status as announced, or null when it is not one. */
export function parseStatus(text: string): ReplicaStatus | null {
  try {
    const s = JSON.parse(text) as ReplicaStatus;
    return typeof s.replica === 'string' && typeof s.seenAt === 'string' ? s : null;
  } catch {
    return null;
  }
}

/** The pub/sub channel (after the prefix) every replica's events go through. */
export const EVENTS = 'events';

/** An event as published: what happened and who says so (a replica ignores its own; parseEvent reads it). */
export function eventMessage(event: LiveEvent, from: string): string {
  return JSON.stringify({ ...event, from });
}
