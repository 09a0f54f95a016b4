/**
 * The fast path's function signatures (src/mapping/fast/signature.ts) against jsonata's own: for
 * every built-in the fast path calls and any list of arguments, the arguments a call gets are
 * exactly those jsonata's validate gives (the same values, each wrapped or put in place as there),
 * and where jsonata's validate throws, the fast path bails. Run twice over, so a kept plan answers
 * as a new one does.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BUILTINS } from '../../src/mapping/fast/builtins.js';
import { compileSignature } from '../../src/mapping/fast/signature.js';
import { Bail } from '../../src/mapping/fast/values.js';

const lambda = { _jsonata_lambda: true, arguments: [], once: () => 1 };
const scalar = fc.constantFrom(undefined, null, true, 0, 1.5, '', 'a', lambda, BUILTINS.get('string'));
const argument = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 3 }),
  fc.array(fc.constantFrom(1, 2), { maxLength: 3 }),
  fc.array(fc.constantFrom('a', 'b'), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('a', 'b'), scalar, { maxKeys: 2 }),
);
const signed = [...BUILTINS].filter(([, fn]) => fn.signature?.definition !== undefined);

/** What a validate gives: the argument list, or that it refused (a throw; a Bail on the fast path). */
function outcome(validate: (args: unknown[], context: unknown) => unknown[], args: unknown[], context: unknown): { args: unknown[] } | 'refused' {
  try {
    return { args: validate(args, context) };
  } catch (err) {
    if (err instanceof Bail || (err as { code?: string }).code?.startsWith('T04')) return 'refused';
    throw err;
  }
}

test('every built-in with a signature validates as jsonata validates', () => {
  assert.ok(signed.length > 40, `${signed.length} built-ins with signatures`);
  for (const [name, fn] of signed) {
    const ours = compileSignature(fn.signature!.definition!);
    fc.assert(
      fc.property(fc.array(argument, { maxLength: 4 }), argument, (args, context) => {
        const want = outcome((a, c) => fn.signature!.validate(a, c), args, context);
        for (let round = 0; round < 2; round++) {
          const got = outcome(ours, [...args], context);
          if (want === 'refused' || got === 'refused') {
            assert.equal(got, want, `$${name}${fn.signature!.definition} on ${args.length} arguments`);
            continue;
          }
          assert.deepStrictEqual(got.args, want.args, `$${name}${fn.signature!.definition}`);
          // each value itself, not a copy: only the arrays jsonata makes are new
          got.args.forEach((v, i) => {
            if (v === want.args[i] || Array.isArray(v)) return;
            assert.fail(`$${name}: argument ${i} is not the value given`);
          });
        }
      }),
      { numRuns: 400 },
    );
  }
});
