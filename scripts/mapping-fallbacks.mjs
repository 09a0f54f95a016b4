#!/usr/bin/env node
// Lists every shipped mapping (or those of the config directory given) that does not compile to the
// mapping fast path, grouped by the construct it lacks. Run after `npm run build`.
import { loadConfig } from '../dist/src/config/load.js';
import { FALLBACK_WARNING } from '../dist/src/config/compile-mapping.js';
import { PROJECT_ROOT } from '../dist/src/config/paths.js';

const dir = process.argv[2] ?? PROJECT_ROOT;
const { issues } = loadConfig(dir, { env: new Proxy({}, { get: () => 'http://env.invalid' }) });
const groups = new Map();
for (const i of issues) {
  if (!i.message.startsWith(FALLBACK_WARNING)) continue;
  const why = /\((.*)\)$/.exec(i.message)?.[1] ?? '?';
  if (!groups.has(why)) groups.set(why, []);
  groups.get(why).push(`${i.file}:${i.line}`);
}
const total = [...groups.values()].reduce((n, g) => n + g.length, 0);
for (const [why, at] of [...groups].sort((a, b) => b[1].length - a[1].length))
  console.log(`${String(at.length).padStart(4)}  ${why}\n      ${at.join('\n      ')}`);
console.log(`${total} mapping(s) fall back to jsonata`);
process.exit(total === 0 ? 0 : 1);
