import type { Page } from './page.js';
import { channelsPage } from './page-channels.js';
import { configPage } from './page-config.js';
import { auditPage } from './page-audit.js';
import { playgroundPage } from './page-playground.js';
import { requestsPage } from './page-requests.js';
import { tasksPage } from './page-tasks.js';
import { tokensPage } from './page-tokens.js';
import { usagePage } from './page-usage.js';
import { webhooksPage } from './page-webhooks.js';

/** The console's pages, in the order of its menu; the first is where it opens. */
/** A page of the console: its id in the URL's hash, its title, and how it draws. */
interface PageEntry {
  readonly id: string;
  readonly title: string;
  readonly page: Page;
}

export const PAGES: readonly [PageEntry, ...PageEntry[]] = [
  { id: 'channels', title: 'Channels', page: channelsPage },
  { id: 'config', title: 'Configuration', page: configPage },
  { id: 'tasks', title: 'Tasks', page: tasksPage },
  { id: 'usage', title: 'Usage', page: usagePage },
  { id: 'requests', title: 'Requests', page: requestsPage },
  { id: 'tokens', title: 'Tokens', page: tokensPage },
  { id: 'webhooks', title: 'Webhooks', page: webhooksPage },
  { id: 'audit', title: 'Audit', page: auditPage },
  { id: 'playground', title: 'Playground', page: playgroundPage },
];
