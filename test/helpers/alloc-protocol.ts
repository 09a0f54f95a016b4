/**
 * What the processes of the allocation budget (test/gateway/allocation-budget.test.ts) tell each
 * other: the test starts ./alloc-gateway.ts, which forks ./alloc-client.ts. Both are scripts, run
 * as processes, never imported: their types and constants are here.
 */

/** Send `requests` images requests to the gateway at `url` with `key`, `inFlight` at a time. */
export interface LoadOrder {
  readonly url: string;
  readonly key: string;
  readonly requests: number;
  readonly inFlight: number;
}

/** How a LoadOrder went: answers that were a 200 with an image, and the first other one. */
export interface LoadDone {
  readonly ok: number;
  readonly failed: number;
  readonly firstFailure: string | null;
}

/** What alloc-gateway prints, as one JSON line. */
export interface AllocationReport {
  /** What the measure read for CALIBRATION_BYTES of short-lived arrays. */
  readonly calibrationBytes: number;
  readonly warmUp: LoadDone;
  readonly measured: LoadDone;
  readonly requests: number;
  readonly inFlight: number;
  /** V8 heap bytes allocated while the measured requests ran, per request. */
  readonly bytesPerRequest: number;
}

/** Arrays of 128 doubles, 16,384 of them: 16 MB of elements, each garbage once the next is made. */
export const CALIBRATION_BYTES = 16 * 1024 * 1024;

/** The request of issue 41 (bench/overhead's images scenario): a small b64_json answer from a fast vendor. */
export const IMAGES_BODY = JSON.stringify({ model: 'zeta-image-1', prompt: 'a red bicycle', n: 1, size: '1024x1024', response_format: 'b64_json' });
