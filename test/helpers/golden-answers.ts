/**
 * The success answers of the golden cases (test/golden, recorded from a real gateway), each with the
 * route that gave it: what the tests of the OpenAPI document hold to its schemas
 * (test/docs/openapi-answers.test.ts) and to the types a client generates from it
 * (test/docs/openapi-client.test.ts).
 *
 *   for (const { route, body, where } of goldenAnswers(snapshot)) ...
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { CompiledRoute, Snapshot } from '../../src/config/snapshot.js';
import type { GoldenCase, GoldenStep } from '../../src/golden/golden-case.js';
import { listCases } from '../../src/golden/runner.js';
import { matchRoute } from '../../src/http/match-route.js';

/** Kinds whose success answer is a file's bytes, not JSON. */
export const BYTES_KINDS: ReadonlySet<string> = new Set(['task-content', 'link-content']);

export interface GoldenAnswer {
  /** The case file (from the project root) and the step. */
  readonly where: string;
  readonly route: CompiledRoute;
  /** The answer's JSON; of an event stream, its frames' data. */
  readonly body: unknown;
}

/** Every 2xx answer of the golden cases but a file's bytes, matched to its route in `snapshot`. */
export function goldenAnswers(snapshot: Snapshot, dir = `${PROJECT_ROOT}/test/golden`): GoldenAnswer[] {
  const out: GoldenAnswer[] = [];
  for (const file of listCases(dir)) {
    const c = parse(readFileSync(file, 'utf8')) as GoldenCase;
    const steps: readonly GoldenStep[] = c.steps ?? [c];
    steps.forEach((step, i) => {
      if (step.response.status < 200 || step.response.status > 299) return;
      const url = new URL(step.request.path, 'http://golden.test');
      const { route } = matchRoute(snapshot, step.request.method, url.pathname, url.searchParams);
      if (BYTES_KINDS.has(route.kind)) return;
      out.push({ where: `${file.slice(PROJECT_ROOT.length + 1)} step ${i}`, route, body: step.response.body });
    });
  }
  return out;
}

/**
 * An event stream's frames as the answers they are: on a route that always streams each frame is
 * the route's answer, save the protocol's error event that ends a stream failing after its first
 * frame. Null for a stream the client asked for: its events have the vendor protocol's own schemas
 * (test/contract/openai-spec.test.ts holds them to the vendor's specification).
 */
export function answersOf(route: CompiledRoute, body: unknown): unknown[] | null {
  const streamed = route.kind === 'sync' && route.stream !== null && Array.isArray(body);
  if (!streamed) return [body];
  if (route.stream?.askedBy) return null;
  const frames = body as unknown[];
  const last = frames.at(-1);
  return frames.length > 1 && last !== null && typeof last === 'object' && 'error' in last ? frames.slice(0, -1) : frames;
}
