import type { Api } from './api.js';

/** What a page is given: the API with the signed-in key, its own parameters (from the address's `#page?…`), and a way to move. */
export interface PageContext {
  readonly api: Api;
  readonly params: URLSearchParams;
  /** Goes to `#<page>?<params>`; the page is drawn again. */
  go(page: string, params?: Record<string, string>): void;
  /** Draws the current page again (after an action changed what it shows). */
  refresh(): void;
}

/** A page draws itself from the admin API; a failed call becomes the page's error message. */
export type Page = (ctx: PageContext) => Promise<Node>;
