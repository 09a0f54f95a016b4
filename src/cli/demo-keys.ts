import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSharedStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { hashKey, KEY_PREFIX } from '../tokens/keys.js';
import { CliExit } from './args.js';

/**
 * The demo's API key and admin key, the same at every start on the same store, so a key pasted into
 * a client keeps working after a restart. A token keeps only the SHA-256 of its key, so the store
 * cannot give the key back; rather than keep the key itself in the database (where every copy of
 * the file would carry a working credential in clear, and both store drivers would need a table for
 * it), the demo keeps one random secret in a file beside the SQLite file, `<db>.demo-secret`, mode
 * 0600, and derives both keys from it (HMAC-SHA256, one label each). The store still holds only the
 * token's hash; deleting the file makes new keys at the next start. A store that is not a file
 * (`:memory:`, PostgreSQL) has no place of its own for it: the keys are then new at every start,
 * as before, unless GATEWAY_DEMO_KEY and GATEWAY_ADMIN_KEY name them.
 */

/** What the demo prints and accepts. */
export interface DemoKeys {
  readonly apiKey: string;
  readonly adminKey: string;
  /** The secret file they come from; null when the store is not a file and they are new each start. */
  readonly secretFile: string | null;
}

/** Bytes of the secret: as many as a generated key has. */
const SECRET_BYTES = 32;

/**
 * The demo's keys for the store at `storeUrl` (GATEWAY_DB): derived from its secret file, made on
 * first use. A file that cannot be made or read, or is no secret, stops the demo saying so (exit 2).
 */
export function demoKeys(storeUrl: string): DemoKeys {
  const file = secretFileOf(storeUrl);
  let secret: Buffer;
  try {
    secret = file === null ? randomBytes(SECRET_BYTES) : readOrMakeSecret(file);
  } catch (err) {
    throw new CliExit(`the demo's secret file: ${(err as Error).message}`, 2);
  }
  const derive = (label: string) => createHmac('sha256', secret).update(label).digest();
  return {
    // The forms of generated keys: `gw-` and 32 bytes, `gwadmin-` and 24.
    apiKey: KEY_PREFIX + derive('gateway demo api key').toString('base64url'),
    adminKey: `gwadmin-${derive('gateway demo admin key').subarray(0, 24).toString('base64url')}`,
    secretFile: file,
  };
}

/**
 * Makes `key` the demo token's: kept when a token already has it as its key (its use and quota
 * stay), else the previous demo token (another key) is deleted and one is created for this key.
 * Names are unique, so there is at most one `demo` token; a key a rotation replaced is not kept.
 */
export async function keepDemoToken(store: Store, key: string): Promise<void> {
  const hash = hashKey(key);
  if ((await store.findTokenByHash(hash))?.keyHash === hash) return;
  await store.deleteTokensNamed('demo');
  await store.createToken({ name: 'demo', keyHash: hash, group: 'default', models: null, quota: null });
}

/** Where the secret of a file store lives; null for a store that is not a file. */
function secretFileOf(storeUrl: string): string | null {
  if (storeUrl === ':memory:' || isSharedStore(storeUrl)) return null;
  const path = /^file:/i.test(storeUrl) ? fileURLToPath(storeUrl) : resolve(storeUrl);
  return `${path}.demo-secret`;
}

/** The secret in `file`, written there (owner read and write only) when there is none yet. */
function readOrMakeSecret(file: string): Buffer {
  // The store's directory when the demo is first to make it: its owner's alone, as the store makes it.
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    // `wx`: never over an existing file, so two demos starting at once keep the first one's.
    writeFileSync(file, `${randomBytes(SECRET_BYTES).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // A copy whose mode let others read it is made private again: it stands for two working keys.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
  if (secret.length !== SECRET_BYTES) throw new Error(`${file} is not a demo secret (${SECRET_BYTES} bytes of base64url); delete it to make new demo keys`);
  return secret;
}
