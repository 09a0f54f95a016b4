#!/usr/bin/env node
/**
 * Rebuilds test/contract/specs/generativelanguage-v1beta.json, the pinned extract of the Gemini API
 * (Generative Language v1beta) protos that test/contract/gemini-spec.test.ts holds the alpha and eta
 * profiles, their simulators and the gateway's answers to, from a checkout of googleapis/googleapis:
 *
 *   node scripts/spec-extracts/generativelanguage.mjs <googleapis checkout> [--commit <sha>] [--check]
 *
 * It reads the calls the profiles use (GenerativeService.GenerateContent and StreamGenerateContent,
 * PredictionService.PredictLongRunning, Operations.GetOperation with the API's http rule from its
 * service yaml, FileService.DownloadFile), the messages they reach, and converts them to JSON Schema
 * (draft 2020-12) by protobuf's JSON mapping (protobuf.dev/programming-guides/json): fields by their
 * json_name (lowerCamelCase; the parsers also take the proto name, which nobody here sends, so the
 * extract does not), 32- and 64-bit integers as numbers or decimal strings, float/double as numbers or
 * "NaN"/"Infinity"/"-Infinity", bytes as base64 (standard or URL-safe), enums by name (or number),
 * `null` for any singular field (the parsers read it as the default), repeated as arrays, maps as
 * objects, a oneof as at most one of its fields, the well-known types by their own rules
 * (google.protobuf.Any with its "@type", and when the type is one this extract knows, that message's
 * fields), and unknown fields as errors (`additionalProperties: false`), as the parsers treat them.
 * A request body leaves out the fields the http rule binds to the path (body "*").
 *
 * One shape is not in any proto: the JSON error body of Google's REST APIs, `{"error": {code,
 * message, status, details}}` (cloud.google.com/apis/design/errors), google.rpc.Status with the
 * google.rpc.Code name as `status`. The extract builds it from those two protos (`http-error`).
 *
 * It prints the commit, the files it read in sorted path order and the SHA-256 of their
 * concatenation, for test/contract/specs/sources.json. `--check` compares instead of writing.
 * Plain Node, no dependencies: the small proto parser below is enough for these files (messages,
 * nested types, fields and their options, enums, oneofs, maps, services with http options, imports).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const V1BETA = 'google/ai/generativelanguage/v1beta';
const ROOT_FILES = [
  `${V1BETA}/generative_service.proto`,
  `${V1BETA}/prediction_service.proto`,
  `${V1BETA}/file_service.proto`,
  'google/rpc/error_details.proto',
  'google/rpc/code.proto',
];
const SERVICE_YAML = `${V1BETA}/generativelanguage_v1beta.yaml`;
const PKG = 'google.ai.generativelanguage.v1beta';
/** The calls the profiles make: [name in the extract, service.method]. */
const CALLS = [
  ['generateContent', `${PKG}.GenerativeService.GenerateContent`],
  ['streamGenerateContent', `${PKG}.GenerativeService.StreamGenerateContent`],
  ['predictLongRunning', `${PKG}.PredictionService.PredictLongRunning`],
  ['getOperation', 'google.longrunning.Operations.GetOperation'],
  ['downloadFile', `${PKG}.FileService.DownloadFile`],
];
/** Types an Any in these answers may carry: the operation's response and metadata, the error details. */
const ANY_TYPES = [
  `${PKG}.PredictLongRunningResponse`,
  `${PKG}.PredictLongRunningMetadata`,
  ...[
    'ErrorInfo',
    'RetryInfo',
    'DebugInfo',
    'QuotaFailure',
    'PreconditionFailure',
    'BadRequest',
    'RequestInfo',
    'ResourceInfo',
    'Help',
    'LocalizedMessage',
  ].map((n) => `google.rpc.${n}`),
];

// ---------------------------------------------------------------------------------------------
// Reading .proto files

/** Tokens of a .proto file: comments dropped; strings keep their quotes. */
function tokenize(text) {
  const out = [];
  const re = /\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[A-Za-z_.][A-Za-z0-9_.]*|-?[0-9][A-Za-z0-9_.+-]*|[{}[\]()<>=;,:-]/y;
  let m;
  while (re.lastIndex < text.length) {
    const at = re.lastIndex;
    m = re.exec(text);
    if (!m) throw new Error(`cannot read the proto at offset ${at}: ${JSON.stringify(text.slice(at, at + 30))}`);
    const t = m[0];
    if (/^\s/.test(t) || t.startsWith('//') || t.startsWith('/*')) continue;
    out.push(t);
  }
  return out;
}

