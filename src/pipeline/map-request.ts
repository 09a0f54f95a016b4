import { pathProblem, UNSAFE_PATH_VALUE } from '../mapping/jsonata-functions.js';
import { type Mapping, MappingError } from '../mapping/mapping.js';
import type { CompiledChannel, CompiledOperation } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import { encodeJson } from '../json/to-bytes.js';
import { encodeMultipart } from '../upstream/multipart-body.js';
import type { UpstreamRequest } from '../upstream/upstream-request.js';

/** What a task query, batch query or content mapping sees (docs/channels-yaml.md, "Mapping inputs"). */
export interface TaskMappingInput {
  readonly task?: unknown;
  readonly tasks?: readonly unknown[];
  readonly result?: unknown;
  readonly index?: number;
  readonly channel: { readonly name: string; readonly settings: Readonly<Record<string, unknown>> };
  readonly now: string;
}

/** The input every request mapping sees (documented in docs/channels-yaml.md under "Mapping inputs"). */
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

/**
 * jsonata errors raised by the values an expression was given rather than by the expression (and
 * the gateway's own UNSAFE_PATH_VALUE, a value `$segment` or the path check refuses): a
 * function argument or operand of a type it cannot take (T0410-T0412, T1003, T2001-T2010), a value
 * it cannot cast or use (D1001, D1002, D1009, D2014, D3001, D3010-D3030, D3040, D3060, D3061,
 * D3070, D3110-D3121, D3137-D3141). Left out on purpose: going over MAPPING_LIMITS (steps G0002,
 * strings G0003, stack depth D1011, sequence length D2015), calls of what is not a function
 * (T1005-T1008, T2006) and transform clauses (T2011-T2013), which are the expression's own faults.
 */
const DATA_ERRORS: ReadonlySet<string> = new Set([
  UNSAFE_PATH_VALUE,
  'T0410',
  'T0411',
  'T0412',
  'T1003',
  'T2001',
  'T2002',
  'T2003',
  'T2004',
  'T2007',
  'T2008',
  'T2009',
  'T2010',
  'D1001',
  'D1002',
  'D1009',
  'D2014',
  'D3001',
  'D3010',
  'D3011',
  'D3012',
  'D3020',
  'D3030',
  'D3040',
  'D3060',
  'D3061',
  'D3070',
  'D3110',
  'D3120',
  'D3121',
  'D3137',
  'D3138',
  'D3139',
  'D3140',
  'D3141',
]);

/**
 * The answer to a request mapping that failed on a client's body (docs/client-api.md, "Errors"). The body
 * passed the route's schema, so a mapping that fails on the values it was given met a form this
 * profile cannot translate: that is the client's request to change, `invalid_request` (400) with
 * jsonata's words, not a fault of ours. Any other failure stays `internal_error` (500). Only for
 * mappings of the client's request: task query and answer mappings read what the gateway stored.
 */
export function clientInputError(err: unknown): unknown {
  const cause = err instanceof GatewayError && err.code === 'internal_error' ? err.details.cause : err;
  return inputFault(cause, 'the request cannot be translated for the vendor') ?? err;
}

/** `invalid_request` (beginning with `what`) when `err` is a mapping that failed on the values of the client's request; else null. */
export function inputFault(err: unknown, what: string): GatewayError | null {
  if (!(err instanceof MappingError) || err.jsonataCode === undefined || !DATA_ERRORS.has(err.jsonataCode)) return null;
  // $error("…") in a mapping is a refusal in the profile's own words; a path value says what is wrong with it.
  const ownWords = err.jsonataCode === 'D3137' || err.jsonataCode === UNSAFE_PATH_VALUE;
  const reason = ownWords ? err.reason : `a value of the request has a type or form this model cannot take (${err.reason})`;
  return new GatewayError('invalid_request', `${what}: ${reason.slice(0, 300)}`, { cause: err });
}

/**
 * A vendor path a mapping built must be well formed whatever values went into it (docs/channels-yaml.md, "Mapping
 * functions"): every segment after the leading slash passes `unsafeSegment` (no empty segment, no
 * `.` or `..` even once decoded, no slash inside one, no control character). Values should come
 * from `$segment`, which refuses the same; this catches a mapping that joined a value in without it.
 */
function checkPath(path: string, where: string): void {
  const why = problemOf(path);
  if (why !== null)
    throw new MappingError(
      where,
      UNSAFE_PATH_VALUE,
      `mapping at ${where} built the vendor path ${JSON.stringify(path.slice(0, 200))}: ${why}`,
      `a value for the vendor's path makes ${why}`,
    );
}

/**
 * pathProblem, remembered for the last few paths: most operations' paths are constant (a literal
 * such as "/v1/images/generations"), and checking one split it into an array of segments on every
 * request (issue 41). A path with ids in it simply misses.
 */
