/**
 * Compiles a jsonata AST (`expr.ast()`) into synchronous closures, one per node, each doing what
 * jsonata 2.2.2's evaluate() does for that node (read jsonata.js: evaluate and the functions it
 * calls). A construct left out throws Unsupported at compile time; an input the closures cannot
 * decide as jsonata would throws Bail at run time. Every node evaluation counts against the budget.
 */
import { enter, leave } from './budget.js';
import { applyFunction, BUILTINS, isOwnFunction, type Lambda, TailCall } from './builtins.js';
import { type Fn, Frame } from './frame.js';
import { arrayConstructor, binaryOp, groupBy, negate } from './operators.js';
import { filter, pathOf, type Stage, type Step } from './paths.js';
import { regexMatcher } from './patterns.js';
import { bail, boolean, isFunction, isSequence, lookup, type Seq } from './values.js';

/** A construct the fast path does not compile; the message names it (`gateway check` shows it). */
export class Unsupported extends Error {}

interface Node {
  readonly type: string;
  readonly value?: unknown;
  readonly [key: string]: unknown;
}

/** jsonata's built-ins left to jsonata: clocks, randomness, `$eval`, and those with no synchronous rewrite here. */
const LEFT_TO_JSONATA = new Set(['now', 'millis', 'random', 'shuffle', 'eval', 'each', 'sift', 'single']);

/** Keys of AST nodes the compiler reads or may ignore; any other key is a construct it does not know. */
const KNOWN = new Set([
  'type',
  'value',
  'position',
  'steps',
  'keepSingletonArray',
  'keepArray',
  'stages',
  'predicate',
  'group',
  'lhs',
  'rhs',
  'expression',
  'expressions',
  'consarray',
  'condition',
  'then',
  'else',
  'procedure',
  'arguments',
  'body',
  'signature',
  'thunk',
  'tuple',
  'focus',
  'index',
  'nextFunction',
  'name',
]);

/** Compile-time context: whether a bind here would run beside its siblings (jsonata evaluates those in parallel), and every name the expression binds. */
export interface Ctx {
  readonly parallel: boolean;
  readonly bound: ReadonlySet<string>;
}

/** The variable names an expression may bind anywhere (`:=`, parameters, `@$v`, `#$i`): any other name is a built-in or nothing. */
export function boundNames(ast: unknown): Set<string> {
  const names = new Set<string>();
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    const n = v as Node;
    if (n.type === 'bind' && (n.lhs as Node | undefined)?.type === 'variable') names.add(String((n.lhs as Node).value));
    if (n.type === 'lambda') for (const a of (n.arguments as Node[] | undefined) ?? []) names.add(String(a.value));
    if (typeof n.focus === 'string') names.add(n.focus);
    if (typeof n.index === 'string') names.add(n.index);
    if (n.type === 'index') names.add(String(n.value));
    for (const x of Object.values(n)) if (x !== null && typeof x === 'object' && !(x instanceof RegExp)) visit(x);
  };
  visit(ast);
  return names;
}

/**
 * The names binds directly in a block assign (not those of blocks or lambdas inside it, which have
 * frames of their own). A name missed here is kept by the frame all the same; one too many only
 * costs its slot.
 */
function blockBinds(block: Node): readonly string[] | null {
  const names = new Set<string>();
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || v instanceof RegExp) return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    const n = v as Node;
    if (n !== block && (n.type === 'block' || n.type === 'lambda')) return;
    if (n.type === 'bind' && (n.lhs as Node | undefined)?.type === 'variable') names.add(String((n.lhs as Node).value));
    for (const x of Object.values(n)) visit(x);
  };
  visit(block);
  return names.size > 0 ? Object.freeze([...names]) : null;
}

function unsupported(what: string): never {
  throw new Unsupported(what);
}

/** Compiles one node into jsonata's evaluate() for it: the node itself, its predicates, its grouping, sequence unwrapping. */
export function compileNode(n: Node, cx: Ctx): Fn {
  if (n === null || typeof n !== 'object') unsupported('node');
  for (const k of Object.keys(n)) if (!KNOWN.has(k)) unsupported(`${n.type}.${k}`);
  const core = compileCore(n, cx);
  const preds = Object.hasOwn(n, 'predicate') ? (n.predicate as Node[]).map((p) => filterStage(p, cx)) : [];
  const group = n.type !== 'path' && Object.hasOwn(n, 'group') ? objectOf(n.group as Node, cx) : null;
  const keepArray = n.keepArray === true;
  return (input, env) => {
    enter();
    let result = core(input, env);
    for (const p of preds) result = filter(p, result, env);
    if (group) result = group(result, env);
    if (result && isSequence(result) && !result.tupleStream) {
      if (keepArray) result.keepSingleton = true;
      if (result.length === 0) result = undefined;
      else if (result.length === 1) result = result.keepSingleton ? result : result[0];
    }
    leave();
    return result;
  };
}

