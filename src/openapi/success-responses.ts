import type { CompiledRoute } from '../config/snapshot.js';
import type { JsonSchema, MediaType, Response } from './openapi-types.js';
import type { SchemaComponents } from './schema-components.js';

/**
 * The success answers of an operation: each route's answer schema where routes.yaml declares one
 * (`response.schema`, a component of the document), the bytes of downloads and links, and the
 * event stream of a `stream: sse` route, whose frames each carry the route's answer.
 */

/** The success answers of the routes of one operation, by status. */
export function successOf(routes: readonly CompiledRoute[], schemas: SchemaComponents): Record<string, Response> {
  const per = routes.map((r) => [r, successResponses(r, schemas)] as const);
  const out: Record<string, Response> = {};
  for (const status of [...new Set(per.flatMap(([, s]) => Object.keys(s)))].sort()) {
    const these = per.flatMap(([r, s]) => {
      const answer = s[status];
      return answer ? [[r, answer] as const] : [];
    });
    const [only] = these;
    const description =
      only && these.length === 1 && routes.length === 1 ? only[1].description : these.map(([r, s]) => `Route \`${r.id}\`: ${s.description}`).join('\n\n');
    out[status] = {
      description,
      headers: Object.assign({}, ...these.map(([, s]) => s.headers)),
      content: mergeContent(these.map(([, s]) => s.content ?? {})),
    };
  }
  return out;
}

/** Media types of several routes' answers: where routes answer one type with different schemas, any of them. */
function mergeContent(contents: readonly Readonly<Record<string, MediaType>>[]): Record<string, MediaType> {
  const schemas = new Map<string, JsonSchema[]>();
  for (const content of contents) {
    for (const [type, media] of Object.entries(content)) {
      const list = schemas.get(type) ?? [];
      const known = list.some((s) => JSON.stringify(s) === JSON.stringify(media.schema));
      if (media.schema !== undefined && !known) list.push(media.schema);
      schemas.set(type, list);
    }
  }
  return Object.fromEntries(
    [...schemas].map(([type, list]) => {
      const [only] = list;
      return [type, only !== undefined && list.length === 1 ? { schema: only } : { schema: { anyOf: list } }];
    }),
  );
}

const REQUEST_ID = { 'X-Request-Id': { $ref: '#/components/headers/x-request-id' } };
const WARNING = { Warning: { $ref: '#/components/headers/warning' } };
/** A file's bytes, of whatever type the vendor or the store gives it. */
const BYTES = { '*/*': { schema: { type: 'string', format: 'binary' } } };

/** The route's declared answer as JSON, or, where it declares none, any JSON value. */
function jsonAnswer(r: CompiledRoute, schemas: SchemaComponents, what: string): { description: string; content: Record<string, MediaType> } {
  if (r.response) return { description: what, content: { 'application/json': { schema: schemas.refOf(r.response) } } };
  return { description: `${what} (no schema declared: routes.yaml \`response\`).`, content: { 'application/json': { schema: {} } } };
}

function successResponses(r: CompiledRoute, schemas: SchemaComponents): Record<string, Response> {
  switch (r.kind) {
    case 'sync': {
      const headers = { ...REQUEST_ID, ...WARNING };
      if (r.stream) {
        const events = { 'text/event-stream': { schema: { type: 'string' } } };
        const frame = r.response ? `\`${schemas.refOf(r.response).$ref.split('/').at(-1)}\` (components/schemas)` : "the route's answer";
        const how =
          'Server-Sent Events, each `event: <name>` (where the protocol names its events) and `data: <JSON>` followed by a blank line (CRLF line ends). ' +
          `A vendor that streams is relayed event by event, in this route's public shape (for a vendor that answers whole: one frame, a ${frame}); ` +
          'the stream ends with the answer, with no `[DONE]` event. Errors before the first event are JSON with their status; ' +
          'a failure after it is the protocol\'s error event, and the stream ends (docs/routes-yaml.md, "Streams").';
        if (!r.stream.askedBy) return { '200': { description: how, headers, content: events } };
        const json = jsonAnswer(r, schemas, "The vendor's answer in this route's public shape.");
        const field = r.stream.askedBy.join('.');
        return {
          '200': {
            description: `${json.description} With \`${field}: true\` (for the models whose vendor streams): ${how}`,
            headers,
            content: { ...json.content, ...events },
          },
        };
      }
      return { '200': { ...jsonAnswer(r, schemas, "The vendor's answer in this route's public shape."), headers } };
    }
    case 'task-submit':
      return { '200': { ...jsonAnswer(r, schemas, "The new task, with the gateway's own task id."), headers: { ...REQUEST_ID, ...WARNING } } };
    case 'task-query':
      return { '200': { ...jsonAnswer(r, schemas, 'The task record(s).'), headers: REQUEST_ID } };
    case 'task-list':
      return { '200': { ...jsonAnswer(r, schemas, "A page of the caller's tasks."), headers: REQUEST_ID } };
    case 'task-delete':
      return { '200': { ...jsonAnswer(r, schemas, 'The deleted task.'), headers: REQUEST_ID } };
    case 'model-list':
      return { '200': { ...jsonAnswer(r, schemas, 'The models the API key may use.'), headers: REQUEST_ID } };
    case 'model-get':
      return { '200': { ...jsonAnswer(r, schemas, 'The model.'), headers: REQUEST_ID } };
    case 'link-content':
      return {
        '200': {
          description: 'The file the link stands for: fetched from the vendor as it serves it, stored by the gateway, or from the result archive.',
          headers: { ...REQUEST_ID, ...FILE_VERSION },
          content: BYTES,
        },
        '206': {
          description: 'The part of the file that `Range` asked for.',
          headers: { ...REQUEST_ID, ...FILE_VERSION, 'Content-Range': { description: 'The part sent.', schema: { type: 'string' } } },
          content: BYTES,
        },
        ...FILE_STATUSES,
      };
    case 'task-content':
      return {
        '200': {
          description: "The result's bytes, as the vendor serves them, or from the result archive once copied there.",
          headers: { ...REQUEST_ID, ...FILE_VERSION },
          content: BYTES,
        },
        '206': {
          description: 'The part of the result that `Range` asked for.',
          headers: { ...REQUEST_ID, ...FILE_VERSION, 'Content-Range': { description: 'The part sent.', schema: { type: 'string' } } },
          content: BYTES,
        },
        ...FILE_STATUSES,
      };
  }
}

/** Headers that say which version of a file was sent: the vendor's when it sends them, the archive's always (docs/archive.md). */
const FILE_VERSION = {
  ETag: {
    description: "The file's version: the vendor's, or the archive's (`\"a-…\"`) once the file is served from the result archive.",
    schema: { type: 'string' },
  },
  'Last-Modified': { description: 'When the file was made (the vendor) or copied into the result archive.', schema: { type: 'string' } },
  'Accept-Ranges': { description: '`bytes` where a range can be asked for.', schema: { type: 'string' } },
} as const;

/** The answers of a file download besides its bytes. */
const FILE_STATUSES = {
  '304': { description: '`If-None-Match` names the version the archive has: the client has it already.', headers: REQUEST_ID },
  '416': {
    description: '`Range` starts past the end of the file; `Content-Range: bytes */<size>` says its size.',
    headers: { ...REQUEST_ID, 'Content-Range': { description: '`bytes */<size>`.', schema: { type: 'string' } } },
  },
} as const;
