import { inspect } from 'node:util';

/**
 * A credential read from the environment. It prints, logs and serialises as `[secret]`, so a
 * config dump, a log line or an error message can never carry the value; only `reveal()` does.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The raw value, for signers only. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return '[secret]';
  }

  toJSON(): string {
    return '[secret]';
  }

  [inspect.custom](): string {
    return '[secret]';
  }
}

/**
 * A service URL (a store's, Redis's) as it may be printed in a log line or an error: its password,
 * in the user part or a `password` parameter, masked.
 */
export function maskedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = 'xxx';
    if (u.searchParams.has('password')) u.searchParams.set('password', 'xxx');
    return u.href.replace(/:xxx@/, ':***@').replace(/([?&]password=)xxx/, '$1***');
  } catch {
    return '(a URL that does not parse)';
  }
}
