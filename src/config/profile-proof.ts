import type { CompiledProfile, ProfileSource } from './snapshot.js';

/** The kinds that are the vendor's own artifacts, strictest first (DESIGN.md, "The vendors are the reference"). */
const VENDOR_KINDS = ['specification', 'sdk', 'reference-text'] as const;

/**
 * What a profile is proven by: the strictest of its sources that is the vendor's own artifact and
 * pinned in the repository (so its contract tests run offline), or null when none is: the profile
 * then rests on our own reading. The catalogue and `gateway explain` show it; shipped profiles
 * must have one (test/contract/sources.test.ts).
 */
export function proofOf(profile: Pick<CompiledProfile, 'sources'>): ProfileSource | null {
  for (const kind of VENDOR_KINDS) {
    const found = profile.sources.find((s) => s.kind === kind && s.pinned !== null);
    if (found) return found;
  }
  return null;
}

/** A profile's proof in a few words: `sdk npm:openai@6.49.0`, or `none (our own reading)`. */
export function proofText(profile: Pick<CompiledProfile, 'sources'>): string {
  const p = proofOf(profile);
  return p ? `${p.kind} ${p.pinned}` : 'none (our own reading)';
}
