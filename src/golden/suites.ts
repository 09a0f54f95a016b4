import { join } from 'node:path';
import { PROJECT_ROOT } from '../config/paths.js';

/** A config directory and the golden cases run on it (`<cases>/<profile>/<case>.yaml`). */
export interface GoldenSuite {
  /** The cases' folder, relative to the project root, as messages name it. */
  readonly cases: string;
  readonly configDir: string;
  readonly casesDir: string;
}

const suite = (config: string, cases: string): GoldenSuite => ({ cases, configDir: join(PROJECT_ROOT, config), casesDir: join(PROJECT_ROOT, cases) });

/**
 * Every golden suite, run by test/e2e/golden.test.ts and `gateway golden`: the shipped config with its
 * vendors' cases, and made-up vendors whose mapping features no shipped vendor uses (raw bytes).
 */
export const GOLDEN_SUITES: readonly GoldenSuite[] = [suite('.', 'test/golden'), suite('test/golden-made-up/config', 'test/golden-made-up/cases')];
