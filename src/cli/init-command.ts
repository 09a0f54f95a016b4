import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../config/paths.js';
import { SETTINGS } from '../settings.js';
import { CliExit, parseCommand, usageOf, type UsageEntry } from './args.js';
import { channelFiles, channelsOfText, type ChannelVars } from './channel-vars.js';
import { renderEnvExample } from './env-example.js';
import { packageVersion } from './package-info.js';

/** The usage of `gateway init`. */
export const INIT_USAGE = {
  synopsis: 'init <dir>',
  about:
    'write a config directory: the shipped routes, channels and schemas, each channel\noff until its variables are set, and a .env.example of every variable',
} as const satisfies UsageEntry;

/** The files of the shipped configuration a config directory needs, relative to the package root. */
function shippedFiles(): string[] {
  // Folders included (schemas/public/answers/: the answer schemas the routes name).
  const under = (dir: string, ext: string): string[] =>
    readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((f) => (f.isDirectory() ? under(join(dir, f.name), ext) : f.name.endsWith(ext) ? [join(dir, f.name)] : []));
  // The body and answer schemas the routes name (schemas/public), and the config schemas that editors
  // validate with (each file's `yaml-language-server` line points at them).
  return [
    'routes.yaml',
    ...under('routes.d', '.yaml'),
    ...channelFiles(PROJECT_ROOT),
    ...under('schemas/config', '.json'),
    ...under('schemas/public', '.json'),
  ];
}

/** The variables of a channel, as a sentence: "A and B", "A, B and C". */
function either(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/**
 * A channel file with a comment above each channel naming the variables it needs. The rest of the
 * text is the shipped file byte for byte: the loader reads what was tested.
 */
export function annotateChannels(text: string, channels: readonly ChannelVars[]): string {
  let out = text;
  // From the last entry up, so the offsets of the earlier ones still hold.
  for (const c of [...channels].reverse()) {
    const needed = [...new Set(c.vars.filter((v) => v.default === null).map((v) => v.name))];
    if (needed.length === 0) continue;
    const note = `${c.indent}# Off (left out) until ${either(needed)} ${needed.length > 1 ? 'are' : 'is'} set: see .env.example.\n`;
    out = out.slice(0, c.lineStart) + note + out.slice(c.lineStart);
  }
  return out;
}

/**
 * `gateway init <dir>`: a config directory an operator owns, from the configuration this package
 * ships. No channel is disabled in the file: a channel whose variables are unset is left out by the
 * loader, so setting them is all it takes (and `gateway sims` or the demo can bring every channel in).
 */
export async function initCommand(args: string[]): Promise<void> {
  const { positionals } = parseCommand(args, usageOf(INIT_USAGE), {}, { required: ['dir'] });
  const dir = resolve(positionals[0] ?? '');
  const files = shippedFiles();
  const written = [...files, '.env.example'];
  const clash = written.filter((f) => existsSync(join(dir, f)));
  if (clash.length > 0) {
    const named = clash.slice(0, 5).join(', ') + (clash.length > 5 ? ` and ${clash.length - 5} more` : '');
    throw new CliExit(`${dir} already holds ${named}; init writes only into a new or empty directory, and overwrites nothing`, 1);
  }
  const channels: ChannelVars[] = [];
  for (const f of files) {
    let text = readFileSync(join(PROJECT_ROOT, f), 'utf8');
    if (f === 'channels.yaml' || f.startsWith('channels.d')) {
      text = annotateChannels(text, channelsOfText(f, text));
      // Read again from what is written: the lines .env.example names are those of this directory.
      channels.push(...channelsOfText(f, text));
    }
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  writeFileSync(join(dir, '.env.example'), renderEnvExample(packageVersion(), SETTINGS, channels));
  const needing = channels.filter((c) => c.vars.some((v) => v.default === null)).length;
  process.stdout.write(
    [
      `wrote ${written.length} files to ${dir}: routes.yaml, routes.d/, channels.yaml, channels.d/, schemas/, .env.example`,
      `${channels.length} channels; ${needing} of them are left out until their variables are set (.env.example names them)`,
      'next: copy .env.example to .env, set the variables of the vendors you have keys for, and run',
      // As a user of the installed package types it (the bin is not on PATH; docs/deploying.md, "Package").
      `  npx gateway start --config ${positionals[0]}`,
      '',
    ].join('\n'),
  );
}