function filterStage(p: Node, cx: Ctx): { filter: Fn; numeric: number | null } {
  if (p.type !== 'filter') unsupported(`stage ${p.type}`);
  const e = p.expr as Node;
  return { filter: compileNode(e, cx), numeric: e.type === 'number' ? (e.value as number) : null };
}

function objectOf(g: Node, cx: Ctx): (input: unknown, env: Frame) => unknown {
  const raw = g.lhs as [Node, Node][];
  const pairs = raw.map(([k, v]): [Fn, Fn] => [compileNode(k, cx), compileNode(v, { ...cx, parallel: true })]);
  // keys written as distinct plain strings: known now, so one context needs no grouping (literalObject)
  const keys = raw.map(([k]) =>
    k.type === 'string' && Object.keys(k).every((x) => x === 'type' || x === 'value' || x === 'position') ? String(k.value) : null,
  );
  const literal = keys.every((k) => k !== null && k !== '_jsonata_lambda' && k !== '_jsonata_function') && new Set(keys).size === keys.length;
  return groupBy(pairs, literal ? (keys as string[]) : null);
}

function compileCore(n: Node, cx: Ctx): Fn {
  switch (n.type) {
    case 'string':
    case 'number':
    case 'value': {
      const v = n.value;
      return () => v;
    }
    case 'name': {
      const key = String(n.value);
      return (input) => lookup(input, key);
    }
    case 'variable':
      return variable(n, cx);
    case 'path':
      return path(n, cx);
    case 'binary': {
      const op = binaryOp(String(n.value), compileNode(n.lhs as Node, cx), compileNode(n.rhs as Node, cx));
      return op ?? unsupported(`operator ${String(n.value)}`);
    }
    case 'unary':
      return unary(n, cx);
    case 'condition': {
      const c = compileNode(n.condition as Node, cx);
      const t = compileNode(n.then as Node, cx);
      const e = n.else === undefined ? undefined : compileNode(n.else as Node, cx);
      return (input, env) => (boolean(c(input, env)) ? t(input, env) : e?.(input, env));
    }
    case 'block': {
      const fns = (n.expressions as Node[]).map((e) => compileNode(e, { ...cx, parallel: false }));
      // A slot for each name the block itself binds: its frame needs no Map (frame.ts).
      const names = blockBinds(n);
      return (input, env) => {
        const frame = new Frame(env, names);
        let result: unknown;
        for (const f of fns) result = f(input, frame);
        return result;
      };
    }
    case 'bind': {
      // beside siblings jsonata evaluates in parallel (array items, object values), the order of binds is not the source order
      if (cx.parallel) unsupported('bind in an array or object constructor');
      const name = String((n.lhs as Node).value);
      const rhs = compileNode(n.rhs as Node, cx);
      return (input, env) => {
        const v = rhs(input, env);
        env.bind(name, v);
        return v;
      };
    }
    case 'regex': {
      const re = n.value as RegExp;
      if (!(re instanceof RegExp)) unsupported('regex');
      // jsonata builds a new closure each time the literal is evaluated; the regex it searches with is made once (patterns.ts)
      const own = new RegExp(re);
      return () => regexMatcher(own);
    }
    case 'function':
      return call(n, cx, undefined);
    case 'lambda':
      // jsonata's parser wraps a call in a lambda's tail position into a thunk, which its apply() makes
      return n.thunk === true ? call(n.body as Node, cx, undefined, true) : lambda(n, cx);
    case 'apply':
      return applyChain(n, cx);
    default:
      return unsupported(n.type);
  }
}

function variable(n: Node, cx: Ctx): Fn {
  const name = String(n.value);
  if (name === '') return (input) => (input && (input as Seq).outerWrapper ? (input as unknown[])[0] : input);
  if (LEFT_TO_JSONATA.has(name)) unsupported(`$${name}`);
  // a name nothing binds is a built-in (or undefined) wherever it is read: resolved once, here
  if (!cx.bound.has(name) && name !== '$') {
    const builtin = BUILTINS.get(name);
    return () => builtin;
  }
  return (_input, env) => env.lookup(name);
}