const unquote = (s) => JSON.parse(s.startsWith("'") ? `"${s.slice(1, -1).replace(/"/g, '\\"')}"` : s);

/** Parses one file into {package, imports, messages, enums, services} (types keyed by full name). */
function parseProto(text, file) {
  const t = tokenize(text);
  let i = 0;
  const peek = () => t[i];
  const next = () => {
    if (i >= t.length) throw new Error(`${file}: unexpected end`);
    return t[i++];
  };
  const expect = (s) => {
    const got = next();
    if (got !== s) throw new Error(`${file}: expected ${s}, got ${got} (token ${i})`);
  };
  /** Skips a statement: up to its `;`, or a balanced `{…}` block. */
  const skipStatement = () => {
    let depth = 0;
    while (true) {
      const x = next();
      if (x === '{') depth++;
      else if (x === '}') {
        depth--;
        if (depth === 0) return;
      } else if (x === ';' && depth === 0) return;
    }
  };
  /** Reads `[opt = v, …]`, returning json_name when set. */
  const fieldOptions = () => {
    const opts = {};
    if (peek() !== '[') return opts;
    let depth = 0;
    do {
      const x = next();
      if (x === '[' || x === '{') depth++;
      else if (x === ']' || x === '}') depth--;
      else if (x === 'json_name' && depth === 1 && t[i] === '=') {
        i++;
        opts.jsonName = unquote(next());
      }
    } while (depth > 0);
    return opts;
  };
  const result = { package: '', imports: [], messages: new Map(), enums: new Map(), services: new Map() };

  function parseEnum(scope) {
    const name = next();
    const full = `${scope}.${name}`;
    const values = [];
    expect('{');
    while (peek() !== '}') {
      if (['option', 'reserved'].includes(peek())) skipStatement();
      else if (peek() === ';') next();
      else {
        const v = next();
        expect('=');
        const n = Number(next());
        fieldOptions();
        expect(';');
        values.push([v, n]);
      }
    }
    next();
    result.enums.set(full.replace(/^\./, ''), { name: full.replace(/^\./, ''), values });
  }

  function parseField(msg, scope, label, oneof) {
    const type = next();
    let key;
    let mapValue;
    if (type === 'map') {
      expect('<');
      key = next();
      expect(',');
      mapValue = next();
      expect('>');
    }
    const name = next();
    expect('=');
    const number = Number(next());
    const opts = fieldOptions();
    expect(';');
    msg.fields.push({
      name,
      number,
      type: mapValue ?? type,
      mapKey: key,
      repeated: label === 'repeated',
      oneof,
      jsonName: opts.jsonName ?? lowerCamel(name),
      scope,
    });
  }

  function parseMessage(scope) {
    const name = next();
    const full = `${scope}.${name}`.replace(/^\./, '');
    const msg = { name: full, fields: [], oneofs: [] };
    result.messages.set(full, msg);
    expect('{');
    while (peek() !== '}') {
      const x = peek();
      if (x === 'message') {
        next();
        parseMessage(full);
      } else if (x === 'enum') {
        next();
        parseEnum(full);
      } else if (['option', 'reserved', 'extensions', 'extend'].includes(x)) skipStatement();
      else if (x === ';') next();
      else if (x === 'oneof') {
        next();
        const oneName = next();
        msg.oneofs.push(oneName);
        expect('{');
        while (peek() !== '}') {
          if (peek() === 'option') skipStatement();
          else parseField(msg, full, null, oneName);
        }
        next();
      } else if (x === 'repeated' || x === 'optional' || x === 'required') {
        next();
        parseField(msg, full, x === 'repeated' ? 'repeated' : null);
      } else parseField(msg, full, null);
    }
    next();
  }

  function parseService(scope) {
    const name = next();
    const full = `${scope}.${name}`.replace(/^\./, '');
    const rpcs = new Map();
    expect('{');
    while (peek() !== '}') {
      if (peek() !== 'rpc') {
        skipStatement();
        continue;
      }
      next();
      const rpc = { name: next() };
      expect('(');
      if (peek() === 'stream') rpc.clientStreaming = !!next();
      rpc.input = next();
      expect(')');
      expect('returns');
      expect('(');
      if (peek() === 'stream') rpc.serverStreaming = !!next();
      rpc.output = next();
      expect(')');
      if (peek() === ';') next();
      else {
        // The body: options, among them google.api.http's first binding.
        const start = i;
        skipStatement();
        const body = t.slice(start, i);
        const h = body.indexOf('google.api.http');
        if (h >= 0) {
          for (let k = h; k < body.length - 2; k++) {
            if (['get', 'post', 'put', 'patch', 'delete'].includes(body[k]) && body[k + 1] === ':' && !rpc.http) {
              rpc.http = { method: body[k].toUpperCase(), path: unquote(body[k + 2]) };
            }
            if (body[k] === 'body' && body[k + 1] === ':' && rpc.http && rpc.http.body === undefined) rpc.http.body = unquote(body[k + 2]);
            if (body[k] === 'additional_bindings') break;
          }
        }
      }
      rpcs.set(rpc.name, rpc);
    }
    next();
    result.services.set(full, { name: full, scope, rpcs });
  }

  while (i < t.length) {
    const x = next();
    if (x === 'syntax' || x === 'edition' || x === 'option') {
      i--;
      skipStatement();
    } else if (x === 'package') {
      result.package = next();
      expect(';');
    } else if (x === 'import') {
      if (peek() === 'public' || peek() === 'weak') next();
      result.imports.push(unquote(next()));
      expect(';');
    } else if (x === 'message') parseMessage(result.package ? `.${result.package}` : '');
    else if (x === 'enum') parseEnum(result.package ? `.${result.package}` : '');
    else if (x === 'service') parseService(result.package ? `.${result.package}` : '');
    else if (x === 'extend') {
      i--;
      skipStatement();
    } else if (x === ';') continue;
    else throw new Error(`${file}: unexpected ${x}`);
  }
  return result;
}

