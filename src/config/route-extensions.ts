import type { ConfigIssue } from './issues.js';
import { placeOf, type YamlSource } from './yaml-source.js';

/**
 * Route extensions: a routes file (a `routes.d/` fragment, an extra directory's) may add models to
 * a route another file declares, by its id, so a new vendor's public models join the shipped
 * routes without editing them (docs/channels-yaml.md, "Fragments and extra directories"):
 *
 *     extend:
 *       - { route: videos, models: [kitchen-video-1, kitchen-*] }
 *
 * The models it adds need a family like any other (`families:` of the same fragment). An extension
 * may add only what the route does not serve yet: a name or pattern the route (or an earlier
 * extension) already lists, or that a pattern of the route already covers, is an error naming both
 * places, since two vendors claiming one public name is exactly the clash an operator must see. A
 * broader pattern over names the route lists is allowed: it adds the rest of its prefix.
 */

/** One entry of `extend`, as routes.schema.json admits it. */
interface RawExtension {
  route: string;
  models: string[];
}

/** A route of the merged list: its raw value and where it was declared. */
export interface RouteItem {
  readonly src: YamlSource;
  readonly index: number;
  value: unknown;
}

/** Where one model of a route was listed: a file and the path of the entry in it. */
export interface ModelPlace {
  readonly src: YamlSource;
  readonly path: readonly (string | number)[];
}

/** A model an extension added to a route, and where it was listed. */
export interface AddedModel extends ModelPlace {
  readonly name: string;
}

/** The raw route fields an extension reads. */
interface RawRouteView {
  id?: string;
  models?: string[];
  model?: { value?: string };
}

/**
 * Applies the `extend` entries of `files` (in reading order) to `routes`: each extended route's
 * value is replaced by a copy whose `models` carry the added names after its own. Returns, per
 * route index, where each added model was listed (for the merged source's owner mapping); every
 * refusal is pushed onto `issues` at the extension's own file and line.
 */
export function applyRouteExtensions(routes: RouteItem[], files: readonly YamlSource[], issues: ConfigIssue[]): Map<number, AddedModel[]> {
  const byId = new Map<string, number>();
  routes.forEach((r, i) => {
    const id = (r.value as RawRouteView).id;
    // A duplicate id is compile-routes' to report; the first declaration is the one extended.
    if (typeof id === 'string' && !byId.has(id)) byId.set(id, i);
  });
  const added = new Map<number, AddedModel[]>();
  const listed = new Map<number, Map<string, ModelPlace>>();
  /** What route `i` lists so far, each name with where it was listed. */
  const listOf = (i: number, r: RouteItem): Map<string, ModelPlace> => {
    let list = listed.get(i);
    if (!list) {
      list = new Map(((r.value as RawRouteView).models ?? []).map((m, j) => [m, { src: r.src, path: ['routes', r.index, 'models', j] }]));
      listed.set(i, list);
    }
    return list;
  };

  for (const src of files) {
    const entries = (src.value as { extend?: RawExtension[] }).extend ?? [];
    entries.forEach((e, k) => {
      const i = byId.get(e.route);
      const route = i === undefined ? undefined : routes[i];
      if (i === undefined || !route) {
        issues.push(src.issue(['extend', k, 'route'], `extend names route "${e.route}", which no routes file declares`));
        return;
      }
      const raw = route.value as RawRouteView;
      if (raw.models === undefined || raw.model === undefined || raw.model.value !== undefined) {
        const where = placeOf(route.src, ['routes', route.index]);
        issues.push(src.issue(['extend', k, 'route'], `route "${e.route}" (${where}) reads no model from the request, so it cannot serve more models`));
        return;
      }
      const list = listOf(i, route);
      e.models.forEach((m, j) => {
        const here: ModelPlace = { src, path: ['extend', k, 'models', j] };
        const clash = servedAlready(list, m);
        if (clash) {
          const where = placeOf(clash.place.src, clash.place.path);
          const how =
            clash.name === m ? `is already on route "${e.route}" (${where})` : `is already served by route "${e.route}" through ${clash.name} (${where})`;
          issues.push(src.issue(here.path, `model ${m} ${how}`));
          return;
        }
        list.set(m, here);
        added.set(i, [...(added.get(i) ?? []), { ...here, name: m }]);
      });
    });
  }
  for (const [i, places] of added) {
    const route = routes[i];
    if (!route) continue;
    const own = (route.value as RawRouteView).models ?? [];
    // A copy: the YAML value may be shared (an anchor's list of models serves several routes).
    route.value = { ...(route.value as object), models: [...own, ...places.map((p) => p.name)] };
  }
  return added;
}

/**
 * The entry of `list` that already serves `model`: the same name or pattern, or a pattern whose
 * prefix covers it (`kitchen-*` covers `kitchen-1` and `kitchen-1*`); null when the model adds something.
 */
function servedAlready(list: ReadonlyMap<string, ModelPlace>, model: string): { name: string; place: ModelPlace } | null {
  const same = list.get(model);
  if (same) return { name: model, place: same };
  const probe = model.endsWith('*') ? model.slice(0, -1) : model;
  for (const [name, place] of list) {
    if (name.endsWith('*') && probe.startsWith(name.slice(0, -1))) return { name, place };
  }
  return null;
}
