import { compileMappingAt } from './compile-mapping.js';
import {
  compileBody,
  bodyValidator,
  compileExample,
  compileTask,
  compileRouteStream,
  keySourcesOf,
  linkPlacesOf,
  modelSourceOf,
  type BodySchema,
} from './compile-route-parts.js';
import { modelSet, typedRoute, type RouteDraft } from './compile-route-draft.js';
import { compileRouteArchive } from './compile-route-archive.js';
import { checkKindRules, type RawRoute } from './compile-route-rules.js';
import { compileResources } from './compile-resources.js';
import { compileResponses } from './compile-responses.js';
import type { ConfigIssue } from './issues.js';
import { routeServesModel } from './lookups.js';
import { compilePathTemplate } from './path-template.js';
import type { SchemaCompiler } from './schema-compiler.js';
import type { CompiledRoute, PathMatcher } from './snapshot.js';
import { placeOf, type YamlSource } from './yaml-source.js';

/**
 * Compiles routes.yaml (already schema-valid) into routes; problems are pushed onto `issues`.
 * `routes` are the variants the snapshot serves; `drafts` are every route as compiled, well formed
 * or not, for the checks of the other tables (compile-route-draft.ts).
 */
export function compileRoutes(
  src: YamlSource,
  configDir: string,
  schemas: SchemaCompiler,
  issues: ConfigIssue[],
): { routes: CompiledRoute[]; drafts: RouteDraft[] } {
  const raw = (src.value as { routes: RawRoute[] }).routes;
  const seenIds = new Map<string, number>();
  const seenPaths = new Map<string, number>();
  // One validator per schema file: ajv refuses a second compile of a schema with the same $id.
  const validators = new Map<string, BodySchema>();
  const out: RouteDraft[] = [];
  const responses = compileResponses(raw, configDir, schemas, validators, (i, msg) => void issues.push(src.issue(['routes', i, 'response', 'schema'], msg)));

  raw.forEach((r, i) => {
    const at = (...rest: (string | number)[]) => ['routes', i, ...rest];
    const report = (rest: (string | number)[], msg: string) => void issues.push(src.issue(at(...rest), msg));
    // The first declaration's place, as the merged list's index means nothing to the reader of a fragment.
    const first = (j: number) => `route "${raw[j]?.id}" (${placeOf(src, ['routes', j])})`;
    const idAt = seenIds.get(r.id);
    if (idAt !== undefined) report(['id'], `route id "${r.id}" is already used by the route at ${placeOf(src, ['routes', idAt])}`);
    else seenIds.set(r.id, i);
    const { key, cond } = pathKey(r);
    const pathAt = seenPaths.get(key);
    if (pathAt !== undefined) {
      report(
        ['path'],
        `${r.method} ${r.path}${cond ? ` with ${cond}` : ''} is already declared by ${first(pathAt)}; to add models to it from another file, use extend`,
      );
    } else seenPaths.set(key, i);

    let matcher: PathMatcher | undefined;
    try {
      matcher = compilePathTemplate(r.path);
    } catch (err) {
      report(['path'], (err as Error).message);
    }
    checkKindRules(r, matcher, report);
    const compiled = r.body ? bodyValidator(r.body.schema, configDir, schemas, validators, (msg) => report(['body', 'schema'], msg)) : undefined;
    const body = r.body && compiled ? compileBody(r.body, compiled) : null;

    const models = modelSet(r.models ?? []);
    const { resource, references } = compileResources(r, matcher, r.body !== undefined, report, (expr, rest) =>
      compileMappingAt(src, expr, at(...rest), issues),
    );
    const task = r.task
      ? compileTask(
          r,
          r.task,
          matcher,
          (rest, msg) => report(['task', ...rest], msg),
          (expr) => compileMappingAt(src, expr, at('task', 'answer'), issues),
        )
      : null;
    const example = r.example && matcher ? compileExample(r, r.example, matcher, body, models, (rest, msg) => report(['example', ...rest], msg)) : null;

    // Kept even when its body or path failed, so channels are not also blamed for "unserved"
    // models; the load fails on the issue anyway.
    if (r.model?.value !== undefined && !routeServesModel({ models }, r.model.value)) {
      report(['model', 'value'], `the route's fixed model ${r.model.value} is not one of its models`);
    }
    out.push(
      Object.freeze({
        id: r.id,
        description: r.description ?? '',
        summary: r.summary ?? null,
        method: r.method,
        path: r.path,
        matcher: matcher ?? { template: r.path, params: [], match: () => null },
        kind: r.kind,
        operation: r.operation ?? '',
        // A link is its own credential: its route asks for no key.
        keySources: r.kind === 'link-content' ? [] : keySourcesOf(r.auth),
        model: modelSourceOf(r.model),
        models,
        body,
        response: responses[i] ?? null,
        task,
        example,
        matchQuery: Object.freeze({ ...(r.match_query ?? {}) }),
        stream: r.kind === 'sync' ? compileRouteStream(r, (expr, rest) => compileMappingAt(src, expr, at(...rest), issues), report) : null,
        mode: r.mode !== undefined ? compileMappingAt(src, r.mode, at('mode'), issues) : null,
        resource,
        references,
        answer: r.answer !== undefined ? compileMappingAt(src, r.answer, at('answer'), issues) : null,
        list: r.list !== undefined ? compileMappingAt(src, r.list, at('list'), issues) : null,
        links: r.kind === 'sync' ? linkPlacesOf(r) : null,
        archive: compileRouteArchive(r, report),
      }),
    );
  });
  const drafts = checkLinkRoute(src, out, issues);
  const routes = drafts.flatMap((d) => typedRoute(d) ?? []);
  // A route left out must be one an error already names: the snapshot is then never served.
  if (routes.length < drafts.length && !issues.some((i) => i.severity === 'error')) {
    issues.push(src.issue(['routes'], 'a route could not be compiled into its kind'));
  }
  return { routes, drafts };
}

