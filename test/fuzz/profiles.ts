/** The fuzz profiles: the quick one runs in `npm test`, the long one by hand (`npm run fuzz`). */
export const FUZZ_PROFILES = {
  quick: { requests: 600, seconds: 60, concurrency: 8, timeoutMs: 20_000 },
  long: { requests: 50_000, seconds: 1800, concurrency: 8, timeoutMs: 30_000 },
} as const;

export type FuzzProfileName = keyof typeof FUZZ_PROFILES;
