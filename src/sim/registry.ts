import { startAlphaSimulator } from './alpha-native.js';
import { startBetaSimulator } from './beta-native.js';
import { startDeltaArkSimulator } from './delta-ark.js';
import { startEtaOperationsSimulator } from './eta-operations.js';
import { startGammaVolcSimulator } from './gamma-volc.js';
import { startThetaNativeSimulator } from './theta-native.js';
import type { Simulator } from './http.js';
import { startIotaSimulator } from './iota-native.js';
import { startLambdaSimulator } from './lambda-native.js';
import { startMuSimulator } from './mu-dashscope.js';
import { startUnifiedPassthroughSimulator } from './unified-passthrough.js';
import { startZetaOpenaiSimulator } from './zeta-openai.js';

/** Options every simulator understands. */
export interface CommonSimOptions {
  readonly port?: number;
  /** Address to listen on, named in the simulator's URL (default 127.0.0.1). */
  readonly host?: string;
  /** Asynchronous simulators: milliseconds until a task finishes unless its prompt says otherwise. */
  readonly finishMs?: number;
}

/** Simulators by the name of the protocol profile they speak. */
export const SIMULATORS: Readonly<Record<string, (opts?: CommonSimOptions) => Promise<Simulator>>> = {
  'alpha-native': (opts) => startAlphaSimulator(opts),
  'beta-native': (opts) => startBetaSimulator(opts),
  'delta-ark': (opts) => startDeltaArkSimulator(opts),
  'eta-operations': (opts) => startEtaOperationsSimulator(opts),
  'gamma-volc': (opts) => startGammaVolcSimulator(opts),
  'theta-native': (opts) => startThetaNativeSimulator(opts),
  'iota-native': (opts) => startIotaSimulator(opts),
  'lambda-native': (opts) => startLambdaSimulator(opts),
  'mu-dashscope': (opts) => startMuSimulator(opts),
  'unified-passthrough': (opts) => startUnifiedPassthroughSimulator(opts),
  'zeta-openai': (opts) => startZetaOpenaiSimulator(opts),
};
