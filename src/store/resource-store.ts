/**
 * A resource a client created besides tasks (an asset; docs/tokens-and-quota.md, "Authentication, tokens and
 * quota"): whose it is and which channel holds it. Another token's resource is answered as unknown.
 */
export interface ResourceRecord {
  readonly kind: string;
  /** The id clients use (today the vendor's own id). */
  readonly id: string;
  readonly tokenId: string;
  /** The channel that created it: requests that use it go there. */
  readonly channel: string;
  /** The vendor's id for it. */
  readonly vendorId: string;
  /** Unix milliseconds. */
  readonly createdAt: number;
}

/** The resources clients created besides tasks, and whose each is. */
export interface ResourceStore {
  /**
   * Records a resource a client created. True when recorded (or already recorded as this token's,
   * on this channel); false, with nothing written, when its kind and id already belong to another.
   */
  putResource(resource: ResourceRecord): Promise<boolean>;
  /** The resources of that kind and those ids that exist, in no particular order. */
  getResources(kind: string, ids: readonly string[]): Promise<ResourceRecord[]>;
}
