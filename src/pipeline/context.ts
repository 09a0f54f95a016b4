import type { Logger } from 'pino';
import type { CompiledRoute, Snapshot } from '../config/snapshot.js';
import type { TokenRecord } from '../store/store.js';

/** What one public request carries through the stages; built by src/http/server.ts. */
export interface RequestContext {
  readonly requestId: string;
  /** The snapshot captured when the request started; the request finishes on it. */
  readonly snapshot: Snapshot;
  readonly route: CompiledRoute;
  readonly params: Readonly<Record<string, string>>;
  /** Query parameters of the public URL, without the API key. */
  readonly query: Readonly<Record<string, string>>;
  readonly token: TokenRecord;
  readonly log: Logger;
  /** Time of the request, for `now` in mappings (fixed in golden runs). */
  readonly now: Date;
  /** The gateway's own base URL as this client reaches it, for download links in task answers. */
  readonly publicBase: string;
}
