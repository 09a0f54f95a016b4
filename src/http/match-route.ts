import type { CompiledRoute, Snapshot } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { PathMatcher } from '../config/snapshot.js';

/**
 * Finds the route for a method, raw path and query: 404 when no path matches, 405 when only the
 * method is wrong, 400 when the path and method match but no route's required query values do.
 */
export function matchRoute(
  snapshot: Snapshot,
  method: string,
  pathname: string,
  search: URLSearchParams | null = null,
): { route: CompiledRoute; params: Record<string, string> } {
  const allowed: string[] = [];
  const wrongQuery: CompiledRoute[] = [];
  for (const route of snapshot.routes) {
    const params = matchPath(route.matcher, pathname);
    if (!params) continue;
    if (route.method !== method) {
      allowed.push(route.method);
      continue;
    }
    if (queryMatches(route, search)) return { route, params };
    wrongQuery.push(route);
  }
  if (wrongQuery.length > 0) throw queryMismatch(wrongQuery, search);
  if (allowed.length > 0) throw methodNotAllowed(method, allowed);
  throw new GatewayError('not_found', `no route for ${method} ${pathname.length > 200 ? pathname.slice(0, 200) + '…' : pathname}`);
}

/** The routes whose path template matches `pathname`, whatever their method (a browser's preflight asks for all of them). */
export function routesOnPath(snapshot: Snapshot, pathname: string): CompiledRoute[] {
  return snapshot.routes.filter((route) => matchPath(route.matcher, pathname) !== null);
}

/** A path's parameters under a template, or null; a bad percent-escape is the client's invalid_request. */
export function matchPath(matcher: PathMatcher, pathname: string): Record<string, string> | null {
  try {
    return matcher.match(pathname);
  } catch {
    throw new GatewayError('invalid_request', 'the URL path has an invalid percent-encoding');
  }
}

/** 405 for a path that exists with other methods, which its `Allow` header lists. */
export function methodNotAllowed(method: string, allowed: readonly string[]): GatewayError {
  // Routes told apart by their query share a method on one path: name it once.
  const methods = [...new Set(allowed)].join(', ');
  return new GatewayError('method_not_allowed', `${method} is not allowed on this path; use ${methods}`, { headers: { allow: methods } });
}

function queryMatches(route: CompiledRoute, search: URLSearchParams | null): boolean {
  for (const [k, v] of Object.entries(route.matchQuery)) if (search?.get(k) !== v) return false;
  return true;
}

/** Names the first required query parameter the request got wrong, with the values routes take. */
function queryMismatch(routes: readonly CompiledRoute[], search: URLSearchParams | null): GatewayError {
  const names = [...new Set(routes.flatMap((r) => Object.keys(r.matchQuery)))];
  // The routes given all require some query value: there is a name.
  const name = names.find((n) => !routes.some((r) => r.matchQuery[n] === undefined || r.matchQuery[n] === search?.get(n))) ?? names[0] ?? '';
  const values = [...new Set(routes.map((r) => r.matchQuery[name]).filter((v): v is string => v !== undefined))];
  const got = search?.get(name);
  const said = got === null || got === undefined ? 'is required' : `${JSON.stringify(got.slice(0, 100))} is not supported`;
  return new GatewayError('invalid_request', `query parameter ${name} ${said}; use ${values.map((v) => JSON.stringify(v)).join(' or ')}`, { param: name });
}
