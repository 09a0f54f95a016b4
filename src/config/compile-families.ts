import type { ConfigIssue } from './issues.js';
import { compileMappingAt } from './compile-mapping.js';
import type { SchemaCompiler } from './schema-compiler.js';
import { modelSet, type RouteDraft } from './compile-route-draft.js';
import { familyOf, routeServesModel } from './lookups.js';
import type { CompiledFamily, ModeSupport } from './snapshot.js';
import type { YamlSource } from './yaml-source.js';
import type { RawChannel } from './compile-channels.js';

/** A model family as routes.schema.json admits it (docs/routes-yaml.md, "Families, modes and limits"). */
export interface RawFamily {
  name: string;
  description?: string;
  models: string[];
  modes?: Record<string, ModeSupport>;
  mode?: string;
  limits?: Record<string, unknown>;
  model_limits?: Record<string, Record<string, unknown>>;
  vendor_refuses?: { model: string; route: string; why: string }[];
}

/**
 * Compiles the families of routes.yaml: which models form a family, which generation modes it
 * supports, and its limits as JSON Schemas checked after the route's own schema.
 */
export function compileFamilies(src: YamlSource, routes: readonly RouteDraft[], schemas: SchemaCompiler, issues: ConfigIssue[]): CompiledFamily[] {
  const raw = (src.value as { families?: RawFamily[] }).families ?? [];
  const owner = new Map<string, string>();
  const names = new Set<string>();
  const out: CompiledFamily[] = [];
  raw.forEach((f, i) => {
    const at = (...rest: (string | number)[]) => ['families', i, ...rest];
    if (names.has(f.name)) issues.push(src.issue(at('name'), `family "${f.name}" is declared twice`));
    names.add(f.name);
    f.models.forEach((m, j) => {
      const before = owner.get(m);
      if (before) issues.push(src.issue(at('models', j), `model ${m} already belongs to family "${before}"`));
      owner.set(m, f.name);
      const served = m.endsWith('*') ? routes.some((r) => r.models.prefixes.includes(m.slice(0, -1))) : routes.some((r) => routeServesModel(r, m));
      if (!served) issues.push(src.issue(at('models', j), `model ${m} of family "${f.name}" is not served by any route`));
    });
    const compile = (schema: Record<string, unknown>, path: (string | number)[]) => {
      try {
        return schemas.compile(schema);
      } catch (err) {
        issues.push(src.issue(path, `the limits of family "${f.name}" do not compile: ${(err as Error).message}`));
        return null;
      }
    };
    const modelLimits = new Map<string, NonNullable<CompiledFamily['limits']>>();
    for (const [m, schema] of Object.entries(f.model_limits ?? {})) {
      if (!f.models.includes(m)) issues.push(src.issue(at('model_limits', m), `model_limits names ${m}, which is not a model of family "${f.name}"`));
      const v = compile(schema, at('model_limits', m));
      if (v) modelLimits.set(m, v);
    }
    (f.vendor_refuses ?? []).forEach((v, j) => {
      const route = routes.find((r) => r.id === v.route);
      if (!f.models.includes(v.model))
        issues.push(src.issue(at('vendor_refuses', j, 'model'), `vendor_refuses names ${v.model}, which is not a model of family "${f.name}"`));
      else if (!route) issues.push(src.issue(at('vendor_refuses', j, 'route'), `vendor_refuses names route ${v.route}, which routes.yaml does not declare`));
      else if (!routeServesModel(route, v.model))
        issues.push(src.issue(at('vendor_refuses', j, 'route'), `vendor_refuses names route ${v.route}, which does not take ${v.model}`));
    });
    const listed = f.models;
    out.push(
      Object.freeze({
        name: f.name,
        description: f.description ?? '',
        models: modelSet(listed),
        modelNames: Object.freeze([...listed]),
        modes: new Map(Object.entries(f.modes ?? {})),
        mode: f.mode !== undefined ? compileMappingAt(src, f.mode, at('mode'), issues) : null,
        limits: f.limits ? compile(f.limits, at('limits')) : null,
        rawLimits: f.limits ?? null,
        modelLimits,
        rawModelLimits: f.model_limits ?? {},
        vendorRefuses: Object.freeze((f.vendor_refuses ?? []).map((v) => Object.freeze({ ...v }))),
      }),
    );
  });
  return out;
}

/**
 * Every model a channel serves on a route belongs to a family: a model in none would skip its
 * family's limits and be missing from the catalogue without a word. A family needs no limits, so
 * a model meant to go unchecked says so by joining one that has none.
 */
export function checkModelsHaveFamilies(
  src: YamlSource,
  channels: readonly RawChannel[],
  routes: readonly RouteDraft[],
  families: readonly CompiledFamily[],
  issues: ConfigIssue[],
): void {
  channels.forEach((c, i) => {
    c.models.forEach((m, j) => {
      const name = typeof m === 'string' ? m : m.name;
      // A pattern is matched against the longest family pattern it falls under, as requests are.
      const probe = name.endsWith('*') ? name.slice(0, -1) : name;
      const served = name.endsWith('*')
        ? routes.some((r) => r.model !== null && r.models.prefixes.includes(probe))
        : routes.some((r) => r.model !== null && routeServesModel(r, name));
      if (!served || familyOf(families, probe) !== null) return;
      issues.push(
        src.issue(
          ['channels', i, 'models', j],
          `model "${name}" (channel ${c.name}) belongs to no family, so no family limits apply to it and the catalogue omits it; add it to a family in routes.yaml (a family without limits is allowed)`,
        ),
      );
    });
  });
}
