/**
 * The name an operator most likely meant: the closest of `candidates` to `name` by edit distance
 * (insertions, deletions, substitutions and swaps of two neighbours, ignoring case), when it is
 * close enough to be a slip of the keyboard: at most a third of the name's length, and at least 1
 * or 2 edits for short names. Null when nothing is that close. Ties go to the earlier candidate.
 */
export function nearestName(name: string, candidates: Iterable<string>): string | null {
  const limit = Math.max(name.length <= 4 ? 1 : 2, Math.floor(name.length / 3));
  let best: string | null = null;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    if (c === name) continue;
    const d = editDistance(name.toLowerCase(), c.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** The optimal string alignment distance of `a` and `b`; `cap` when their lengths alone differ by that much. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      row.push(d);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length] ?? cap;
}
