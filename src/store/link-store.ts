/**
 * A link a synchronous answer handed out instead of a vendor's URL (docs/client-api.md, "Links instead of
 * vendor URLs"): the vendor URL it stands for, or the file itself (a raw answer kept as a stored
 * result). Found by the hash of the link's secret, served until `expiresAt`.
 */
export interface LinkRecord {
  /** SHA-256 (hex) of the secret in the link: the link itself is never stored. */
  readonly id: string;
  readonly tokenId: string;
  /** The channel that answered: a URL is fetched through it. */
  readonly channel: string;
  /** The vendor's URL; null when `data` holds the file. */
  readonly url: string | null;
  /** The file's bytes; null when the vendor serves it at `url`. */
  readonly data: Buffer | null;
  /** The media type `data` is served as; null for a URL (the vendor's answer says). */
  readonly contentType: string | null;
  /** Unix milliseconds. */
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** The links synchronous answers hand out, served until they expire. */
export interface LinkStore {
  /** Records the links of one answer, all or none. */
  putLinks(links: readonly LinkRecord[]): Promise<void>;
  /** A link by id while it serves: null when unknown, expired at `now`, or its token was deleted. */
  getLink(id: string, now: number): Promise<LinkRecord | null>;
  /** Deletes up to `limit` links expired at `now` (their stored files with them); returns how many. */
  deleteExpiredLinks(now: number, limit: number): Promise<number>;
}
