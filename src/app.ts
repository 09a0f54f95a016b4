import { delimiter } from 'node:path';
import type { Logger } from 'pino';
import { loadConfigOrThrow, type ChannelOverride } from './config/load.js';
import type { Snapshot } from './config/snapshot.js';
import { createGateway, type Gateway } from './gateway.js';
import type { Simulator } from './sim/http.js';
import { SIMULATORS } from './sim/registry.js';
import { openSqliteStore } from './store/sqlite.js';
import type { Store } from './store/store.js';

/** Settings of a gateway process, from the environment (README: "Settings"). */
export interface AppSettings {
  readonly configDir: string;
  /** More config directories merged in (GATEWAY_CONFIG_EXTRA, separated by the path delimiter). */
  readonly extraConfigDirs: readonly string[];
  readonly dbPath: string;
  readonly port: number;
  readonly host: string;
  /** The base URL clients reach the gateway at, for download links; null: taken from each request's Host. */
  readonly publicUrl: string | null;
}

/** Reads process settings from the environment, with the documented defaults. */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env, defaults: Partial<AppSettings> = {}): AppSettings {
  return {
    configDir: env.GATEWAY_CONFIG_DIR ?? defaults.configDir ?? process.cwd(),
    extraConfigDirs: env.GATEWAY_CONFIG_EXTRA ? env.GATEWAY_CONFIG_EXTRA.split(delimiter).filter(Boolean) : (defaults.extraConfigDirs ?? []),
    dbPath: env.GATEWAY_DB ?? defaults.dbPath ?? 'data/gateway.db',
    port: env.PORT !== undefined ? Number(env.PORT) : (defaults.port ?? 8080),
    host: env.HOST ?? defaults.host ?? '0.0.0.0',
    publicUrl: env.GATEWAY_PUBLIC_URL ?? defaults.publicUrl ?? null,
  };
}

/** A running gateway process: the gateway, its store and any simulators started for it. */
export interface App {
  readonly gateway: Gateway;
  readonly snapshot: Snapshot;
  readonly store: Store;
  readonly simulators: readonly Simulator[];
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts a gateway. With `simulate`, every channel whose `${ENV}` credentials are unset is pointed
 * at an in-process simulator of its profile (demo mode); without it, unset variables fail the load.
 */
export async function startApp(settings: AppSettings, log: Logger, opts: { simulate: boolean; store?: Store }): Promise<App> {
  const simulators: Simulator[] = [];
  let override: ChannelOverride | undefined;
  if (opts.simulate) {
    const byProfile = new Map<string, Simulator>();
    for (const [profile, start] of Object.entries(SIMULATORS)) {
      const sim = await start();
      byProfile.set(profile, sim);
      simulators.push(sim);
    }
    override = (channel, missing) => {
      if (missing.length === 0) return null;
      const sim = byProfile.get(channel.profile);
      if (!sim) return null;
      log.info({ channel: channel.name, profile: channel.profile, simulator: sim.url }, 'channel has no credentials; served by a simulator');
      return { base_url: sim.url, secrets: { ...sim.secrets } };
    };
  }
  try {
    const snapshot = loadConfigOrThrow(settings.configDir, { overrideChannel: override, allowMissingEnv: opts.simulate, extraDirs: settings.extraConfigDirs });
    const store = opts.store ?? openSqliteStore(settings.dbPath);
    const gateway = createGateway({ snapshot: () => snapshot, store, log, publicUrl: settings.publicUrl ?? undefined });
    const port = await gateway.listen(settings.port, settings.host);
    return {
      gateway,
      snapshot,
      store,
      simulators,
      port,
      async close() {
        await gateway.close();
        await store.close();
        await Promise.all(simulators.map((s) => s.close()));
      },
    };
  } catch (err) {
    await Promise.all(simulators.map((s) => s.close()));
    throw err;
  }
}
