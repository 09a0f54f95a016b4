import type { ErrorObject, ValidateFunction } from 'ajv';
import { describeError, dottedPath, usefulErrors } from '../schema/describe-error.js';
import { nearestName } from './did-you-mean.js';
import type { ConfigIssue } from './issues.js';
import type { YamlSource } from './yaml-source.js';

/**
 * A config file checked against its JSON Schema (schemas/config/), each failure an issue at its line
 * in the operator's words: a failure inside a channel, a route, a family, an extension or a profile
 * names it (`channel "zeta-main": …`) rather than only its index, and an unknown field names the
 * allowed field it most likely misspells. The validator must be compiled with ajv's `verbose`
 * option: the allowed fields are read from the schema of the object at fault.
 */
export function checkAgainstSchema(src: YamlSource, validate: ValidateFunction, issues: ConfigIssue[]): boolean {
  if (validate(src.value)) return true;
  const errors = usefulErrors(validate.errors ?? []);
  const misspelt = new Set<string>();
  const unknown = new Map<ErrorObject, string | null>();
  for (const e of errors) {
    const field = unknownField(e);
    if (field === null) continue;
    const near = nearestName(field, allowedFields(e));
    unknown.set(e, near);
    if (near !== null) misspelt.add(`${e.instancePath}/${near}`);
  }
  const seen = new Set<string>();
  for (const e of errors) {
    // `base_ulr` misspells the required `base_url`: the misspelling says it all.
    if (e.keyword === 'required' && misspelt.has(`${e.instancePath}/${String((e.params as { missingProperty?: unknown }).missingProperty)}`)) continue;
    const { path, message } = problem(src.value, e, unknown.get(e));
    // Two branches can fail the same way ("must be of type object"); say it once.
    const key = `${e.instancePath} ${message}`;
    if (!seen.has(key)) issues.push(src.issue(path, message));
    seen.add(key);
  }
  return false;
}

/** The field an `additionalProperties` (or `unevaluatedProperties`) failure is about; null for any other failure. */
function unknownField(e: ErrorObject): string | null {
  const p = e.params as { additionalProperty?: unknown; unevaluatedProperty?: unknown };
  if (e.keyword === 'additionalProperties') return String(p.additionalProperty);
  if (e.keyword === 'unevaluatedProperties') return String(p.unevaluatedProperty);
  return null;
}

/** The fields the schema of the object at fault declares. */
function allowedFields(e: ErrorObject): string[] {
  const properties = (e.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties ? Object.keys(properties) : [];
}

/** The named things of the config files, by the list or map that holds them and the field that names them. */
const OWNERS: Record<string, { readonly what: string; readonly nameField?: string }> = {
  channels: { what: 'channel', nameField: 'name' },
  routes: { what: 'route', nameField: 'id' },
  families: { what: 'family', nameField: 'name' },
  extend: { what: 'extension of route', nameField: 'route' },
  profiles: { what: 'profile' },
  groups: { what: 'group' },
};

/** The thing of the file `path` lies in (`channel "zeta-main"`) and how many segments of `path` lead to it; null outside one. */
function ownerOf(value: unknown, path: readonly (string | number)[]): { label: string; depth: number } | null {
  const [section, key] = path;
  const owner = typeof section === 'string' ? OWNERS[section] : undefined;
  if (!owner || key === undefined) return null;
  if (owner.nameField === undefined) return typeof key === 'string' ? { label: `${owner.what} ${JSON.stringify(key)}`, depth: 2 } : null;
  const item = ((value as Record<string, unknown>)[section as string] as unknown[] | undefined)?.[key as number];
  const name = (item as Record<string, unknown> | undefined)?.[owner.nameField];
  // An item without a usable name is still found by its index.
  return typeof name === 'string' && name !== '' ? { label: `${owner.what} ${JSON.stringify(name)}`, depth: 2 } : null;
}

/** One failure in words, naming the thing it lies in; `near` is the suggestion for an unknown field (undefined for other failures). */
function problem(value: unknown, e: ErrorObject, near: string | null | undefined): { path: (string | number)[]; message: string } {
  const full = describeError(e, '(file)');
  const owner = ownerOf(value, full.path);
  const prefix = owner ? `${owner.label}: ` : '';
  const inner = owner ? full.path.slice(owner.depth) : full.path;
  if (near !== undefined) {
    const parent = inner.slice(0, -1);
    const where = parent.length > 0 ? ` in ${dottedPath(parent)}` : '';
    const hint = near === null ? '' : ` (did you mean ${JSON.stringify(near)}?)`;
    return { path: full.path, message: `${prefix}unknown field ${JSON.stringify(String(inner[inner.length - 1]))}${where}${hint}` };
  }
  if (!owner) return full;
  // The same words with the path from the thing rather than from the top of the file: `channel "c1": base_url is required`.
  const below = e.instancePath.split('/').slice(owner.depth + 1);
  const relative = describeError({ ...e, instancePath: below.length > 0 ? `/${below.join('/')}` : '' }, owner.label);
  return { path: full.path, message: relative.path.length > 0 ? `${prefix}${relative.message}` : relative.message };
}
