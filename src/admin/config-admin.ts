import type { ConfigControl } from '../config/config-control.js';
import { formatIssue } from '../config/issues.js';
import { GatewayError } from '../errors/gateway-error.js';
import { auditedReload } from '../records/reload-audit.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';

/** Problems named in a `config_invalid` message; the rest are counted (GET /admin/config lists more). */
const MAX_LISTED = 20;

function control(ctx: AdminContext): ConfigControl {
  if (ctx.deps.config === null) {
    throw new GatewayError('not_found', 'this gateway serves a fixed configuration: it cannot be reloaded, and /admin/config has nothing to report');
  }
  return ctx.deps.config;
}

/**
 * `GET /admin/config`: the generation and version serving, what is watched, the last reload with
 * its problems, and every replica's version (this one's alone when nothing is shared).
 */
export async function configReport(ctx: AdminContext): Promise<AdminAnswer> {
  const s = control(ctx).status();
  const self = ctx.deps.self();
  const replicas = (await ctx.deps.shared.replicas()) ?? [{ ...self, seenAt: new Date().toISOString() }];
  return {
    json: {
      replica: self.replica,
      version: s.version,
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
        ms: s.lastReload.ms,
        issues: s.lastReload.issues.map(formatIssue),
      },
      replicas: replicas.map((r) => ({
        replica: r.replica,
        version: r.version,
        generation: r.generation,
        loaded_at: r.loadedAt,
        last_reload_ok: r.lastReloadOk,
        seen_at: r.seenAt,
      })),
    },
  };
}

/**
 * `POST /admin/reload`: builds and swaps now (joining a build that is about to start). A bad
 * configuration answers `config_invalid` listing its problems; the previous one keeps serving.
 * One that loads is then asked of every other replica (each reloads its own files and reports
 * its version in `GET /admin/config`).
 */
export async function reloadNow(ctx: AdminContext): Promise<AdminAnswer> {
  // A reload refused changed nothing, but was asked: the record says so (records/reload-audit.ts).
  const config = control(ctx);
  const op = ctx.deps.operator;
  const outcome = op ? await auditedReload(config, op, 'admin', ctx.deps.self().replica) : await config.reload('admin');
  const errors = outcome.issues.filter((i) => i.severity === 'error');
  if (!outcome.ok) {
    const listed = errors.slice(0, MAX_LISTED).map(formatIssue);
    const more = errors.length > MAX_LISTED ? `\n… and ${errors.length - MAX_LISTED} more (GET /admin/config)` : '';
    throw new GatewayError(
      'config_invalid',
      `the configuration does not load (${errors.length} error(s)); generation ${outcome.generation} keeps serving:\n${listed.join('\n')}${more}`,
    );
  }
  ctx.deps.shared.publish({ t: 'reload' });
  return {
    json: {
      ok: true,
      generation: outcome.generation,
      version: control(ctx).status().version,
      ms: outcome.ms,
      replicas_told: ctx.deps.shared.up,
      warnings: outcome.issues.filter((i) => i.severity === 'warning').map(formatIssue),
    },
  };
}
