// Here rather than in config/: the schema keywords (image-keyword.ts) take sizes too, and config/
// already builds on schema/.
const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Turns a config size (`20mb`, `512kb` or a plain byte count) into bytes; units are binary (`1mb` is 1,048,576). */
export function parseSize(size: number | string): number {
  if (typeof size === 'number') return size;
  const m = /^([0-9]+)(b|kb|mb|gb)$/.exec(size);
  const unit = UNITS[m?.[2] ?? ''];
  if (!m || unit === undefined) throw new Error(`not a size: ${size}`);
  return Number(m[1]) * unit;
}

/** A byte count in words as the catalogue and refusals say it: "50 MB", "1.5 KB", "200 bytes" (binary units, as parseSize). */
export function sizeWords(n: number): string {
  const MB = 1024 * 1024;
  if (n >= MB) return `${round(n / MB)} MB`;
  if (n >= 1024) return `${round(n / 1024)} KB`;
  return `${n} bytes`;
}

/** "15,728,640": an exact byte count a reader can take in. */
export function groupDigits(n: number): string {
  return String(n).replace(/\B(?=([0-9]{3})+(?![0-9]))/g, ',');
}

const round = (n: number) => String(Math.round(n * 100) / 100);
