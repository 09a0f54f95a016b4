/**
 * End-to-end harness: an alpha simulator, a real gateway on port 0 in front of it (in-memory
 * store, silent logger) and a token to call it with. Used by the e2e and official-client tests.
 *
 *   const h = await startHarness({ token: { quota: 2 } });
 *   after(() => h.close());
 *   const res = await postJson(h.url, '/v1beta/models/alpha-3-pro-image-preview:generateContent', body, { authorization: `Bearer ${h.key}` });
 */
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import type { Logger } from 'pino';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { startAlphaSimulator, type AlphaSimOptions } from '../../src/sim/alpha-native.js';
import type { Simulator } from '../../src/sim/http.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';

/** What a test token may be limited to; defaults: group `default`, every model, no quota. */
export interface TokenOptions {
  readonly group?: string;
  readonly models?: readonly string[] | null;
  readonly quota?: number | null;
  /** Rate limits (docs/tokens-and-quota.md, "Rate limits"); default none. */
  readonly rpmLimit?: number | null;
  readonly maxParallel?: number | null;
  /** When the key stops working, Unix ms (docs/tokens-and-quota.md, "Expiry"); default never. */
  readonly expiresAt?: number | null;
}

/** How to start a harness; every field is optional. */
export interface HarnessOptions {
  /** Config directory holding routes.yaml and channels.yaml; default the repository's. */
  readonly configDir?: string;
  /** Upstream timeouts of the alpha channel instead of its configured ones (timeout tests). */
  readonly timeouts?: { connect_ms: number; headers_ms: number; body_ms: number };
  /** Options of the alpha simulator (its key, its image delivery). */
  readonly sim?: AlphaSimOptions;
  /** Where the alpha channel points instead of the simulator (e.g. a closed port). */
  readonly upstreamUrl?: string;
  /** The key the alpha channel signs with instead of the simulator's own (e.g. a wrong one). */
  readonly channelKey?: string;
  /** The first token, whose key is `key`. */
  readonly token?: TokenOptions;
  /** Opens the admin routes to this key (GATEWAY_ADMIN_KEY); default: closed. */
  readonly adminKey?: string;
  /** How it serves: HTTPS, the proxies it believes, CORS (GATEWAY_TLS_*, GATEWAY_TRUST_PROXY, GATEWAY_CORS_ORIGINS); default HTTP, none. */
  readonly network?: NetworkOptions;
  /** Where the gateway logs; default nowhere. */
  readonly log?: Logger;
  /** The request log's and the audit log's settings and the gateway's clock (GATEWAY_REQUEST_LOG_DAYS, GATEWAY_AUDIT_DAYS; purges by age); default 7 and 365 days, the system clock. */
  readonly records?: Pick<GatewayOptions, 'requestLog' | 'audit' | 'clock' | 'lastUsedTickMs'>;
}

/** The gateway options of how it serves, which the harnesses pass through. */
export type NetworkOptions = Pick<GatewayOptions, 'tls' | 'trustProxy' | 'cors'>;

/** A running simulator + gateway + token. */
export interface Harness {
  /** Base URL of the gateway, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /** API key of the token made by `opts.token`. */
  readonly key: string;
  readonly sim: Simulator;
  readonly store: Store;
  readonly gateway: Gateway;
  /** The snapshot serving now (reload() replaces it). */
  readonly snapshot: Snapshot;
  /** Loads the config directory again and serves new requests from it, as a hot reload does. */
  reload(): void;
  /** Creates another token in the same store and returns its key. */
  createKey(token?: TokenOptions): Promise<string>;
  /** Stops the gateway, the store and the simulator. */
  close(): Promise<void>;
}

/** Starts a simulator, a gateway over a config directory, and a token; close() stops them all. */
export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const sim = await startAlphaSimulator(opts.sim);
  const store = await openStore(':memory:');
  let gateway: Gateway | undefined;
  try {
    const load = () =>
      loadConfigOrThrow(opts.configDir ?? PROJECT_ROOT, {
        env: { ALPHA_BASE_URL: opts.upstreamUrl ?? sim.url, ALPHA_API_KEY: opts.channelKey ?? sim.secrets.key! },
        // Only the alpha channel is wired here; the others are left out (test/helpers/task-harness.ts has them all).
        overrideChannel: opts.timeouts
          ? (c) =>
              c.profile === 'alpha-native'
                ? { base_url: opts.upstreamUrl ?? sim.url, secrets: { key: opts.channelKey ?? sim.secrets.key! }, timeouts: opts.timeouts }
                : null
          : undefined,
      });
    let snapshot = load();
    gateway = createGateway({ snapshot: () => snapshot, store, log: opts.log ?? silentLogger(), adminKey: opts.adminKey, ...opts.network, ...opts.records });
    await gateway.listen(0);
    let n = 0;
    const createKey = async (t: TokenOptions = {}) => {
      const key = generateKey();
      await store.createToken({
        name: `test-${++n}`,
        keyHash: hashKey(key),
        group: t.group ?? 'default',
        models: t.models ?? null,
        quota: t.quota ?? null,
        rpmLimit: t.rpmLimit ?? null,
        maxParallel: t.maxParallel ?? null,
        expiresAt: t.expiresAt ?? null,
      });
      return key;
    };
    const key = await createKey(opts.token);
    const gw = gateway;
    return {
      url: gw.url(),
      key,
      sim,
      store,
      gateway: gw,
      get snapshot() {
        return snapshot;
      },
      reload() {
        snapshot = load();
      },
      createKey,
      async close() {
        await gw.close();
        await store.close();
        await sim.close();
      },
    };
  } catch (err) {
    await gateway?.close();
    await store.close();
    await sim.close();
    throw err;
  }
}

/** A JSON answer as a test sees it; `text` is the raw body, for "never contains" checks. */
export interface JsonAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed body; undefined when it is not JSON. */
  readonly json: any;
}

/** POSTs `body` (an object is JSON-encoded, a string sent as is) to `base + path` with global fetch. */
export async function postJson(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return readAnswer(res);
}

/** Reads a fetch answer whole, parsing the body as JSON when it is JSON. */
export async function readAnswer(res: Response): Promise<JsonAnswer> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
