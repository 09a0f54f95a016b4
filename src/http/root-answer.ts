import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * `GET /` where routes.yaml has no route of its own: a short JSON saying where to look, instead of a
 * 404 that reads like a gateway that is not there. The paths are the engine's own (src/admin/):
 * the OpenAPI document of the public routes, the console, the health probe. Nothing secret: each
 * of them is open without a key too.
 */
export const ROOT_ANSWER = {
  service: 'generation-gateway',
  openapi: '/openapi.json',
  console: '/admin/',
  health: '/healthz',
} as const;

/** Whether this request is the root's to answer: GET or HEAD of `/` (a route at `/` takes it first). */
export function isRootRequest(req: IncomingMessage, pathname: string): boolean {
  return pathname === '/' && (req.method === 'GET' || req.method === 'HEAD');
}

/** Answers the root request. */
export function sendRootAnswer(req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify(ROOT_ANSWER);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}