/**
 * Links need one route to serve them: a second `link-content` route is an error, and so is a link
 * path without exactly one parameter (the link's secret). Without any, sync routes pass vendor URLs,
 * a warning for each that would have linked them, an error where the route asked for `links`.
 */
function checkLinkRoute(src: YamlSource, routes: RouteDraft[], issues: ConfigIssue[]): RouteDraft[] {
  const served = routes.map((r, i) => ({ r, i })).filter(({ r }) => r.kind === 'link-content');
  const [owner, ...others] = served;
  for (const { i } of others)
    issues.push(
      src.issue(
        ['routes', i, 'kind'],
        `only one link-content route may serve links; route "${owner?.r.id}" (${placeOf(src, ['routes', owner?.i ?? 0])}) already does`,
      ),
    );
  for (const { r, i } of served) {
    if (r.matcher.params.length !== 1)
      issues.push(src.issue(['routes', i, 'path'], `a link-content path names exactly one parameter, the link's secret: ${r.path}`));
  }
  if (owner) return routes;
  return routes.map((r, i) => {
    if (r.links === null || r.links.mode === 'pass') return r;
    if (r.links.mode === 'at' && r.links.places.length > 0) {
      issues.push(src.issue(['routes', i, 'links'], 'links need a link-content route to serve them; none is declared'));
    } else if (r.links.mode === 'scan') {
      issues.push(
        src.issue(
          ['routes', i],
          `no link-content route is declared: the answers of sync route "${r.id}" pass vendor URLs to clients (declare one, or say pass_vendor_url: true)`,
          'warning',
        ),
      );
    }
    return Object.freeze({ ...r, links: { mode: 'pass' } as const });
  });
}

/**
 * What two routes may not share: method, path shape and required query values. Parameter names
 * do not change which paths a template matches (/a/{x} and /a/{y} collide); routes on one path
 * may differ by the query values they require (match_query).
 */
function pathKey(r: RawRoute): { key: string; cond: string } {
  const cond = Object.entries(r.match_query ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return { key: `${r.method} ${r.path.replace(/\{[^{}]*\}/g, '{}')}${cond ? `?${cond}` : ''}`, cond };
}
