/**
 * jsonata 2.2.2's function signatures (signature.js: parseSignature and its validate), for the
 * built-ins the fast path calls. jsonata's validate builds a string of the arguments' types, a
 * regex match, closures and a new argument list on every call: about a third of what a mapping
 * allocated (issue 41). Here the signature is parsed once, as jsonata parses it, and what its
 * validate does for a given list of argument types (which argument goes where, which is wrapped in
 * an array, where the context stands in) is worked out once per list of types, by jsonata's own
 * regex over the same type string, and kept: a call then costs a numeric key and, unless the
 * arguments pass as they are, the new list. Anything jsonata's validate would throw for bails
 * (jsonata then reports its own error).
 */
import { bail, isFunction } from './values.js';

/** One parameter of a signature, as jsonata's parseSignature records it. */
interface Param {
  regex: string;
  type: string;
  array?: boolean;
  context?: boolean;
  /** The argument types the context may have where it stands in (jsonata's contextRegex, applied to each type once). */
  contextTypes?: string;
  subtype?: string;
}

/** What validate does with one argument of a list: passes it, passes undefined, wraps it in an array, or puts the context there. */
type Step =
  | { readonly op: 'arg'; readonly from: number }
  | { readonly op: 'undefined' }
  | { readonly op: 'array'; readonly from: number; readonly wrap: boolean; readonly itemType: string | null }
  | { readonly op: 'context'; readonly types: string };

/** The steps for one list of argument types; `same` when the arguments pass exactly as given. */
interface Plan {
  readonly steps: readonly Step[];
  readonly same: boolean;
}

/** jsonata's getSymbol: the one-letter type of a value (m for missing). */
function symbolOf(value: unknown): string {
  if (isFunction(value)) return 'f';
  switch (typeof value) {
    case 'string':
      return 's';
    case 'number':
      return 'n';
    case 'boolean':
      return 'b';
    case 'object':
      return value === null ? 'l' : Array.isArray(value) ? 'a' : 'o';
    default:
      return 'm';
  }
}

const SYMBOLS = 'asnblfom';
/** Plans kept per signature: a call site's argument types vary little; past this, plans are worked out each time. */
const MAX_PLANS = 64;
/** Arguments that fit a numeric key (9 symbols and none per argument: 9^9 is a small integer). */
const MAX_KEYED_ARGS = 9;

/** jsonata's parseSignature, to the parameters and their regex. */
function parse(signature: string): { params: Param[]; regex: RegExp } {
  let position = 1;
  const params: Param[] = [];
  let param: Param = { regex: '', type: '' };
  let prevParam = param;
  const next = () => {
    params.push(param);
    prevParam = param;
    param = { regex: '', type: '' };
  };
  const closing = (start: number, open: string, close: string) => {
    let depth = 1;
    let at = start;
    while (at < signature.length) {
      at++;
      const c = signature.charAt(at);
      if (c === close) {
        depth--;
        if (depth === 0) break;
      } else if (c === open) depth++;
    }
    return at;
  };
  while (position < signature.length) {
    const symbol = signature.charAt(position);
    if (symbol === ':') break;
    switch (symbol) {
      case 's':
      case 'n':
      case 'b':
      case 'l':
      case 'o':
        param.regex = `[${symbol}m]`;
        param.type = symbol;
        next();
        break;
      case 'a':
        param.regex = '[asnblfom]';
        param.type = symbol;
        param.array = true;
        next();
        break;
      case 'f':
        param.regex = 'f';
        param.type = symbol;
        next();
        break;
      case 'j':
        param.regex = '[asnblom]';
        param.type = symbol;
        next();
        break;
      case 'x':
        param.regex = '[asnblfom]';
        param.type = symbol;
        next();
        break;
      case '-': {
        prevParam.context = true;
        const re = new RegExp(prevParam.regex);
        prevParam.contextTypes = [...SYMBOLS].filter((s) => re.test(s)).join('');
        prevParam.regex += '?';
        break;
      }
      case '?':
      case '+':
        prevParam.regex += symbol;
        break;
      case '(': {
        const end = closing(position, '(', ')');
        const choice = signature.substring(position + 1, end);
        if (choice.indexOf('<') !== -1) throw new Error(`signature ${signature}: parameterised choice`); // S0402 in jsonata
        param.regex = `[${choice}m]`;
        param.type = `(${choice})`;
        position = end;
        next();
        break;
      }
      case '<': {
        if (prevParam.type !== 'a' && prevParam.type !== 'f') throw new Error(`signature ${signature}: type parameter on ${prevParam.type}`); // S0401
        const end = closing(position, '<', '>');
        prevParam.subtype = signature.substring(position + 1, end);
        position = end;
        break;
      }
    }
    position++;
  }
  return { params, regex: new RegExp(`^${params.map((p) => `(${p.regex})`).join('')}$`) };
}

