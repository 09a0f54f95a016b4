import type { ErrorObject } from 'ajv';
import { IMAGE_KEYWORD } from './image-keyword.js';

/** A validation failure in words: the dotted path of the field at fault and what is wrong. */
export interface FieldProblem {
  /** Path segments of the field at fault (for a missing or extra field, that field). */
  readonly path: (string | number)[];
  readonly message: string;
}

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/**
 * Renders path segments as `contents[0].parts[1].inlineData`; a key that is not a plain name
 * (empty, or with dots, brackets, spaces) is quoted, `labels["a.b"]`, so every path is unambiguous.
 */
export function dottedPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (!PLAIN_KEY.test(seg)) out += `[${JSON.stringify(seg)}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

function pointerToPath(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
}

function plural(n: unknown, word: string): string {
  return `${String(n)} ${word}${n === 1 ? '' : 's'}`;
}

function list(values: unknown): string {
  return Array.isArray(values) ? values.map((v) => JSON.stringify(v)).join(', ') : JSON.stringify(values);
}

/** Turns one ajv error into a field path and a message a client (or an operator) can act on. */
export function describeError(e: ErrorObject, rootName: string): FieldProblem {
  const path = pointerToPath(e.instancePath);
  const p = e.params as Record<string, unknown>;
  const at = (q: (string | number)[]) => (q.length === 0 ? rootName : dottedPath(q));
  switch (e.keyword) {
    case 'required': {
      const field = [...path, String(p.missingProperty)];
      return { path: field, message: `${at(field)} is required` };
    }
    case 'additionalProperties': {
      const field = [...path, String(p.additionalProperty)];
      return { path: field, message: `${at(field)} is not an allowed field` };
    }
    case 'unevaluatedProperties': {
      const field = [...path, String(p.unevaluatedProperty)];
      return { path: field, message: `${at(field)} is not an allowed field` };
    }
    case 'enum':
      return { path, message: `${at(path)} must be one of ${list(p.allowedValues)}` };
    case 'const':
      return { path, message: `${at(path)} must be ${JSON.stringify(p.allowedValue)}` };
    case 'type':
      return { path, message: `${at(path)} must be of type ${String(p.type)}` };
    case 'format':
      return { path, message: `${at(path)} must be valid ${String(p.format)}` };
    case 'pattern':
      return { path, message: `${at(path)} does not have the expected form (${String(p.pattern)})` };
    case 'maxLength':
      return { path, message: `${at(path)} must be at most ${plural(p.limit, 'character')} long` };
    case 'minLength':
      return { path, message: `${at(path)} must be at least ${plural(p.limit, 'character')} long` };
    case 'maxItems':
      return { path, message: `${at(path)} must have at most ${plural(p.limit, 'item')}` };
    case 'minItems':
      return { path, message: `${at(path)} must have at least ${plural(p.limit, 'item')}` };
    case 'maxProperties':
      return { path, message: `${at(path)} must have at most ${plural(p.limit, 'field')}` };
    case 'minProperties':
      return { path, message: `${at(path)} must have at least ${plural(p.limit, 'field')}` };
    case 'uniqueItems':
      return { path, message: `${at(path)} must not repeat items (items ${String(p.j)} and ${String(p.i)} are equal)` };
    case 'contains':
      return {
        path,
        message: `${at(path)} must contain at least ${String(p.minContains ?? 1)} matching item(s): ${e.parentSchema?.description ?? 'see the schema'}`,
      };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path, message: `${at(path)} must be ${String(p.comparison)} ${String(p.limit)}` };
    case 'oneOf':
    case 'anyOf':
      return { path, message: `${at(path)} does not match any of the allowed forms` };
    case IMAGE_KEYWORD:
      // The keyword's message is a sentence of its own ("the image is 64x64; at least 128x128 is required").
      return { path, message: `${at(path)}: ${e.message ?? 'the image is not acceptable'}` };
    default:
      return { path, message: `${at(path)} ${e.message ?? 'is invalid'}` };
  }
}

/**
 * Chooses the most useful errors of an allErrors run: drops `if` (it only says "then failed") and
 * the generic oneOf/anyOf line where a more precise error about the same value exists.
 */
export function usefulErrors(all: readonly ErrorObject[]): ErrorObject[] {
  const errors = closestBranches(all);
  const precise = errors.filter((e) => e.keyword !== 'if' && e.keyword !== 'oneOf' && e.keyword !== 'anyOf');
  const unions = errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf');
  const out = [...precise];
  for (const u of unions) {
    if (!precise.some((e) => e.instancePath.startsWith(u.instancePath))) out.push(u);
  }
  return out;
}

/**
 * Keeps, for each failed oneOf/anyOf, only the errors of the branch the value was most likely meant
 * for, so `max_bytes: 20 megabytes` is "not of the expected form" rather than also "not an integer",
 * and `auth: { type: header }` names its missing fields rather than also "type must be none".
 * A branch the value is not even the type of is unlikely; one whose enum or const failed is next.
 */
function closestBranches(errors: readonly ErrorObject[]): ErrorObject[] {
  const UNLIKELY = Number.MAX_SAFE_INTEGER;
  let out = [...errors];
  for (const u of errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf')) {
    const under = (e: ErrorObject) => e.instancePath === u.instancePath || e.instancePath.startsWith(`${u.instancePath}/`);
    const branches = new Map<string, ErrorObject[]>();
    for (const e of out) {
      if (e === u || !e.schemaPath.startsWith(`${u.schemaPath}/`) || !under(e)) continue;
      const [k = ''] = e.schemaPath.slice(u.schemaPath.length + 1).split('/');
      branches.set(k, [...(branches.get(k) ?? []), e]);
    }
    const score = (list: ErrorObject[]) =>
      list.every((e) => e.keyword === 'type' && e.instancePath === u.instancePath)
        ? UNLIKELY
        : list.length + 100 * list.filter((e) => e.keyword === 'enum' || e.keyword === 'const').length;
    const ranked = [...branches.values()].sort((x, y) => score(x) - score(y));
    const [closest] = ranked;
    if (!closest || ranked.length < 2 || score(closest) === UNLIKELY) continue;
    const dropped = new Set(ranked.slice(1).flat());
    out = out.filter((e) => !dropped.has(e));
  }
  return out;
}
