import assert from 'node:assert/strict';
import { linkIdOf } from '../../src/links/hand-out.js';
import type { Store } from '../../src/store/store.js';

/** The vendor URL a gateway link stands for, read from the store: what a test checks, and no client ever sees. */
export async function vendorUrlBehind(store: Store, link: string): Promise<string> {
  const found = await store.getLink(linkIdOf(link.slice(link.lastIndexOf('/') + 1)), Date.now());
  assert.ok(found?.url, `no vendor URL behind ${link}`);
  return found.url;
}
