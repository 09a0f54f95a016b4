import type { CompiledRoute, Snapshot } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';

/** Finds the route for a method and raw path: 404 when no path matches, 405 when only the method is wrong. */
export function matchRoute(snapshot: Snapshot, method: string, pathname: string): { route: CompiledRoute; params: Record<string, string> } {
  const allowed: string[] = [];
  for (const route of snapshot.routes) {
    let params: Record<string, string> | null;
    try {
      params = route.matcher.match(pathname);
    } catch {
      throw new GatewayError('invalid_request', 'the URL path has an invalid percent-encoding');
    }
    if (!params) continue;
    if (route.method === method) return { route, params };
    allowed.push(route.method);
  }
  if (allowed.length > 0) {
    throw new GatewayError('method_not_allowed', `${method} is not allowed on this path; use ${allowed.join(', ')}`, {
      headers: { allow: allowed.join(', ') },
    });
  }
  throw new GatewayError('not_found', `no route for ${method} ${pathname.length > 200 ? pathname.slice(0, 200) + '…' : pathname}`);
}
