/** Variable scopes of a fast evaluation, as jsonata's frames: a block, a lambda call, a tuple each open one. */
import { BUILTINS } from './builtins.js';

/**
 * A scope of variables; lookups walk up to the built-in functions. Its first binding is kept in
 * two fields and a Map is made only for a second one: most scopes bind one name or none (the root
 * binds `$`, a lambda of one parameter its parameter, a block that binds nothing nothing), and a
 * Map is a few hundred bytes per evaluation (issue 41).
 */
export class Frame {
  #name: string | null = null;
  #value: unknown = undefined;
  #vars: Map<string, unknown> | null = null;
  constructor(readonly parent: Frame | null) {}

  bind(name: string, value: unknown): void {
    if (this.#name === null || this.#name === name) {
      this.#name = name;
      this.#value = value;
    } else (this.#vars ??= new Map()).set(name, value);
  }

  lookup(name: string): unknown {
    for (let f: Frame | null = this; f; f = f.parent) {
      if (f.#name === name) return f.#value;
      if (f.#vars?.has(name)) return f.#vars.get(name);
    }
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
