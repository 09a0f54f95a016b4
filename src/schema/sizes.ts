// Here rather than in config/: the schema keywords (image-keyword.ts) take sizes too, and config/
// already builds on schema/.
const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Turns a config size (`20mb`, `512kb` or a plain byte count) into bytes. */
export function parseSize(size: number | string): number {
  if (typeof size === 'number') return size;
  const m = /^([0-9]+)(b|kb|mb|gb)$/.exec(size);
  if (!m) throw new Error(`not a size: ${size}`);
  return Number(m[1]) * UNITS[m[2]!]!;
}