/** protoc's json_name: underscores dropped, the letter after each one upper-cased. */
function lowerCamel(name) {
  return name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()).replace(/_/g, '');
}

// ---------------------------------------------------------------------------------------------
// The files: the roots and what they import (the well-known google/protobuf and the google/api
// annotations are not read: the first have their own JSON rules below, the second no types used).

function readAll(root) {
  const files = new Map();
  const queue = [...ROOT_FILES];
  while (queue.length) {
    const f = queue.shift();
    if (files.has(f) || f.startsWith('google/protobuf/') || f.startsWith('google/api/')) continue;
    const text = readFileSync(join(root, f), 'utf8');
    const parsed = parseProto(text, f);
    files.set(f, { text, parsed });
    queue.push(...parsed.imports);
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// JSON Schema by the JSON mapping

const INT = (signed, bits) => ({
  type: ['integer', 'string'],
  pattern: signed ? '^-?[0-9]+$' : '^[0-9]+$',
  ...(bits === 32 ? { minimum: signed ? -2147483648 : 0, maximum: signed ? 2147483647 : 4294967295 } : signed ? {} : { minimum: 0 }),
});
const FLOAT = { type: ['number', 'string'], pattern: '^(NaN|-?Infinity|-?[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?)$' };
const SCALARS = {
  double: FLOAT,
  float: FLOAT,
  int32: INT(true, 32),
  sint32: INT(true, 32),
  sfixed32: INT(true, 32),
  uint32: INT(false, 32),
  fixed32: INT(false, 32),
  int64: INT(true, 64),
  sint64: INT(true, 64),
  sfixed64: INT(true, 64),
  uint64: INT(false, 64),
  fixed64: INT(false, 64),
  bool: { type: 'boolean' },
  string: { type: 'string' },
  bytes: { type: 'string', pattern: '^[A-Za-z0-9+/_-]*={0,2}$' },
};
const WELL_KNOWN = {
  'google.protobuf.Duration': { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]{1,9})?s$' },
  'google.protobuf.Timestamp': { type: 'string', format: 'date-time' },
  'google.protobuf.FieldMask': { type: 'string' },
  'google.protobuf.Struct': { type: 'object' },
  'google.protobuf.Value': {},
  'google.protobuf.ListValue': { type: 'array' },
  'google.protobuf.NullValue': { type: 'null' },
  'google.protobuf.Empty': { type: 'object', additionalProperties: false },
  'google.protobuf.StringValue': { type: 'string' },
  'google.protobuf.BytesValue': SCALARS.bytes,
  'google.protobuf.BoolValue': { type: 'boolean' },
  'google.protobuf.Int32Value': SCALARS.int32,
  'google.protobuf.UInt32Value': SCALARS.uint32,
  'google.protobuf.Int64Value': SCALARS.int64,
  'google.protobuf.UInt64Value': SCALARS.uint64,
  'google.protobuf.FloatValue': FLOAT,
  'google.protobuf.DoubleValue': FLOAT,
};
const typeUrl = (name) => `type.googleapis.com/${name}`;

function build(files) {
  const messages = new Map();
  const enums = new Map();
  const services = new Map();
  for (const { parsed } of files.values()) {
    if (!parsed) continue;
    for (const [k, v] of parsed.messages) messages.set(k, v);
    for (const [k, v] of parsed.enums) enums.set(k, v);
    for (const [k, v] of parsed.services) services.set(k, v);
  }
  const known = (n) => messages.has(n) || enums.has(n) || n in WELL_KNOWN || n === 'google.protobuf.Any';
  /** Protobuf's scoping: the innermost scope first, then outwards. */
  const resolveType = (type, scope) => {
    if (type.startsWith('.')) return type.slice(1);
    const parts = scope.split('.');
    for (let n = parts.length; n >= 0; n--) {
      const candidate = [...parts.slice(0, n), type].filter(Boolean).join('.');
      if (known(candidate)) return candidate;
    }
    throw new Error(`unknown type ${type} in ${scope}`);
  };

  const defs = {};
  const ref = (name) => ({ $ref: `#/$defs/${name}` });
  const want = new Set();
  const queue = [];
  const need = (name) => {
    if (!want.has(name)) {
      want.add(name);
      queue.push(name);
    }
    return ref(name);
  };

  const fieldSchema = (f) => {
    const single = f.type in SCALARS ? SCALARS[f.type] : need(resolveType(f.type, f.scope));
    if (f.mapKey) {
      const keys = /int|fixed/.test(f.mapKey) ? { pattern: '^-?[0-9]+$' } : f.mapKey === 'bool' ? { enum: ['true', 'false'] } : {};
      return { type: 'object', propertyNames: keys, additionalProperties: single };
    }
    if (f.repeated) return { type: 'array', items: single };
    // A singular field may be null (the default); google.protobuf.Value takes null as itself.
    return { anyOf: [single, { type: 'null' }] };
  };

  const messageSchema = (msg, extra = {}, leaveOut = []) => {
    const properties = { ...extra };
    for (const f of msg.fields) if (!leaveOut.includes(f.name)) properties[f.jsonName] = fieldSchema(f);
    const schema = { type: 'object', additionalProperties: false, properties };
    const pairs = [];
    for (const o of msg.oneofs) {
      const members = msg.fields.filter((f) => f.oneof === o && !leaveOut.includes(f.name)).map((f) => f.jsonName);
      for (let a = 0; a < members.length; a++) for (let b = a + 1; b < members.length; b++) pairs.push({ required: [members[a], members[b]] });
    }
    if (pairs.length) schema.not = { anyOf: pairs };
    return schema;
  };

  const emit = (name) => {
    if (name in WELL_KNOWN) defs[name] = WELL_KNOWN[name];
    else if (name === 'google.protobuf.Any') {
      defs[name] = {
        type: 'object',
        required: ['@type'],
        properties: { '@type': { type: 'string', pattern: '^[^/]*/[^/]+$' } },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a promise
        allOf: ANY_TYPES.map((t) => ({ if: { properties: { '@type': { const: typeUrl(t) } } }, then: need(`any.${t}`) })),
      };
    } else if (name.startsWith('any.')) {
      const msg = messages.get(name.slice(4));
      defs[name] = messageSchema(msg, { '@type': { const: typeUrl(msg.name) } });
    } else if (enums.has(name)) {
      const e = enums.get(name);
      defs[name] = { anyOf: [{ enum: e.values.map(([v]) => v) }, { type: 'integer' }] };
    } else if (messages.has(name)) defs[name] = messageSchema(messages.get(name));
    else throw new Error(`no type ${name}`);
  };

  // The calls: request bodies (without the path's fields), answers, http rules.
  const serviceYaml = files.get(SERVICE_YAML)?.text ?? '';
  const calls = {};
  for (const [id, full] of CALLS) {
    const service = full.slice(0, full.lastIndexOf('.'));
    const rpc = services.get(service)?.rpcs.get(full.slice(full.lastIndexOf('.') + 1));
    if (!rpc) throw new Error(`no rpc ${full}`);
    const scope = services.get(service).scope.replace(/^\./, '');
    let http = rpc.http;
    // The API's own binding, when its service yaml gives the selector one (GetOperation).
    const rule = new RegExp(`- selector: ${full.replace(/\./g, '\\.')}\\n((?:\\s{4}.*\\n)+)`).exec(serviceYaml);
    if (rule) {
      const bindings = [...rule[1].matchAll(/(get|post|put|patch|delete): '([^']+)'/g)].map((m) => ({ method: m[1].toUpperCase(), path: m[2] }));
      http = { method: bindings[0].method, path: bindings[0].path, additionalBindings: bindings.slice(1) };
    }
    const input = resolveType(rpc.input, scope);
    const output = resolveType(rpc.output, scope);
    const pathFields = [...(http?.path ?? '').matchAll(/\{([a-z_]+)/g)].map((m) => m[1]);
    const call = { rpc: full, http, request: input, response: output };
    if (rpc.serverStreaming) call.serverStreaming = true;
    if (http?.body === '*') {
      call.requestBody = `body.${input}`;
      defs[`body.${input}`] = messageSchema(messages.get(input), {}, pathFields);
    }
    need(output);
    calls[id] = call;
  }
  for (const t of ANY_TYPES) need(`any.${t}`);
  while (queue.length) emit(queue.shift());

  // Google's JSON error body: google.rpc.Status with the google.rpc.Code name as `status`.
  defs['http-error'] = {
    type: 'object',
    additionalProperties: false,
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        additionalProperties: false,
        properties: {
          code: SCALARS.int32,
          message: { type: 'string' },
          status: { enum: enums.get('google.rpc.Code').values.map(([v]) => v) },
          details: { type: 'array', items: ref('google.protobuf.Any') },
        },
      },
    },
  };
  const sorted = Object.fromEntries(
    Object.keys(defs)
      .sort()
      .map((k) => [k, defs[k]]),
  );
  return { calls, defs: sorted };
}

