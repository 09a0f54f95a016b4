/**
 * What the client asked that the public task shows, kept in the task record's `context` beside what
 * the profile's mappings keep there: the prompt submitted and, for a remix, the source task's id
 * (the video object's `prompt` and `remixed_from_video_id`, as OpenAI's specification requires them).
 * It sits under one key of its own; mappings never see it (their `task.context` is theirs alone),
 * and a context a mapping writes keeps it. A mapping's context that is not an object (none of the
 * shipped profiles keeps one) leaves no room for it: the task then shows null for both.
 */

/** The record context's key for what was asked. */
const KEY = '~asked';

/** What was asked: the submitted prompt, the remixed task's id. */
export interface Asked {
  readonly prompt: string | null;
  readonly remixOf: string | null;
}

const NOTHING: Asked = { prompt: null, remixOf: null };

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What was asked, as kept in a record's context. */
export function askedIn(context: unknown): Asked {
  const a = isPlainObject(context) ? context[KEY] : undefined;
  if (!isPlainObject(a)) return NOTHING;
  return { prompt: typeof a.prompt === 'string' ? a.prompt : null, remixOf: typeof a.remixOf === 'string' ? a.remixOf : null };
}

/** The context as the profile's mappings kept it (null when they kept nothing). */
export function mappingContext(context: unknown): unknown {
  if (!isPlainObject(context) || !(KEY in context)) return context;
  const { [KEY]: _asked, ...rest } = context;
  return Object.keys(rest).length === 0 ? null : rest;
}

/** A record context: what a mapping keeps (`kept`, as it wrote it), with what was asked beside it. */
export function withAsked(kept: unknown, asked: Asked): unknown {
  const own = mappingContext(kept);
  if (asked.prompt === null && asked.remixOf === null) return own;
  if (own === null || own === undefined) return { [KEY]: asked };
  return isPlainObject(own) ? { ...own, [KEY]: asked } : own;
}