const checkedPaths = new Map<string, string | null>();
const CHECKED_PATHS = 256;
function problemOf(path: string): string | null {
  const known = checkedPaths.get(path);
  if (known !== undefined) return known;
  const why = pathProblem(path);
  if (checkedPaths.size >= CHECKED_PATHS) checkedPaths.clear();
  checkedPaths.set(path, why);
  return why;
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

/** The mappings of a vendor request, as `mapRequest` reads them. */
type RequestMappings = Pick<CompiledOperation['request'], 'method' | 'path' | 'query' | 'headers'> & {
  readonly body?: CompiledOperation['request']['body'];
  readonly encoding?: CompiledOperation['request']['encoding'];
};

/**
 * Builds the vendor request from an operation's mappings. A mapping that throws or misbehaves is
 * a configuration fault: it surfaces as internal_error, with the details only in the log.
 */
export async function mapRequest(m: RequestMappings, channel: CompiledChannel, input: RequestMappingInput | TaskMappingInput): Promise<UpstreamRequest> {
  return mapRequestNow(m, channel, input);
}

/**
 * `mapRequest`, giving the request itself when every mapping answers on the fast path (the
 * request path's do): no promise, no await (issue 41). A Promise once one mapping is left to
 * jsonata. The mappings run in the same order either way, each only once the one before is known:
 * path, query, headers, body. Throws (or rejects with) the same internal_error.
 */
export function mapRequestNow(
  m: RequestMappings,
  channel: CompiledChannel,
  input: RequestMappingInput | TaskMappingInput,
): UpstreamRequest | Promise<UpstreamRequest> {
  const parts = new MappedParts();
  try {
    for (let step = 0; step < STEPS; step++) {
      const mapping = mappingOf(m, step);
      if (!mapping) continue;
      const value = mapping.evaluateNow(input);
      if (value instanceof Promise) return mapRest(m, channel, input, parts, step, value);
      parts.take(m, step, value);
    }
    return parts.request(m, channel);
  } catch (err) {
    throw notTranslated(err);
  }
}

/** The steps after one left to jsonata, awaited one by one. */
async function mapRest(
  m: RequestMappings,
  channel: CompiledChannel,
  input: RequestMappingInput | TaskMappingInput,
  parts: MappedParts,
  from: number,
  pending: Promise<unknown>,
): Promise<UpstreamRequest> {
  try {
    parts.take(m, from, await pending);
    for (let step = from + 1; step < STEPS; step++) {
      const mapping = mappingOf(m, step);
      if (mapping) parts.take(m, step, await mapping.evaluate(input));
    }
    return parts.request(m, channel);
  } catch (err) {
    throw notTranslated(err);
  }
}

function notTranslated(err: unknown): GatewayError {
  return new GatewayError('internal_error', 'the request could not be translated for the upstream', { cause: err });
}

/** Path, query, headers, body: the order the mappings of a request run in. */
const STEPS = 4;

function mappingOf(m: RequestMappings, step: number): Mapping | null | undefined {
  return step === 0 ? m.path : step === 1 ? m.query : step === 2 ? m.headers : m.body;
}

/** What the mappings of one request gave, each checked as it comes, and the request they make. */
class MappedParts {
  path = '';
  query: Record<string, string> = {};
  headers: Record<string, string> = {};
  body: unknown = undefined;

  take(m: RequestMappings, step: number, value: unknown): void {
    if (step === 0) {
      if (typeof value !== 'string' || !(value.startsWith('/') || /^https?:\/\//i.test(value))) {
        throw new MappingError(m.path.where, undefined, 'path mapping must give a string starting with / (or an absolute http(s) URL)');
      }
      if (!/^https?:\/\//i.test(value)) checkPath(value, m.path.where);
      this.path = value;
    } else if (step === 1) this.query = stringRecord(value, 'query', (m.query as Mapping).where);
    else if (step === 2) this.headers = stringRecord(value, 'headers', (m.headers as Mapping).where);
    else this.body = value;
  }

  request(m: RequestMappings, channel: CompiledChannel): UpstreamRequest {
    const { path, query, headers, body } = this;
    // An absolute URL (a result download) is kept as is; the dispatcher sends it to its own origin.
    const absolute = /^https?:\/\//i.test(path);
    let encoded: string | Buffer | null = null;
    if (body !== undefined && m.encoding === 'multipart') {
      const form = encodeMultipart(body);
      encoded = form.body;
      headers['content-type'] = form.contentType;
    } else if (body !== undefined) {
      // JSON.stringify's bytes; a body with a long string (inline media) as one Buffer, not a text copied again.
      encoded = encodeJson(body);
      // Said before signing, so signers that sign the content type see it.
      headers['content-type'] ??= 'application/json';
    }
    return { method: m.method, path: absolute ? path : channel.basePath + path, query, headers, body: encoded };
  }
}
