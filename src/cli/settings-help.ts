/** The settings paragraph of `gateway --help`, made from the one list of settings (src/settings.ts), never written by hand. */
import { SETTINGS, type Setting } from '../settings.js';

/** `NAME (default)`, or the name alone when unset means off. */
function item(s: Setting): string {
  return s.default === null ? s.name : `${s.name} (${s.default === '' ? '""' : s.default})`;
}

/**
 * Every setting with its default, comma-separated and wrapped to `width` columns under a heading
 * that says where each one's meaning is written: `.env.example` (which `gateway init` writes from
 * the same list) and docs/operating.md.
 */
export function settingsHelp(settings: readonly Setting[] = SETTINGS, width = 120): string {
  const lines = ['settings (environment; what each means: the .env.example gateway init writes, or docs/operating.md, "Settings"):'];
  let line = ' ';
  for (const [i, s] of settings.entries()) {
    const word = `${item(s)}${i < settings.length - 1 ? ',' : ''}`;
    if (line.length + 1 + word.length > width && line.trim() !== '') {
      lines.push(line);
      line = ' ';
    }
    line += ` ${word}`;
  }
  if (line.trim() !== '') lines.push(line);
  return lines.join('\n');
}