function path(n: Node, cx: Ctx): Fn {
  const raw = n.steps as Node[];
  const steps: Step[] = raw.map((s) => {
    if (s.type === 'sort') unsupported('order-by (^)');
    if ((s as { ancestor?: unknown }).ancestor !== undefined) unsupported('parent (%)');
    const stages: Stage[] = ((s.stages as Node[] | undefined) ?? []).map((st) => (st.type === 'index' ? { index: String(st.value) } : filterStage(st, cx)));
    const { stages: _s, ...rest } = s;
    // keepArray flags only a sequence the lookup gives, which the plain lookup leaves to the general step
    const plain =
      s.type === 'name' &&
      Object.keys(s).every((k) => k === 'type' || k === 'value' || k === 'position' || k === 'keepArray' || (k === 'stages' && stages.length === 0));
    return {
      name: plain ? String(s.value) : undefined,
      eval: compileNode(rest as Node, cx),
      stages,
      consarray: s.consarray === true,
      tuple: s.tuple === true,
      focus: s.focus as string | undefined,
      index: s.index as string | undefined,
    };
  });
  // compileNode's wrapper takes a sequence of one for its item unless the node keeps arrays or filters or groups the path's result
  const unwrapOne = !Object.hasOwn(n, 'group') && !Object.hasOwn(n, 'predicate') && n.keepArray !== true;
  const inner = pathOf(steps, raw[0]?.type === 'variable', n.keepSingletonArray === true, n.tuple === true, unwrapOne);
  if (!Object.hasOwn(n, 'group')) return inner;
  const group = objectOf(n.group as Node, cx);
  return (input, env) => group(inner(input, env), env);
}

function unary(n: Node, cx: Ctx): Fn {
  switch (n.value) {
    case '-':
      return negate(compileNode(n.expression as Node, cx));
    case '[': {
      const items = (n.expressions as Node[]).map((e) => ({ f: compileNode(e, { ...cx, parallel: true }), nested: e.value === '[' }));
      return arrayConstructor(items, n.consarray === true);
    }
    case '{':
      return objectOf(n, cx);
    default:
      return unsupported(`unary ${String(n.value)}`);
  }
}

/** jsonata's evaluateFunction: the procedure, then the arguments, eagerly; `~>` puts its left side first. A tail call is left to the caller. */
function call(n: Node, cx: Ctx, applyto: Fn | undefined, tail = false): Fn {
  const procNode = n.procedure as Node;
  if (n.value !== '(') unsupported('partial application');
  const proc = compileNode(procNode, cx);
  const args = (n.arguments as Node[]).map((a) => compileNode(a, cx));
  const forgotDollar = procNode.type === 'path' ? String((procNode.steps as Node[])[0]?.value) : null;
  if (n.type !== 'function') unsupported(`thunk of ${n.type}`);
  const count = args.length + (applyto ? 1 : 0);
  return (input, env) => {
    const p = proc(input, env);
    if (p === undefined && forgotDollar !== null && env.lookup(forgotDollar) !== undefined && !tail) bail(); // T1005
    // sized once: an array grown by push starts with room for 16 (issue 41)
    const values: unknown[] = new Array(count);
    let k = 0;
    if (applyto) values[k++] = applyto(input, env);
    for (const a of args) {
      const v = a(input, env);
      // data flagged as a jsonata function is wrapped (and crashes) there: left to jsonata
      if (isFunction(v) && !isOwnFunction(v)) bail();
      values[k++] = v;
    }
    return tail ? new TailCall(p, values) : applyFunction(p, values, input);
  };
}

function applyChain(n: Node, cx: Ctx): Fn {
  const lhs = compileNode(n.lhs as Node, cx);
  const rhsNode = n.rhs as Node;
  if (rhsNode.type === 'function') return call(rhsNode, cx, lhs);
  const rhs = compileNode(rhsNode, cx);
  return (input, env) => {
    const l = lhs(input, env);
    const f = rhs(input, env);
    if (!isFunction(f) || isFunction(l)) bail(); // T2006, or function composition: left to jsonata
    return applyFunction(f, [l], null);
  };
}

/** jsonata's evaluateLambda and applyProcedure: a closure over its scope and context, a frame per call. */
function lambda(n: Node, cx: Ctx): Fn {
  const params = (n.arguments as Node[]).map((a) => String(a.value));
  const sig = n.signature as { validate(args: unknown[], context: unknown): unknown[] } | undefined;
  const body = compileNode(n.body as Node, { ...cx, parallel: false });
  return (input, env) => {
    const procedure: Lambda = {
      _jsonata_lambda: true,
      arguments: params,
      once(args, context) {
        const validated = sig ? sig.validate(args, context) : args;
        const frame = new Frame(env);
        params.forEach((p, i) => {
          frame.bind(p, validated[i]);
        });
        return body(input, frame);
      },
    };
    return procedure;
  };
}
