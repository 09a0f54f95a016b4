import { startAlphaSimulator } from './alpha-native.js';
import type { Simulator } from './http.js';

/** Options every simulator understands. */
export interface CommonSimOptions {
  readonly port?: number;
}

/** Simulators by the name of the protocol profile they speak. */
export const SIMULATORS: Readonly<Record<string, (opts?: CommonSimOptions) => Promise<Simulator>>> = {
  'alpha-native': (opts) => startAlphaSimulator(opts),
};

/** Starts the simulator of a profile; null when there is none. */
export async function startSimulator(profile: string, opts?: CommonSimOptions): Promise<Simulator | null> {
  const start = SIMULATORS[profile];
  return start ? start(opts) : null;
}
