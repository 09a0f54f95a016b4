import { describeImageRule, IMAGE_KEYWORD, type ImageRule } from '../schema/image-keyword.js';
import { describeMediaRule, MEDIA_KEYWORD, type MediaRule } from '../schema/media-keyword.js';
import { isModelRoute, routeServesModel } from './lookups.js';
import { proofOf } from './profile-proof.js';
import type { CompiledFamily, CompiledProfile, CompiledRoute, ModelRoute, Snapshot } from './snapshot.js';

/**
 * The catalogue, generated from the config: one row per family with its models, the routes that
 * take them, the modes it supports and its limits. It is the body of docs/generated/catalogue.md
 * (src/docs/generated-docs.ts), which `npm run docs` writes; test/docs/catalogue.test.ts fails when the
 * file and the config disagree.
 */

/** The catalogue as Markdown: the families, then (given the profiles) where each profile's facts come from. */
export function renderCatalogue(snapshot: Pick<Snapshot, 'families' | 'routes'> & Partial<Pick<Snapshot, 'profiles'>>): string {
  const lines = ['| Family | Models | Routes | Modes | Limits |', '|---|---|---|---|---|'];
  for (const f of snapshot.families) {
    lines.push(`| ${cell(f.name)} | ${f.modelNames.map(code).join(', ')} | ${routesOf(f, snapshot.routes).join('<br>')} | ${modes(f)} | ${limits(f)} |`);
  }
  if (snapshot.profiles) lines.push('', ...sourcesTable(snapshot.profiles));
  return lines.join('\n');
}

/**
 * One row per profile: what proves it (its strictest pinned vendor artifact, and its kind), and the
 * vendor documents and official SDKs it was checked against, and when (`profiles.*.sources`).
 */
function sourcesTable(profiles: ReadonlyMap<string, CompiledProfile>): string[] {
  const rows = ['| Profile | Proven by | Checked against |', '|---|---|---|'];
  for (const p of [...profiles.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const said = p.sources.map(
      (s) => `${cell(s.name)}${s.kind ? ` (${s.kind}${s.pinned ? `, pinned: ${code(s.pinned)}` : ''})` : ''}, ${s.checked}${s.note ? `: ${cell(s.note)}` : ''}`,
    );
    const proof = proofOf(p);
    rows.push(
      `| ${code(p.name)} | ${proof ? `${proof.kind}: ${code(proof.pinned ?? '')}` : 'none: our own reading'} | ${said.length > 0 ? said.join('<br>') : "(no source named: our reading of the vendor's docs)"} |`,
    );
  }
  return rows;
}

const code = (s: string) => `\`${s}\``;
const cell = (s: string) => s.replace(/\|/g, '\\|');

/** Routes that take at least one model of the family (a pattern family: routes taking that pattern). */
function routesOf(f: CompiledFamily, routes: readonly CompiledRoute[]): string[] {
  const takes = (r: ModelRoute) => [...f.models.exact].some((m) => routeServesModel(r, m)) || f.models.prefixes.some((p) => r.models.prefixes.includes(p));
  return routes
    .filter(isModelRoute)
    .filter(takes)
    .map((r) => {
      const refused = f.vendorRefuses.filter((v) => v.route === r.id).map((v) => ` (the vendor refuses ${code(v.model)} here: ${cell(v.why)})`);
      return code(`${r.method} ${r.path}${query(r)}`) + refused.join('');
    });
}

function query(r: CompiledRoute): string {
  const q = Object.entries(r.matchQuery).map(([k, v]) => `${k}=${v}`);
  return q.length > 0 ? `?${q.join('&')}` : '';
}

function modes(f: CompiledFamily): string {
  const by = (s: string) => [...f.modes].filter(([, v]) => v === s).map(([m]) => m);
  const parts = [by('supported').join(', ')];
  const discouraged = by('discouraged');
  const refused = by('unsupported');
  if (discouraged.length > 0) parts.push(`not recommended: ${discouraged.join(', ')}`);
  if (refused.length > 0) parts.push(`refused: ${refused.join(', ')}`);
  return parts.filter(Boolean).join('; ') || '(not checked)';
}

function limits(f: CompiledFamily): string {
  const out = f.rawLimits ? describeSchema(f.rawLimits, '') : [];
  for (const [model, schema] of Object.entries(f.rawModelLimits)) {
    for (const rule of describeSchema(schema, '')) out.push(`${code(model)}: ${rule}`);
  }
  return out.length > 0 ? out.map(cell).join('<br>') : '—';
}

/** Plain-words rules of a JSON Schema's properties (the keywords limits use); nested objects by dotted path. */
function describeSchema(schema: Readonly<Record<string, unknown>>, prefix: string): string[] {
  const out: string[] = [];
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, rule] of Object.entries(props)) out.push(...describeRule(rule, prefix ? `${prefix}.${name}` : name));
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    for (const sub of (schema[key] ?? []) as Record<string, unknown>[]) {
      if (typeof sub.description === 'string') out.push(sub.description);
    }
  }
  if (typeof schema.not === 'object' && schema.not !== null && typeof (schema.not as { description?: unknown }).description === 'string') {
    out.push((schema.not as { description: string }).description);
  }
  return out;
}

/** The rules of one value, of its fields, and of its items (as `path[]`: `subjects[].images[]`). */
function describeRule(rule: Record<string, unknown>, path: string): string[] {
  const out: string[] = [];
  const said = ruleWords(rule);
  if (said) out.push(`${path} ${said}`);
  if (rule.properties) out.push(...describeSchema(rule, path));
  if (typeof rule.items === 'object' && rule.items !== null && !Array.isArray(rule.items))
    out.push(...describeRule(rule.items as Record<string, unknown>, `${path}[]`));
  return out;
}

function ruleWords(r: Record<string, unknown>): string {
  const w: string[] = [];
  // `not: {}`: the field may not be given at all (its description says why).
  if (typeof r.not === 'object' && r.not !== null && Object.keys(r.not).length === 0) w.push('refused');
  if (r.const !== undefined) w.push(`= ${JSON.stringify(r.const)}`);
  if (Array.isArray(r.enum)) w.push(`in ${r.enum.map((v) => JSON.stringify(v)).join(' ')}`);
  if (r.minimum !== undefined && r.maximum !== undefined) w.push(`${String(r.minimum)}–${String(r.maximum)}`);
  else if (r.minimum !== undefined) w.push(`≥ ${String(r.minimum)}`);
  else if (r.maximum !== undefined) w.push(`≤ ${String(r.maximum)}`);
  if (r.maxItems !== undefined) w.push(`at most ${String(r.maxItems)} item(s)`);
  if (r.minItems !== undefined) w.push(`at least ${String(r.minItems)} item(s)`);
  if (r.maxLength !== undefined) w.push(`at most ${String(r.maxLength)} characters`);
  if (typeof r[IMAGE_KEYWORD] === 'object' && r[IMAGE_KEYWORD] !== null) w.push(describeImageRule(r[IMAGE_KEYWORD] as ImageRule));
  if (typeof r[MEDIA_KEYWORD] === 'object' && r[MEDIA_KEYWORD] !== null) w.push(describeMediaRule(r[MEDIA_KEYWORD] as MediaRule));
  if (r.default !== undefined) w.push(`default ${JSON.stringify(r.default)}`);
  const why = typeof r.description === 'string' ? `(${r.description})` : '';
  return [w.join(', '), why].filter(Boolean).join(' ');
}