/** A signature's validate for the fast path: the arguments jsonata's validate gives, or a bail where it throws. */
export type Validate = (args: unknown[], context: unknown) => unknown[];

/** Compiles a jsonata signature (its `definition`, as `<s-(sf):b>`) into a Validate that keeps a plan per list of argument types. */
export function compileSignature(definition: string): Validate {
  const { params, regex } = parse(definition);
  const plans = new Map<number, Plan | null>();

  /** jsonata's validate, from the type string on: what goes where, or null where it throws (T0410, and T0412 known from the types alone). */
  const planFor = (supplied: string): Plan | null => {
    const isValid = regex.exec(supplied);
    if (!isValid) return null;
    const steps: Step[] = [];
    let argIndex = 0;
    for (let index = 0; index < params.length; index++) {
      const param = params[index] as Param;
      const match = isValid[index + 1] ?? '';
      if (match === '') {
        if (param.context && param.contextTypes !== undefined) steps.push({ op: 'context', types: param.contextTypes });
        else steps.push({ op: 'arg', from: argIndex++ });
        continue;
      }
      for (const single of match) {
        if (param.type !== 'a') {
          steps.push({ op: 'arg', from: argIndex++ });
          continue;
        }
        if (single === 'm') {
          steps.push({ op: 'undefined' });
          argIndex++;
          continue;
        }
        let itemType: string | null = null;
        if (param.subtype !== undefined) {
          if (single !== 'a' && match !== param.subtype) return null; // T0412
          if (single === 'a') itemType = param.subtype.charAt(0);
        }
        steps.push({ op: 'array', from: argIndex++, wrap: single !== 'a', itemType });
      }
    }
    const same = steps.length === supplied.length && steps.every((s, i) => s.op === 'arg' && s.from === i);
    return { steps, same };
  };

  const apply = (plan: Plan, args: unknown[], context: unknown): unknown[] => {
    const { steps } = plan;
    for (const step of steps) {
      // T0411 and T0412 depend on the values, not their types: checked on every call
      if (step.op === 'context' && !step.types.includes(symbolOf(context))) bail();
      if (step.op === 'array' && step.itemType !== null) {
        const arr = args[step.from] as unknown[];
        if (arr.length > 0) {
          const first = symbolOf(arr[0]);
          if (first !== step.itemType) bail();
          // holes skipped, as jsonata's filter skips them
          for (let k = 0; k < arr.length; k++) if (k in arr && symbolOf(arr[k]) !== first) bail();
        }
      }
    }
    if (plan.same) return args;
    const out: unknown[] = [];
    for (const step of steps) {
      if (step.op === 'arg') out.push(args[step.from]);
      else if (step.op === 'undefined') out.push(undefined);
      else if (step.op === 'context') out.push(context);
      else out.push(step.wrap ? [args[step.from]] : args[step.from]);
    }
    return out;
  };

  return (args, context) => {
    if (args.length > MAX_KEYED_ARGS) {
      const plan = planFor(args.map(symbolOf).join(''));
      return plan ? apply(plan, args, context) : bail();
    }
    let key = 0;
    for (let i = 0; i < args.length; i++) key = key * 9 + 1 + SYMBOLS.indexOf(symbolOf(args[i]));
    let plan = plans.get(key);
    if (plan === undefined) {
      plan = planFor(args.map(symbolOf).join(''));
      if (plans.size < MAX_PLANS) plans.set(key, plan);
    }
    return plan ? apply(plan, args, context) : bail();
  };
}
