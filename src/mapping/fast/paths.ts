/**
 * jsonata 2.2.2's paths (evaluatePath, evaluateStep, evaluateTupleStep, evaluateStages and
 * evaluateFilter), synchronously, over compiled steps: sequences mapped and flattened step by
 * step, filters with numeric indexes and predicates, `#$i` and `@$v` tuple bindings, `[]`.
 */
import { type Fn, type Frame, frameFromTuple } from './frame.js';
import { countStep } from './budget.js';
import { boolean, emptySequence, isArrayOfNumbers, isFunction, isNumeric, isSequence, push, type Seq, sequenceOf } from './values.js';

/** A stage after a step: a filter, or `#$name` (the position bound to a variable). */
export type Stage = { readonly filter: Fn; readonly numeric: number | null } | { readonly index: string };

/** One compiled step of a path, with the flags jsonata reads on it. */
export interface Step {
  readonly eval: Fn;
  readonly stages: readonly Stage[];
  readonly consarray: boolean;
  readonly tuple: boolean;
  readonly focus: string | undefined;
  readonly index: string | undefined;
  /** The name, when the step is a plain name (no stages, predicates, flags): looked up without sequences. */
  readonly name: string | undefined;
}

type Tuple = Record<string, unknown>;

/**
 * A compiled path: its steps, whether the first is a variable, `[]` at its end, `tuple` kept.
 * `unwrapOne`: the node around the path (compile.ts) takes a sequence of one item for that item, so
 * a path that found one value on one context gives the value itself, with no sequence built.
 */
export function pathOf(steps: readonly Step[], firstIsVariable: boolean, keepSingletonArray: boolean, keepTuples: boolean, unwrapOne = false): Fn {
  return (input, env) => {
    // While the context is one value that is not an array and the steps are plain names, the
    // sequences jsonata builds hold one item: `one` is that item, and no sequence is built.
    let one: unknown = input;
    let single = !Array.isArray(input) || firstIsVariable;
    let inputSequence: Seq = single ? EMPTY : (input as Seq);
    let resultSequence: Seq | undefined;
    let isTupleStream = false;
    let tupleBindings: Tuple[] | undefined;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i];
      if (step === undefined) break;
      if (step.tuple) isTupleStream = true;
      if (single && step.name !== undefined && !isTupleStream && !Array.isArray(one)) {
        countStep();
        const res = ownValue(one, step.name);
        if (res === undefined) {
          if (unwrapOne) return undefined; // an empty sequence, which the node around the path takes for undefined
          resultSequence = emptySequence();
          single = false;
          break;
        }
        if (!Array.isArray(res)) {
          one = res;
          continue;
        }
        if (!isSequence(res)) {
          // stepOf on one data array: the answer as is on the last step, else its items (a constructed array whole)
          single = false;
          if (i === steps.length - 1) resultSequence = res as Seq;
          else {
            const items = emptySequence();
            if ((res as Seq).cons) push(items, res);
            // forEach, as jsonata flattens: a hole of a sparse array is no item (for-of would give undefined)
            else
              res.forEach((v) => {
                push(items, v);
              });
            resultSequence = items;
          }
          if (resultSequence.length === 0) break;
          inputSequence = resultSequence;
          continue;
        }
      }
      if (single) {
        inputSequence = sequenceOf(one);
        single = false;
      }
      if (i === 0 && step.consarray) resultSequence = step.eval(inputSequence, env) as Seq;
      else if (isTupleStream) tupleBindings = tupleStep(step, inputSequence, tupleBindings, env);
      else resultSequence = stepOf(step, inputSequence, env, i === steps.length - 1);
      if (!isTupleStream && (resultSequence === undefined || resultSequence.length === 0)) break;
      // (A tuple step leaves resultSequence as it was: the steps after it read their tuples, not inputSequence.)
      if (step.focus === undefined && resultSequence !== undefined) inputSequence = resultSequence;
    }
    if (single) {
      if (unwrapOne && !keepSingletonArray) return one;
      resultSequence = sequenceOf(one);
    }
    if (isTupleStream) {
      if (keepTuples) resultSequence = tupleBindings as Seq;
      else {
        resultSequence = emptySequence();
        for (const t of tupleBindings ?? []) push(resultSequence, t['@']);
      }
    }
    if (keepSingletonArray) {
      if (Array.isArray(resultSequence) && resultSequence.cons && !resultSequence.sequence) resultSequence = sequenceOf(resultSequence);
      // jsonata sets the flag even on a data array the path returns (and fails on undefined: bail)
      (resultSequence as Seq).keepSingleton = true;
    }
    return resultSequence;
  };
}

