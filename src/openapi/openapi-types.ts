/**
 * The parts of an OpenAPI 3.1 document the gateway writes (src/openapi/openapi-document.ts), no
 * more: the document is data for clients, these types only keep the builders consistent.
 */

/** A JSON Schema (draft 2020-12): an object or a boolean. */
export type JsonSchema = Readonly<Record<string, unknown>> | boolean;

/** A reference to a component of the same document (a type, not an interface, so a schema may be one). */
export type Ref = { readonly $ref: string };

export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required: boolean;
  readonly description?: string;
  readonly schema: JsonSchema;
}

export interface MediaType {
  readonly schema?: JsonSchema;
  readonly examples?: Readonly<Record<string, { readonly value: unknown }>>;
}

export interface Header {
  readonly description: string;
  readonly schema: JsonSchema;
}

export interface Response {
  readonly description: string;
  readonly headers?: Readonly<Record<string, Header | Ref>>;
  readonly content?: Readonly<Record<string, MediaType>>;
}

export interface RequestBody {
  readonly description?: string;
  readonly required: boolean;
  readonly content: Readonly<Record<string, MediaType>>;
}

export interface Operation {
  readonly operationId: string;
  /** A short line: routes.yaml's `summary` of each route of the operation. */
  readonly summary: string;
  readonly tags: readonly string[];
  readonly description?: string;
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: RequestBody;
  readonly responses: Readonly<Record<string, Response | Ref>>;
  /** Alternatives: one of them is enough. */
  readonly security: readonly Readonly<Record<string, readonly string[]>>[];
  /** The routes.yaml ids this operation stands for (several when query values tell routes apart). */
  readonly 'x-route-ids': readonly string[];
  /** The models the routes serve, as routes.yaml lists them (a trailing `*` is a prefix). */
  readonly 'x-models'?: readonly string[];
}

export type SecurityScheme =
  | { readonly type: 'http'; readonly scheme: 'bearer'; readonly description: string }
  | { readonly type: 'apiKey'; readonly in: 'header' | 'query'; readonly name: string; readonly description: string };

export interface Components {
  readonly schemas: Record<string, JsonSchema>;
  readonly responses: Record<string, Response>;
  readonly headers: Record<string, Header>;
  readonly securitySchemes: Record<string, SecurityScheme>;
}

/** HTTP methods as OpenAPI names them (path item keys); routes.yaml allows these. */
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface OpenApiDocument {
  readonly openapi: '3.1.0';
  readonly info: {
    readonly title: string;
    readonly version: string;
    readonly description: string;
    readonly license: { readonly name: string; readonly identifier?: string };
  };
  readonly servers: readonly { readonly url: string; readonly description: string }[];
  readonly jsonSchemaDialect: string;
  readonly tags: readonly { readonly name: string; readonly description: string }[];
  readonly paths: Readonly<Record<string, Partial<Record<HttpMethod, Operation>>>>;
  /** What the gateway sends to receivers (docs/webhooks.md). */
  readonly webhooks?: Readonly<Record<string, { readonly post: Operation }>>;
  readonly components: Components;
}
