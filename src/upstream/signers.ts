import type { AuthSpec, CompiledChannel } from '../config/snapshot.js';
import type { UpstreamRequest } from './upstream-request.js';

const PLACEHOLDER = /\{([a-z][a-z0-9_]*)\}/g;

/** Fills `{secret}` placeholders of an auth template with the channel's secrets. */
function fill(template: string, channel: CompiledChannel): string {
  return template.replace(PLACEHOLDER, (_m, name: string) => channel.secrets[name]?.reveal() ?? '');
}

/**
 * Signs an upstream request the way the channel's profile says. Signers are the named building
 * blocks of `profiles.*.auth.type`; each one only adds headers or query parameters.
 */
export function sign(auth: AuthSpec, channel: CompiledChannel, req: UpstreamRequest): void {
  switch (auth.type) {
    case 'header':
      req.headers[auth.name.toLowerCase()] = fill(auth.value, channel);
      return;
    case 'query':
      req.query[auth.name] = fill(auth.value, channel);
      return;
    case 'none':
      return;
  }
}
