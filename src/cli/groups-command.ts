/** `gateway groups`: the token groups of the configuration with the limits their keys share, and their tokens in the store. */
import type { GroupView } from '../admin/groups-admin.js';
import { formatIssue } from '../config/issues.js';
import { CliExit, parseCommand, usageOf, type UsageEntry } from './args.js';
import { configPlace, configWords, PLACE_FLAGS, placedEnv, requireConfig, requireStore, storePlace } from './locate.js';

/** The form of the command, for the usage texts. */
export const GROUPS_USAGE = {
  synopsis: 'groups [--config DIR] [--db FILE|URL] [--json]',
  about:
    'list the token groups of the config with the rate limits their keys share,\nmax_concurrency, channels, and their tokens in the store (total and active);\n--json: as GET /admin/groups (without inflight and waiting)',
} as const satisfies UsageEntry;

/** A group's shared rate limits in words: `rpm=60 max_parallel=5`, or `none`. */
function limitsText(l: GroupView['limits']): string {
  if (l === null) return 'none';
  return [l.rpm === null ? null : `rpm=${l.rpm}`, l.max_parallel === null ? null : `max_parallel=${l.max_parallel}`].filter((x) => x !== null).join(' ');
}

/** One line per group, as `gateway tokens list` writes tokens. */
export function groupLine(g: GroupView): string {
  const declared = g.declared ? '' : '  NOT DECLARED in channels.yaml (its tokens are refused)';
  return `${g.name}  limits: ${limitsText(g.limits)}  max_concurrency=${g.max_concurrency ?? 'unlimited'}  channels=${g.channels.join(',') || '-'}  tokens=${g.tokens.total} (${g.tokens.active} active)${declared}`;
}

/** Runs `gateway groups`: reads the configuration and the token list (never a key), prints and exits. */
export async function groupsCommand(args: string[]): Promise<void> {
  const { values } = parseCommand(args, usageOf(GROUPS_USAGE), { ...PLACE_FLAGS, json: { type: 'boolean' } });
  const config = configPlace(values.config);
  requireConfig(config);
  const place = storePlace(values.db);
  requireStore(place);
  // Imported after the arguments parsed (see src/cli.ts).
  const [{ settingsFromEnv, openConfiguredStore }, { loadConfig }, { groupsView }] = await Promise.all([
    import('../app.js'),
    import('../config/load.js'),
    import('../admin/groups-admin.js'),
  ]);
  const settings = settingsFromEnv(placedEnv(config, place));
  const { snapshot, issues } = loadConfig(settings.configDir, { extraDirs: settings.extraConfigDirs });
  if (!snapshot) {
    const errors = issues.filter((i) => i.severity === 'error').slice(0, 20);
    throw new CliExit(`the configuration of ${configWords(config)} does not load; run gateway check\n${errors.map(formatIssue).join('\n')}`, 2);
  }
  const store = await openConfiguredStore(settings, { command: true }).catch((err: unknown) => {
    throw new CliExit((err as Error).message, 2);
  });
  let groups: GroupView[];
  try {
    groups = groupsView(snapshot, await store.listTokens(), Date.now());
  } finally {
    await store.close();
  }
  if (values.json === true) return void process.stdout.write(`${JSON.stringify({ groups }, null, 2)}\n`);
  for (const g of groups) process.stdout.write(`${groupLine(g)}\n`);
}