// ---------------------------------------------------------------------------------------------

function main() {
  const args = process.argv.slice(2);
  const root = args.find((a) => !a.startsWith('--') && args[args.indexOf(a) - 1] !== '--commit');
  if (!root || !existsSync(join(root, V1BETA))) {
    console.error('usage: node scripts/spec-extracts/generativelanguage.mjs <googleapis checkout> [--commit <sha>] [--check]');
    process.exit(2);
  }
  const commitArg = args.includes('--commit') ? args[args.indexOf('--commit') + 1] : undefined;
  const commit = commitArg ?? execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  const files = readAll(root);
  files.set(SERVICE_YAML, { text: readFileSync(join(root, SERVICE_YAML), 'utf8') });
  const names = [...files.keys()].sort();
  const sha256 = createHash('sha256');
  for (const f of names) sha256.update(files.get(f).text);
  const hash = sha256.digest('hex');
  const { calls, defs } = build(files);
  const extract = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'generativelanguage-v1beta.json',
    description:
      'Extract of the Generative Language v1beta protos (googleapis/googleapis) as JSON Schema by protobuf JSON mapping; rebuilt by scripts/spec-extracts/generativelanguage.mjs. `calls` names the http rule, request body and answer of each call the alpha and eta profiles make; `http-error` is the REST error body (cloud.google.com/apis/design/errors) made of google.rpc.Status and google.rpc.Code.',
    source: { repository: 'googleapis/googleapis', commit, files: names },
    calls,
    $defs: defs,
  };
  const here = dirname(fileURLToPath(import.meta.url));
  const out = resolve(here, '../../test/contract/specs/generativelanguage-v1beta.json');
  const text = `${JSON.stringify(extract, null, 2)}\n`;
  if (args.includes('--check')) {
    // Compared as JSON: the file is kept as the repository's formatter lays it out.
    const same = existsSync(out) && JSON.stringify(JSON.parse(readFileSync(out, 'utf8'))) === JSON.stringify(extract);
    console.log(same ? 'the extract is up to date' : 'the extract differs from what these protos give');
    if (!same) process.exitCode = 1;
  } else writeFileSync(out, text);
  console.log(JSON.stringify({ repository: 'googleapis/googleapis', path: V1BETA, commit, sha256: hash, files: names }, null, 2));
}

main();
