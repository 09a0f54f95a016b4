/**
 * Reads a V8 .cpuprofile (from `node --cpu-prof`) and summarises where CPU went: the functions
 * with the most self time, and self time grouped by package or source file.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a script URL belongs: a package, a file of this repo, or node's own code. */
function owner(url: string, root: string): string {
  if (url === '') return '(native/vm)';
  if (url.startsWith('node:')) return 'node: internals';
  const path = url.replace(/^file:\/\//, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return `npm ${pkg[1]}`;
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}

function location(node: ProfileNode, root: string): string {
  const { url, lineNumber } = node.callFrame;
  if (url === '') return '';
  const path = url.replace(/^file:\/\//, '');
  const short = path.startsWith(`${root}/`) ? path.slice(root.length + 1).replace(/^node_modules\//, '') : path;
  return `${short}:${lineNumber + 1}`;
}

/** Top functions by self time and self time by owner, as printable lines. */
export function summariseProfile(file: string, root: string, top = 20): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // Sample i lasts until sample i+1 (how DevTools attributes time).
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const fns = new Map<string, number>();
  const owners = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const name = node.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') continue;
    busy += us;
    const key = `${name}  ${location(node, root)}`.trimEnd();
    fns.set(key, (fns.get(key) ?? 0) + us);
    const o = name.startsWith('(') ? name : owner(node.callFrame.url, root);
    owners.set(o, (owners.get(o) ?? 0) + us);
  }
  const pct = (us: number): string => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const ms = (us: number): string => `${(us / 1000).toFixed(0).padStart(6)} ms`;
  const lines = [`busy (non-idle) CPU in profile: ${(busy / 1000).toFixed(0)} ms`, '', 'self time by package / file:'];
  for (const [o, us] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, 15)) lines.push(`  ${pct(us)} ${ms(us)}  ${o}`);
  lines.push('', `top ${top} functions by self time:`);
  for (const [f, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(us)} ${ms(us)}  ${f}`);
  return lines.join('\n');
}
