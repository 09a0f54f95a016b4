import type { Mapping } from '../mapping/mapping.js';
import type { PathMatcher } from './snapshot.js';
import type { CompiledRouteResource, ResourceReference, RouteKind } from './snapshot.js';

/** A route's `resource` and `references` blocks as written in routes.yaml (already schema-valid). */
export interface RawResources {
  resource?: { kind: string; creates?: string; id?: { path?: string; query?: string; body?: string }; prefix?: string };
  references?: { kind: string; prefix: string }[];
}

/**
 * Compiles a route's resource rules (docs/tokens-and-quota.md, "Authentication, tokens and quota"): a route either
 * creates a resource (a sync route, `creates`) or reads one (`id`), and any route with a body may
 * name resources by prefixed strings (`references`). `fail` reports a problem at a path under the
 * route; `compile` compiles a JSONata expression at a path.
 */
export function compileResources(
  r: RawResources & { kind: RouteKind; path: string },
  matcher: PathMatcher | undefined,
  hasBody: boolean,
  fail: (path: (string | number)[], message: string) => void,
  compile: (expr: string, path: (string | number)[]) => Mapping | null,
): { resource: CompiledRouteResource | null; references: readonly ResourceReference[] } {
  const references = Object.freeze((r.references ?? []).map((x) => Object.freeze({ kind: x.kind, prefix: x.prefix })));
  if (references.length > 0 && !hasBody) fail(['references'], 'references are read from the body but the route declares no body');
  const res = r.resource;
  if (!res) return { resource: null, references };
  if ((res.creates === undefined) === (res.id === undefined))
    fail(['resource'], 'a resource block either creates a resource (creates) or reads one (id), not both or neither');
  if (res.creates !== undefined && r.kind !== 'sync') fail(['resource', 'creates'], 'only a sync route creates a resource');
  let id: CompiledRouteResource['id'] = null;
  if (res.id?.path !== undefined) {
    if (matcher && !matcher.params.includes(res.id.path)) fail(['resource', 'id', 'path'], `path parameter {${res.id.path}} does not appear in ${r.path}`);
    id = { from: 'path', name: res.id.path, pointer: [] };
  } else if (res.id?.query !== undefined) {
    id = { from: 'query', name: res.id.query, pointer: [] };
  } else if (res.id?.body !== undefined) {
    if (!hasBody) fail(['resource', 'id', 'body'], 'the id is read from the body but the route declares no body');
    const pointer = res.id.body
      .slice(1)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    id = { from: 'body', name: pointer.join('.'), pointer };
  }
  const creates = res.creates !== undefined ? compile(res.creates, ['resource', 'creates']) : null;
  return { resource: Object.freeze({ kind: res.kind, creates, id: id && Object.freeze(id), prefix: res.prefix ?? null }), references };
}
