/**
 * Valid requests to start from: every public request of the golden cases that was answered 200
 * (so the fuzzer mutates bodies a route really accepts, for every profile), and the routes of the
 * config with a concrete path each (so routes without a golden case are reached too).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { CompiledRoute } from '../../src/config/snapshot.js';
import { modelOf, modelsOf, taskOf } from '../helpers/route-parts.js';
import type { GoldenCase, GoldenStep } from '../../src/golden/golden-case.js';

/** A request the gateway answered 200 in a golden case. */
export interface Seed {
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
}

/** The accepted JSON requests of every golden case under `dir`, except those naming golden task ids. */
export function goldenSeeds(dir: string): Seed[] {
  const out: Seed[] = [];
  for (const profile of readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const file of readdirSync(join(dir, profile.name)).filter((f) => f.endsWith('.yaml'))) {
      const c = parse(readFileSync(join(dir, profile.name, file), 'utf8')) as GoldenCase;
      const steps: readonly GoldenStep[] = c.steps ?? [c];
      for (const s of steps) {
        if (s.response?.status !== 200 || s.request.body === undefined || s.request.headers?.['content-type']?.startsWith('multipart/')) continue;
        // Ids of golden tasks exist only in that case's own store.
        if (s.request.path.includes('task_golden')) continue;
        out.push({ method: s.request.method, path: s.request.path, body: s.request.body });
      }
    }
  }
  return out;
}

/** A concrete path for a route: parameters filled with `fill` (the model where a parameter names one), required query values added. */
export function pathOf(route: CompiledRoute, fill: string): string {
  const models = modelsOf(route);
  const where = modelOf(route);
  const taskId = taskOf(route)?.id;
  const model = [...models.exact][0] ?? `${models.prefixes[0] ?? ''}fuzz`;
  const path = route.path.replace(/\{([^{}]+)\}/g, (_, name: string) => encodeURIComponent(where?.from === 'path' && where.name === name ? model : fill));
  const q = new URLSearchParams(route.matchQuery);
  if (taskId?.from === 'query') q.set(taskId.name, fill);
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

/** A minimal body for a route with no golden seed: its model field, where the model comes from the body. */
export function minimalBody(route: CompiledRoute): Record<string, unknown> {
  const where = modelOf(route);
  if (where?.from !== 'body') return {};
  const models = modelsOf(route);
  const model = [...models.exact][0] ?? `${models.prefixes[0] ?? ''}fuzz`;
  return { [where.pointer[0]!]: model, prompt: 'a lighthouse at dawn' };
}
