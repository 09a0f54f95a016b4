import type { Setting } from '../settings.js';
import type { ChannelVars } from './channel-vars.js';

/** Comment lines of at most about 100 characters, each starting `# `. */
function comment(text: string, width = 100): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line.length + 1 + word.length > width && line !== '#') {
      lines.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  if (line !== '#') lines.push(line);
  return lines;
}

/** What a channel's field is for, said without knowing the vendor. */
function fieldMeaning(field: string): string {
  if (field === 'base_url') return "the vendor API's base URL";
  if (field.startsWith('secrets.')) return `the credential "${field.slice('secrets.'.length)}" its requests are signed with`;
  return field;
}

/** A few of a channel's models, and how many more. */
function someModels(models: readonly string[]): string {
  const shown = models.slice(0, 4).join(', ');
  return models.length > 4 ? `${shown} and ${models.length - 4} more` : shown;
}

/**
 * The text of `.env.example`: every setting of `settings` (the gateway's own list, src/settings.ts)
 * with its default, then every variable the channels name, under the channel that names it first,
 * with what it is for. Everything is commented out: an empty `PORT=` would mean port 0, so only
 * what an operator uncomments is set.
 */
export function renderEnvExample(version: string, settings: readonly Setting[], channels: readonly ChannelVars[]): string {
  const out: string[] = [
    `# Generation Gateway ${version}: every environment variable it reads, and what each is for.`,
    ...comment(
      "Written by `gateway init` from the gateway's own list of settings and from the channels of this directory, so it names what this version and this configuration read. Copy it to .env, uncomment and set what you need. The gateway does not read .env itself: systemd (EnvironmentFile=), docker compose (env_file:) or `set -a; . ./.env; set +a` hand it to the process.",
    ),
    '',
    '# ---------------------------------------------------------------------------------------------',
    ...comment('The gateway\'s settings. Unset, each takes the value shown after "="; where none is shown, its comment says what unset means.'),
    '# ---------------------------------------------------------------------------------------------',
  ];
  for (const s of settings) out.push('', ...comment(s.about), `#${s.name}=${s.default ?? ''}`);

  out.push(
    '',
    '# ---------------------------------------------------------------------------------------------',
    ...comment(
      'Channel variables. A channel serves once every variable it names is set (and not empty); until then it is left out of routing, and the start logs "channel left out" with the variables it lacks (GATEWAY_STRICT=1 refuses to start instead). Set the variables of the vendors you have keys for.',
    ),
    '# ---------------------------------------------------------------------------------------------',
  );
  const listed = new Map<string, string>();
  for (const c of channels) {
    out.push('', ...comment(`Channel ${c.name} (profile ${c.profile}, ${c.file}:${c.line})${c.models.length > 0 ? `: ${someModels(c.models)}` : ''}`));
    if (c.vars.length === 0) out.push('# (names no variable: it serves as written)');
    for (const v of c.vars) {
      const first = listed.get(v.name);
      if (first !== undefined) {
        out.push(...comment(`${v.name} (above, for channel ${first}) is also its ${v.field}.`));
        continue;
      }
      listed.set(v.name, c.name);
      const dflt = v.default === null ? '' : ` Unset, it is "${v.default}".`;
      out.push(...comment(`${v.field}: ${fieldMeaning(v.field)}.${dflt}`), `#${v.name}=${v.default ?? ''}`);
    }
  }
  return `${out.join('\n')}\n`;
}
