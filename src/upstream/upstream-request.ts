/** A request to a vendor, as the request mapping built it and before it is signed. */
export interface UpstreamRequest {
  readonly method: string;
  /** Path including the channel's base path, starting with `/`. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** Serialised body (JSON text, or multipart bytes), or null for none. */
  body: string | Buffer | null;
}

/** What a vendor answered, read whole within the operation's size limit. */
export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}
