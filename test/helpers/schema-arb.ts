/**
 * Values generated from a JSON Schema (the subset the public schemas of schemas/public use): what a
 * route's own schema admits, for property tests that must reach past validation into the
 * mappings. Sizes are kept small (strings, arrays and free-form objects), so a test stays fast;
 * `if`/`then`, `not`, `contains`, `format` and `uniqueItems` are not modelled, so a value may still
 * be refused by the schema now and then, which the tests allow.
 */
import fc from 'fast-check';

type Schema = boolean | Record<string, unknown>;

const MAX_STRING = 24;
const MAX_ITEMS = 3;

/** A string the length rules allow, at most MAX_STRING long unless more is required. */
function stringArb(s: Record<string, unknown>): fc.Arbitrary<string> {
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = Math.max(min, Math.min(typeof s.maxLength === 'number' ? s.maxLength : MAX_STRING, MAX_STRING));
  if (typeof s.pattern === 'string') {
    const re = new RegExp(s.pattern, 'u');
    return fc.stringMatching(re).filter((v) => v.length >= min && v.length <= (typeof s.maxLength === 'number' ? s.maxLength : Infinity));
  }
  const fits = (v: string) => v.length >= min && v.length <= (typeof s.maxLength === 'number' ? s.maxLength : Infinity);
  // A field that takes megabytes is a media field: mostly a URL or a data URI, as clients send.
  const media = typeof s.maxLength === 'number' && s.maxLength > 100_000;
  return fc.oneof(
    { arbitrary: fc.string({ minLength: min, maxLength: max }), weight: media ? 1 : 3 },
    {
      arbitrary: fc
        .constantFrom('https://cdn.example.test/a.png', 'data:image/png;base64,iVBORw0KGgo=', 'a lighthouse at dawn', '16:9', '1280x720', '5')
        .filter(fits),
      weight: media ? 6 : 1,
    },
  );
}

function numberArb(s: Record<string, unknown>, integer: boolean): fc.Arbitrary<number> {
  const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : -1000;
  const max = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : 1000;
  return integer ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/** An arbitrary of the values `schema` admits; `root` resolves `#/…` references. */
export function schemaArb(schema: Schema, root: Record<string, unknown> = schema as Record<string, unknown>, depth = 0): fc.Arbitrary<unknown> {
  if (schema === true) return fc.jsonValue({ maxDepth: 1 });
  if (schema === false) return fc.constant(null);
  const s = schema;
  if (typeof s.$ref === 'string') {
    const target = s.$ref
      .replace(/^[^#]*#\/?/, '')
      .split('/')
      .filter(Boolean)
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[decodeURIComponent(key)], root);
    // A reference this generator cannot follow (another file): any small value.
    return target === undefined ? fc.jsonValue({ maxDepth: 1 }) : schemaArb(target as Schema, root, depth + 1);
  }
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : null) as Schema[] | null;
  if (branches) return fc.oneof(...branches.map((b) => schemaArb({ ...without(s, 'oneOf', 'anyOf'), ...(b as object) }, root, depth + 1)));
  if (Array.isArray(s.allOf))
    return schemaArb(
      (s.allOf as Schema[]).reduce<Schema>((a, b) => mergeSchemas(a, b), without(s, 'allOf')),
      root,
      depth + 1,
    );
  const type = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [s.properties ? 'object' : s.items ? 'array' : 'string'];
  return fc.oneof(...type.map((t) => typed(t, s, root, depth)));
}

function typed(type: string, s: Record<string, unknown>, root: Record<string, unknown>, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return stringArb(s);
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = typeof s.minItems === 'number' ? s.minItems : 0;
      const max = Math.max(min, Math.min(typeof s.maxItems === 'number' ? s.maxItems : MAX_ITEMS, MAX_ITEMS));
      const items = (s.items ?? true) as Schema;
      if (Array.isArray(s.prefixItems)) return fc.tuple(...(s.prefixItems as Schema[]).map((p) => schemaArb(p, root, depth + 1)));
      return depth > 6 ? fc.constant([]) : fc.array(schemaArb(items, root, depth + 1), { minLength: min, maxLength: max });
    }
    default: {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = new Set((s.required ?? []) as string[]);
      if (Object.keys(props).length === 0)
        return depth > 6 ? fc.constant({}) : fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) record[k] = schemaArb(v, root, depth + 1);
      const whole = fc.record(record, { requiredKeys: [...required].filter((k) => k in props) });
      // At most maxProperties fields (an alpha part is text or inlineData, not both): required ones first.
      const most = typeof s.maxProperties === 'number' ? s.maxProperties : Infinity;
      return whole.map((o: Record<string, unknown>) =>
        Object.fromEntries(
          Object.entries(o)
            .sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)))
            .slice(0, most),
        ),
      );
    }
  }
}

/**
 * Two schemas a value must both pass, as one for generating (an approximation): their `properties`
 * merged field by field and their `items` likewise, `required` united, and for any other keyword the second's word (a family's
 * limit is the narrower one: its enum, its pattern, its bounds).
 */
export function mergeSchemas(a: Schema, b: Schema): Schema {
  if (typeof a === 'boolean' || typeof b === 'boolean') return typeof a === 'boolean' ? b : a;
  const out: Record<string, unknown> = { ...a, ...b };
  if (a.properties && b.properties) {
    const pa = a.properties as Record<string, Schema>;
    const pb = b.properties as Record<string, Schema>;
    out.properties = Object.fromEntries(
      [...new Set([...Object.keys(pa), ...Object.keys(pb)])].map((k) => [k, k in pa && k in pb ? mergeSchemas(pa[k]!, pb[k]!) : (pb[k] ?? pa[k])]),
    );
  }
  if (a.items && b.items && typeof a.items === 'object' && typeof b.items === 'object') out.items = mergeSchemas(a.items as Schema, b.items as Schema);
  if (a.$defs && b.$defs) out.$defs = { ...(a.$defs as object), ...(b.$defs as object) };
  if (Array.isArray(a.required) || Array.isArray(b.required))
    out.required = [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])];
  return out;
}

function without(s: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  const out = { ...s };
  for (const k of keys) delete out[k];
  return out;
}
