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
