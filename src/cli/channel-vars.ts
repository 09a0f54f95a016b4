import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';

/** One `${NAME}` a channel names: where in the channel, and its default if it has one. */
export interface ChannelVar {
  readonly name: string;
  /** Where in the channel, e.g. `base_url` or `secrets.key`. */
  readonly field: string;
  /** The `${NAME:-default}` default; null when there is none (unset leaves the channel out). */
  readonly default: string | null;
}

/** A channel of a config directory and the variables it names. */
export interface ChannelVars {
  readonly name: string;
  readonly profile: string;
  readonly models: readonly string[];
  /** The file relative to the directory, and the line of the channel's entry in it. */
  readonly file: string;
  readonly line: number;
  /** Offset of the first character of the line the entry starts on (where a comment above it goes). */
  readonly lineStart: number;
  /** Indentation of the entry's `-`. */
  readonly indent: string;
  readonly vars: readonly ChannelVar[];
}

/** The same references the loader resolves (config/env.ts): `${NAME}` or `${NAME:-default}`. */
const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** channels.yaml then channels.d/*.yaml of a directory, in the loader's order, relative to it. */
export function channelFiles(dir: string): string[] {
  const fragments = join(dir, 'channels.d');
  return [
    ...(existsSync(join(dir, 'channels.yaml')) ? ['channels.yaml'] : []),
    ...(existsSync(fragments)
      ? readdirSync(fragments)
          .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
          .sort()
          .map((f) => join('channels.d', f))
      : []),
  ];
}

/** The references in every string of `value`, with the dotted path of each. */
function refsIn(value: unknown, path: string, out: ChannelVar[]): ChannelVar[] {
  if (typeof value === 'string') {
    for (const [, name = '', dflt] of value.matchAll(REF)) out.push({ name, field: path, default: dflt ?? null });
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) refsIn(v, `${path}[${i}]`, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) refsIn(v, path ? `${path}.${k}` : k, out);
  }
  return out;
}

/**
 * Every channel of the text of one channel file, with its variables and where its entry starts.
 * A file that does not parse has none here: the loader reports it.
 */
export function channelsOfText(file: string, text: string): ChannelVars[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  if (doc.errors.length > 0) return [];
  const seq = doc.get('channels', true);
  if (!isSeq(seq)) return [];
  return seq.items.flatMap((item) => {
    if (!isMap(item) || !item.range) return [];
    const c = item.toJSON() as { name?: unknown; profile?: unknown; models?: unknown };
    const start = item.range[0];
    const lineStart = text.lastIndexOf('\n', start - 1) + 1;
    // The entry's `-` stands before its first key on the same line: the indentation ends at it.
    const indent = /^[ ]*/.exec(text.slice(lineStart))?.[0] ?? '';
    return [
      {
        name: String(c.name ?? '?'),
        profile: String(c.profile ?? '?'),
        models: Array.isArray(c.models) ? c.models.map(modelName) : [],
        file,
        line: lineCounter.linePos(start).line,
        lineStart,
        indent,
        vars: refsIn(c, '', []),
      },
    ];
  });
}

/** A model entry's public name: the name itself, or `name` of `{ name, upstream }`. */
function modelName(m: unknown): string {
  return typeof m === 'object' && m !== null && 'name' in m ? String(m.name) : String(m);
}

/** Every channel of a config directory (channels.yaml and channels.d/), in the loader's order. */
export function channelsOf(dir: string): ChannelVars[] {
  return channelFiles(dir).flatMap((f) => channelsOfText(f, readFileSync(join(dir, f), 'utf8')));
}
