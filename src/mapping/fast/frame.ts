/** Variable scopes of a fast evaluation, as jsonata's frames: a block, a lambda call, a tuple each open one. */
import { BUILTINS } from './builtins.js';

/** A scope of variables; lookups walk up to the built-in functions. */
export class Frame {
  readonly #vars = new Map<string, unknown>();
  constructor(readonly parent: Frame | null) {}

  bind(name: string, value: unknown): void {
    this.#vars.set(name, value);
  }

  lookup(name: string): unknown {
    for (let f: Frame | null = this; f; f = f.parent) if (f.#vars.has(name)) return f.#vars.get(name);
    return BUILTINS.get(name);
  }
}

/** jsonata's createFrameFromTuple: a frame binding each key of a tuple (`@` included, as there). */
export function frameFromTuple(env: Frame, tuple: Record<string, unknown>): Frame {
  const f = new Frame(env);
  for (const k of Object.keys(tuple)) f.bind(k, tuple[k]);
  return f;
}

/** A compiled AST node: its value for a context and a scope. */
export type Fn = (input: unknown, env: Frame) => unknown;
