/** Variable scopes of a fast evaluation, as jsonata's frames: a block, a lambda call, a tuple each open one. */
import { BUILTINS } from './builtins.js';

/** A slot of a block's name not bound yet: the name is looked up further out, as if the slot were not there. */
const UNBOUND: unique symbol = Symbol('unbound');

/**
 * A scope of variables; lookups walk up to the built-in functions. A block's scope has a slot for
 * each name the block binds (known when it compiles); any other scope keeps its first binding in
 * two fields, and a Map is made only for a name beyond those: most scopes bind one name or none,
 * and a Map is a few hundred bytes per evaluation (issue 41).
 */
export class Frame {
  #name: string | null = null;
  #value: unknown = undefined;
  #vars: Map<string, unknown> | null = null;
  readonly #names: readonly string[] | null;
  readonly #slots: unknown[] | null;

  constructor(
    readonly parent: Frame | null,
    names: readonly string[] | null = null,
  ) {
    this.#names = names;
    this.#slots = names === null ? null : new Array<unknown>(names.length).fill(UNBOUND);
  }

  bind(name: string, value: unknown): void {
    const at = this.#names === null ? -1 : this.#names.indexOf(name);
    if (at !== -1) (this.#slots as unknown[])[at] = value;
    else if (this.#name === null || this.#name === name) {
      this.#name = name;
      this.#value = value;
    } else (this.#vars ??= new Map()).set(name, value);
  }

  lookup(name: string): unknown {
    for (let f: Frame | null = this; f; f = f.parent) {
      if (f.#names !== null) {
        const at = f.#names.indexOf(name);
        if (at !== -1) {
          const v = (f.#slots as unknown[])[at];
          if (v !== UNBOUND) return v;
        }
      }
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
