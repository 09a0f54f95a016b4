import { MappingError } from '../config/mapping.js';
import type { CompiledChannel, CompiledOperation } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import { encodeMultipart } from '../upstream/multipart-body.js';
import type { UpstreamRequest } from '../upstream/upstream-request.js';

/** What a task query, batch query or content mapping sees (README, "Mapping inputs"). */
export interface TaskMappingInput {
  readonly task?: unknown;
  readonly tasks?: readonly unknown[];
  readonly result?: unknown;
  readonly index?: number;
  readonly channel: { readonly name: string; readonly settings: Readonly<Record<string, unknown>> };
  readonly now: string;
}

/** The input every request mapping sees (documented in the README under "Mapping inputs"). */
export interface RequestMappingInput {
  readonly body: unknown;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  /** Model name the vendor knows (after the channel's renaming). */
  readonly model: string;
  /** Model name the client asked for. */
  readonly public_model: string;
  readonly channel: { readonly name: string; readonly settings: Readonly<Record<string, unknown>> };
  readonly now: string;
  /** Task submissions: the id the gateway gives the task (for the vendor's external id field). */
  readonly task?: { readonly id: string };
  /** Remixes: the earlier task (route `task.source`). */
  readonly source?: unknown;
}

function stringRecord(value: unknown, what: string, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new MappingError(where, undefined, `${what} mapping must give an object`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue;
    out[what === 'headers' ? k.toLowerCase() : k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return out;
}

/**
 * Builds the vendor request from an operation's mappings. A mapping that throws or misbehaves is
 * a configuration fault: it surfaces as internal_error, with the details only in the log.
 */
export async function mapRequest(
  m: Pick<CompiledOperation['request'], 'method' | 'path' | 'query' | 'headers'> & {
    readonly body?: CompiledOperation['request']['body'];
    readonly encoding?: CompiledOperation['request']['encoding'];
  },
  channel: CompiledChannel,
  input: RequestMappingInput | TaskMappingInput,
): Promise<UpstreamRequest> {
  try {
    const path = await m.path.evaluate(input);
    if (typeof path !== 'string' || !(path.startsWith('/') || /^https?:\/\//i.test(path))) {
      throw new MappingError(m.path.where, undefined, 'path mapping must give a string starting with / (or an absolute http(s) URL)');
    }
    const query = m.query ? stringRecord(await m.query.evaluate(input), 'query', m.query.where) : {};
    const headers = m.headers ? stringRecord(await m.headers.evaluate(input), 'headers', m.headers.where) : {};
    const body = m.body ? await m.body.evaluate(input) : undefined;
    // An absolute URL (a result download) is kept as is; the dispatcher sends it to its own origin.
    const absolute = /^https?:\/\//i.test(path);
    let encoded: string | Buffer | null = null;
    if (body !== undefined && m.encoding === 'multipart') {
      const form = encodeMultipart(body);
      encoded = form.body;
      headers['content-type'] = form.contentType;
    } else if (body !== undefined) {
      encoded = JSON.stringify(body);
      // Said before signing, so signers that sign the content type see it.
      headers['content-type'] ??= 'application/json';
    }
    return { method: m.method, path: absolute ? path : channel.basePath + path, query, headers, body: encoded };
  } catch (err) {
    throw new GatewayError('internal_error', 'the request could not be translated for the upstream', { cause: err });
  }
}
