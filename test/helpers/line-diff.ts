/**
 * A unified diff of two texts, line by line, small enough for a test failure: only the hunks that
 * differ, each with a few lines of context, and at most `maxLines` lines in all. Common leading and
 * trailing lines are set aside first, so a one-line change in a 5,000-line file costs nothing.
 */

interface Op {
  readonly kind: ' ' | '-' | '+';
  readonly text: string;
}

export interface LineDiffOptions {
  /** Unchanged lines shown around each change (default 2). */
  readonly context?: number;
  /** Most lines of diff printed; the rest is counted (default 60). */
  readonly maxLines?: number;
  /** Names of the two sides, for the `---`/`+++` header (default `before`, `after`). */
  readonly labels?: readonly [string, string];
}

/** Lines of `a` and `b` between their common prefix and suffix, as an edit script (a longest common subsequence). */
function middleOps(a: readonly string[], b: readonly string[]): Op[] {
  // Too large a middle for the table: show it as removed, then added.
  if (a.length * b.length > 4_000_000) return [...a.map((text) => ({ kind: '-' as const, text })), ...b.map((text) => ({ kind: '+' as const, text }))];
  const w = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push({ kind: ' ', text: a[i++]! });
      j++;
    } else if (i < a.length && (j === b.length || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) {
      // A removal before an addition, as diff prints them.
      ops.push({ kind: '-', text: a[i++]! });
    } else {
      ops.push({ kind: '+', text: b[j++]! });
    }
  }
  return ops;
}

/** The hunks where `before` and `after` differ, as a unified diff; '' when they are equal. */
export function lineDiff(before: string, after: string, options: LineDiffOptions = {}): string {
  const context = options.context ?? 2;
  const maxLines = options.maxLines ?? 60;
  const [from, to] = options.labels ?? ['before', 'after'];
  if (before === after) return '';
  const a = before.split('\n');
  const b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const ops: Op[] = [
    ...a.slice(0, head).map((text) => ({ kind: ' ' as const, text })),
    ...middleOps(a.slice(head, a.length - tail), b.slice(head, b.length - tail)),
    ...a.slice(a.length - tail).map((text) => ({ kind: ' ' as const, text })),
  ];

  // Hunks: each change with `context` lines around it, changes closer than twice that joined.
  const changed = ops.flatMap((op, k) => (op.kind === ' ' ? [] : [k]));
  const hunks: [number, number][] = [];
  for (const k of changed) {
    const start = Math.max(0, k - context);
    const end = Math.min(ops.length, k + context + 1);
    const last = hunks.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else hunks.push([start, end]);
  }

  const out = [`--- ${from}`, `+++ ${to}`];
  // Line numbers at each op: where it is in `before` and in `after`.
  const lineA: number[] = [];
  const lineB: number[] = [];
  let na = 1;
  let nb = 1;
  for (const op of ops) {
    lineA.push(na);
    lineB.push(nb);
    if (op.kind !== '+') na++;
    if (op.kind !== '-') nb++;
  }
  for (const [start, end] of hunks) {
    const part = ops.slice(start, end);
    const lenA = part.filter((op) => op.kind !== '+').length;
    const lenB = part.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${lineA[start]},${lenA} +${lineB[start]},${lenB} @@`);
    for (const op of part) out.push(`${op.kind}${op.text}`);
  }
  if (out.length <= maxLines) return out.join('\n');
  return [...out.slice(0, maxLines), `… and ${out.length - maxLines} more line(s) of diff`].join('\n');
}
