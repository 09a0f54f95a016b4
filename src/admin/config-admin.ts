import type { ConfigControl } from '../config/config-control.js';
import { formatIssue } from '../config/issues.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';

/** Problems named in a `config_invalid` message; the rest are counted (GET /admin/config lists more). */
const MAX_LISTED = 20;

function control(ctx: AdminContext): ConfigControl {
  if (ctx.deps.config === null) {
    throw new GatewayError('not_found', 'this gateway serves a fixed configuration: it cannot be reloaded, and /admin/config has nothing to report');
  }
  return ctx.deps.config;
}

/** `GET /admin/config`: the generation serving, what is watched, and the last reload with its problems. */
export async function configReport(ctx: AdminContext): Promise<AdminAnswer> {
  const s = control(ctx).status();
  return {
    json: {
      generation: s.generation,
      loaded_at: s.loadedAt.toISOString(),
      dirs: s.dirs,
      watching: s.watching,
      routes: ctx.snapshot.routes.length,
      channels: ctx.snapshot.channels.map((c) => c.name),
      last_reload: s.lastReload && {
        at: s.lastReload.at.toISOString(),
        ok: s.lastReload.ok,
        reason: s.lastReload.reason,
        issues: s.lastReload.issues.map(formatIssue),
      },
    },
  };
}

/**
 * `POST /admin/reload`: builds and swaps now (joining a build that is about to start). A bad
 * configuration answers `config_invalid` listing its problems; the previous one keeps serving.
 */
export async function reloadNow(ctx: AdminContext): Promise<AdminAnswer> {
  const outcome = await control(ctx).reload('admin');
  if (!outcome.ok) {
    const errors = outcome.issues.filter((i) => i.severity === 'error');
    const listed = errors.slice(0, MAX_LISTED).map(formatIssue);
    const more = errors.length > MAX_LISTED ? `\n… and ${errors.length - MAX_LISTED} more (GET /admin/config)` : '';
    throw new GatewayError(
      'config_invalid',
      `the configuration does not load (${errors.length} error(s)); generation ${outcome.generation} keeps serving:\n${listed.join('\n')}${more}`,
    );
  }
  return {
    json: { ok: true, generation: outcome.generation, ms: outcome.ms, warnings: outcome.issues.filter((i) => i.severity === 'warning').map(formatIssue) },
  };
}
