/**
 * Headless Chromium for the console's tests: Debian's `chromium` driven by playwright-core. Where it
 * is not installed the tests skip saying so, except under CI=true (`.ci/run` installs it), where a
 * skip would hide the console untested and is a failure instead.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { skipReason } from './skip-reason.js';

export const CHROMIUM = '/usr/bin/chromium';

/** Where the console tests write a screenshot of each page (not committed; the documented ones are in docs/console/). */
export const SCREENSHOTS = join(PROJECT_ROOT, 'test-output', 'console');

/** Why the browser tests cannot run here, or null when they can. Throws under CI=true. */
export function browserMissing(): string | null {
  if (existsSync(CHROMIUM)) return null;
  return skipReason(`${CHROMIUM} is not installed (apt-get install chromium); the console's browser tests are skipped`);
}

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}
