/**
 * The mappings of the shipped config (PROJECT_ROOT) as the gateway compiles them, and the inputs
 * their golden cases give them: the basis of the differential test and of the "no shipped mapping
 * falls back to jsonata" check (scripts/mapping-fallbacks.mjs lists the same from the command line).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { FALLBACK_WARNING } from '../../src/config/compile-mapping.js';
import type { ConfigIssue } from '../../src/config/issues.js';
import { loadConfig } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Mapping } from '../../src/mapping/mapping.js';

type Obj = Record<string, unknown>;

/** One shipped mapping: where it is written, its text, and its profile (null for routes, families, prices). */
export interface ShippedMapping {
  readonly where: string;
  readonly source: string;
  readonly profile: string | null;
}

/** Every environment variable set (to a value that also passes as a base URL), so no channel is left out for want of one. */
const ANY_ENV = new Proxy({}, { get: () => 'http://env.invalid' }) as NodeJS.ProcessEnv;

/** Loads a config directory (the shipped one by default) with every variable set. */
export function loadShipped(dir = PROJECT_ROOT): { mappings: ShippedMapping[]; issues: ConfigIssue[] } {
  const { snapshot, issues } = loadConfig(dir, { env: ANY_ENV });
  if (!snapshot) throw new Error(`the config does not load: ${JSON.stringify(issues.filter((i) => i.severity === 'error'))}`);
  const seen = new Set<string>();
  const mappings: ShippedMapping[] = [];
  const collect = (root: unknown, profile: string | null) => {
    const visit = (v: unknown, depth: number): void => {
      if (v === null || typeof v !== 'object' || depth > 12) return;
      const m = v as Partial<Mapping>;
      if (typeof m.source === 'string' && typeof m.where === 'string' && typeof m.evaluate === 'function') {
        const key = `${m.where}\n${m.source}`;
        if (!seen.has(key)) mappings.push({ where: m.where, source: m.source, profile });
        seen.add(key);
        return;
      }
      const values = v instanceof Map ? [...v.values()] : Array.isArray(v) ? v : Object.values(v);
      for (const x of values) visit(x, depth + 1);
    };
    visit(root, 0);
  };
  for (const [name, p] of snapshot.profiles) collect(p, name);
  collect([snapshot.routes, snapshot.families, snapshot.prices], null);
  return { mappings, issues };
}

/** The issues of a load that say a mapping falls back to jsonata. */
export function fallbackWarnings(issues: readonly ConfigIssue[]): ConfigIssue[] {
  return issues.filter((i) => i.message.startsWith(FALLBACK_WARNING));
}

/** What the golden cases of one profile hold: the public request bodies (with their models) and the vendor's answers. */
export interface GoldenData {
  readonly requests: { body: unknown; model: unknown }[];
  /** Each with the public body of the request it answered (response mappings read it as `request`). */
  readonly answers: { status: unknown; headers: unknown; body: unknown; request: unknown }[];
}

/** The golden data of every profile (test/golden/<profile>/*.yaml), every step of a case included. */
export function goldenData(): Map<string, GoldenData> {
  const out = new Map<string, GoldenData>();
  const dir = join(PROJECT_ROOT, 'test/golden');
  for (const profile of readdirSync(dir).sort()) {
    const data: GoldenData = { requests: [], answers: [] };
    for (const f of readdirSync(join(dir, profile))
      .filter((x) => x.endsWith('.yaml'))
      .sort()) {
      let request: unknown;
      const visit = (v: unknown, key: string): void => {
        if (v === null || typeof v !== 'object') return;
        const o = v as Obj;
        if (key === 'request' && 'body' in o) {
          data.requests.push({ body: o.body, model: modelOf(o) });
          request = o.body;
        }
        if (key === 'upstream_response' && 'status' in o) data.answers.push({ status: o.status, headers: o.headers ?? {}, body: answerBody(o), request });
        for (const [k, x] of Object.entries(o)) visit(x, Array.isArray(o) ? key : k);
      };
      visit(parseDocument(readFileSync(join(dir, profile, f), 'utf8')).toJS(), '');
    }
    out.set(profile, data);
  }
  return out;
}

function modelOf(request: Obj): unknown {
  const body = request.body as Obj | null;
  if (body && typeof body === 'object' && typeof body.model === 'string') return body.model;
  return /\/models\/([^/:]+):/.exec(String(request.path))?.[1] ?? 'm';
}

function answerBody(u: Obj): unknown {
  if (u.raw_body === undefined) return u.body;
  try {
    return JSON.parse(String(u.raw_body));
  } catch {
    return null; // what the gateway gives the error mapping for an unparseable body
  }
}
