import { isModelRoute, routeServesModel } from './lookups.js';
import { channelsForModel, operationServing, upstreamModelOf } from './lookups.js';
import { proofText } from './profile-proof.js';
import type { RouteStream, Snapshot } from './snapshot.js';

/**
 * What the snapshot does with a model, in words: the routes that accept it and the channels that
 * would serve it, by priority tier with each channel's share of its tier. Secrets are never shown.
 * Returns null when no route serves the model.
 */
export function explainModel(snapshot: Snapshot, model: string, group?: string): string[] | null {
  const routes = snapshot.routes.filter(isModelRoute).filter((r) => routeServesModel(r, model));
  if (routes.length === 0) return null;
  const lines = [`model ${model}`, 'routes:'];
  for (const r of routes)
    lines.push(`  ${r.id}  ${r.method} ${r.path}  (operation ${r.operation}${r.kind === 'sync' && r.stream ? streamNote(r.stream) : ''})`);

  const channels = channelsForModel(snapshot, model).filter((c) => !group || c.groups.has(group));
  lines.push(
    group ? `channels for group ${group} (highest priority first, weighted inside a tier):` : 'channels (highest priority first, weighted inside a tier):',
  );
  if (channels.length === 0) lines.push('  none');
  const tiers = [...new Set(channels.map((c) => c.priority))].sort((a, b) => b - a);
  for (const p of tiers) {
    const tier = channels.filter((c) => c.priority === p);
    const total = tier.reduce((s, c) => s + c.weight, 0);
    lines.push(`  priority ${p}:`);
    for (const c of tier) {
      const ops = routes.filter((r) => operationServing(c, r.operation, model)).map((r) => r.id);
      // Routes a client may ask to stream, and whether this channel streams the model there.
      const asked = routes.flatMap((r) => (r.kind === 'sync' && r.stream?.askedBy && r.stream.operation ? [{ r, op: r.stream.operation }] : []));
      const streams = asked.filter(({ op }) => operationServing(c, op, model)).map(({ r }) => r.id);
      const streaming = asked.length === 0 ? '' : `  streams ${streams.join(',') || 'none (stream: true is refused)'}`;
      lines.push(
        `    ${c.name}  weight ${c.weight} (${Math.round((100 * c.weight) / total)}%)  profile ${c.profile.name} (proof: ${proofText(c.profile)})  ${c.origin}${c.basePath}` +
          `  upstream model ${upstreamModelOf(c, model)}  groups ${[...c.groups].join(',')}  serves ${ops.join(',') || 'no route of this model'}${streaming}` +
          `  timeouts connect ${c.timeouts.connectMs} ms, headers ${c.timeouts.headersMs} ms, body ${c.timeouts.bodyMs} ms`,
      );
    }
  }
  return lines;
}

/** How `explain` says a route streams. */
function streamNote(s: RouteStream): string {
  const via = s.operation ? ` through ${s.operation}` : '';
  return s.askedBy ? `; Server-Sent Events${via} when the body asks with /${s.askedBy.join('/')}: true` : `, answered as Server-Sent Events${via}`;
}
