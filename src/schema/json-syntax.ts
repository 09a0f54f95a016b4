/**
 * Where a JSON.parse failure is, in words that do not depend on the Node version (V8's messages
 * change between releases; the position they carry does not): ` at line L, column C` or `` when
 * the text ended too early.
 */
export function jsonErrorPosition(text: string, err: unknown): string {
  const m = /position (\d+)/.exec((err as Error).message ?? '');
  if (!m) return ' (the text ends too early)';
  const pos = Math.min(Number(m[1]), text.length);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return ` at line ${line}, column ${column}`;
}