const EMPTY: Seq = [];

/** jsonata's lookup on one value that is not an array: an own property of an object that is not a function. */
function ownValue(x: unknown, key: string): unknown {
  if (x !== null && typeof x === 'object' && Object.hasOwn(x, key) && !isFunction(x)) return (x as Record<string, unknown>)[key];
  return undefined;
}

function stepOf(step: Step, input: Seq, env: Frame, lastStep: boolean): Seq {
  const result = emptySequence();
  for (const item of input) {
    let res = step.eval(item, env);
    for (const s of step.stages) if ('filter' in s) res = filter(s, res, env);
    if (res !== undefined) push(result, res);
  }
  if (lastStep && result.length === 1 && Array.isArray(result[0]) && !isSequence(result[0])) return result[0] as Seq;
  // Nothing to flatten: the flattened copy would hold the same items (issue 41: one sequence less a step).
  if (!needsFlattening(result)) return result;
  const out = emptySequence();
  for (const res of result) {
    if (!Array.isArray(res) || (res as Seq).cons) push(out, res);
    // holes skipped, as jsonata's forEach does
    else
      res.forEach((v) => {
        push(out, v);
      });
  }
  return out;
}

function needsFlattening(results: Seq): boolean {
  for (const res of results) if (Array.isArray(res) && !(res as Seq).cons) return true;
  return false;
}

function tupleStep(step: Step, input: Seq, bindings: Tuple[] | undefined, env: Frame): Tuple[] {
  const result = emptySequence() as Seq & Tuple[];
  result.tupleStream = true;
  const tuples = bindings ?? input.map((item) => ({ '@': item }));
  for (const t of tuples) {
    let res = step.eval(t['@'], frameFromTuple(env, t));
    if (res === undefined) continue;
    if (!Array.isArray(res)) res = [res];
    const arr = res as Seq;
    for (let b = 0; b < arr.length; b++) {
      const tuple = Object.create(null) as Tuple;
      Object.assign(tuple, t);
      if (arr.tupleStream) Object.assign(tuple, arr[b]);
      else {
        if (step.focus) {
          tuple[step.focus] = arr[b];
          tuple['@'] = t['@'];
        } else tuple['@'] = arr[b];
        if (step.index) tuple[step.index] = b;
      }
      push(result, tuple);
    }
  }
  return stages(step.stages, result, env) as Tuple[];
}

/** jsonata's evaluateStages, on a tuple stream. */
function stages(list: readonly Stage[], input: unknown, env: Frame): unknown {
  let result = input;
  for (const s of list) {
    if ('filter' in s) result = filter(s, result, env);
    else {
      let e = 0;
      for (const tuple of result as Tuple[]) tuple[s.index] = e++;
    }
  }
  return result;
}

/** jsonata's evaluateFilter: a numeric literal index, or a predicate per item (numbers select positions). */
export function filter(stage: { readonly filter: Fn; readonly numeric: number | null }, input0: unknown, env: Frame): unknown {
  let results: Seq = emptySequence();
  if (input0 && (input0 as Seq).tupleStream) results.tupleStream = true;
  const input: Seq = Array.isArray(input0) ? (input0 as Seq) : sequenceOf(input0);
  if (stage.numeric !== null) {
    let index = Math.floor(stage.numeric);
    if (index < 0) index = input.length + index;
    const item = input[index];
    if (item !== undefined) {
      if (Array.isArray(item)) results = item as Seq;
      else push(results, item);
    }
    return results;
  }
  for (let index = 0; index < input.length; index++) {
    const item = input[index];
    let context = item;
    let e = env;
    if (input.tupleStream) {
      context = (item as Tuple)['@'];
      e = frameFromTuple(env, item as Tuple);
    }
    let res = stage.filter(context, e);
    if (isNumeric(res)) res = [res];
    if (isArrayOfNumbers(res)) {
      for (const r of res as number[]) {
        let ii = Math.floor(r);
        if (ii < 0) ii = input.length + ii;
        if (ii === index) push(results, item);
      }
    } else if (boolean(res)) push(results, item);
  }
  return results;
}
