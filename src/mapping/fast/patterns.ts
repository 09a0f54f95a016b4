/**
 * jsonata 2.2.2's regular expressions and the string functions that take a pattern ($contains,
 * $match, $replace, $split), synchronously: jsonata's are async, since a pattern may be a user's
 * function; here only a regex literal (or a plain string) is a pattern, anything else bails.
 */
import { bail, emptySequence, push } from './values.js';

/** A matcher's result (jsonata's regex closure). */
interface Match {
  match: string;
  start: number;
  end: number;
  groups: string[];
  next(): Match | undefined;
}

function matcher(m: unknown, str: string): Match | undefined {
  // only our own regex closures: a user lambda as a matcher is left to jsonata
  if (typeof m !== 'function' || !(m as { regex?: boolean }).regex) bail();
  return (m as (s: string) => Match | undefined)(str);
}

/**
 * jsonata's evaluateRegex: a closure over the regex that finds matches one after another. jsonata
 * copies the regex for each closure (its own lastIndex); `own`, made once per regex literal when
 * the mapping compiles, is shared instead (issue 41): a closure sets lastIndex before each search
 * and reads it right after, and every function that takes a pattern runs its searches to the end
 * synchronously, so no two closures of one literal search in turns.
 */
export function regexMatcher(own: RegExp): (str: string, from?: number) => Match | undefined {
  const re = own;
  const closure = (str: string, fromIndex?: number): Match | undefined => {
    re.lastIndex = fromIndex || 0;
    const m = re.exec(str);
    if (m === null) return undefined;
    const result: Match = {
      match: m[0],
      start: m.index,
      end: m.index + m[0].length,
      groups: m.slice(1) as string[],
      next() {
        if (re.lastIndex >= str.length) return undefined;
        const next = closure(str, re.lastIndex);
        if (next && next.match === '') bail(); // D1004 in jsonata
        return next;
      },
    };
    return result;
  };
  return Object.assign(closure, { regex: true });
}

/** jsonata's $contains, for a string or regex pattern. */
export function contains(str: unknown, token: unknown): unknown {
  if (str === undefined || token === undefined) return undefined;
  if (typeof token === 'string') return (str as string).indexOf(token) !== -1;
  return matcher(token, str as string) !== undefined;
}

/** jsonata's $match, for a string or regex pattern. */
export function match(str: unknown, regex: unknown, limit: unknown): unknown {
  if (str === undefined) return undefined;
  if ((limit as number) < 0) bail();
  const result = emptySequence();
  if (limit === undefined || (limit as number) > 0) {
    let count = 0;
    let m = matcher(regex, str as string);
    while (m !== undefined && (limit === undefined || count < (limit as number))) {
      push(result, { match: m.match, index: m.start, groups: m.groups });
      m = m.next();
      count++;
    }
  }
  return result;
}

/** jsonata's $replace, for a string or regex pattern. */
export function replace(str: unknown, pattern: unknown, replacement: unknown, limit: unknown): unknown {
  if (str === undefined) return undefined;
  // an empty pattern, a negative limit (jsonata's errors) or a function replacement: left to jsonata
  if (pattern === '' || (limit as number) < 0 || typeof replacement !== 'string') bail();
  const s = str as string;
  let result = '';
  let position = 0;
  if (limit !== undefined && !((limit as number) > 0)) return s;
  let count = 0;
  if (typeof pattern === 'string') {
    let index = s.indexOf(pattern, position);
    while (index !== -1 && (limit === undefined || count < (limit as number))) {
      result += s.substring(position, index) + replacement;
      position = index + pattern.length;
      count++;
      index = s.indexOf(pattern, position);
    }
    return result + s.substring(position);
  }
  let m = matcher(pattern, s);
  if (m === undefined) return s;
  while (m !== undefined && (limit === undefined || count < (limit as number))) {
    result += s.substring(position, m.start) + substitute(replacement, m);
    position = m.start + m.match.length;
    count++;
    m = m.next();
  }
  return result + s.substring(position);
}

/** jsonata's replacement text for one match: `$0`, `$n` groups, `$$`. */
function substitute(replacement: string, m: Match): string {
  let out = '';
  let position = 0;
  let index = replacement.indexOf('$', position);
  while (index !== -1 && position < replacement.length) {
    out += replacement.substring(position, index);
    position = index + 1;
    const c = replacement.charAt(position);
    if (c === '$') {
      out += '$';
      position++;
    } else if (c === '0') {
      out += m.match;
      position++;
    } else {
      const maxDigits = m.groups.length === 0 ? 1 : Math.floor(Math.log(m.groups.length) * Math.LOG10E) + 1;
      let n = parseInt(replacement.substring(position, position + maxDigits), 10);
      if (maxDigits > 1 && n > m.groups.length) n = parseInt(replacement.substring(position, position + maxDigits - 1), 10);
      if (!Number.isNaN(n)) {
        if (m.groups.length > 0) {
          const sub = m.groups[n - 1];
          if (sub !== undefined) out += sub;
        }
        position += n.toString().length;
      } else out += '$';
    }
    index = replacement.indexOf('$', position);
  }
  return out + replacement.substring(position);
}

/** jsonata's $split, for a string or regex pattern. */
export function split(str: unknown, separator: unknown, limit: unknown): unknown {
  if (str === undefined) return undefined;
  if ((limit as number) < 0) bail();
  const s = str as string;
  const result: string[] = [];
  if (limit !== undefined && !((limit as number) > 0)) return result;
  if (typeof separator === 'string') return s.split(separator, limit as number | undefined);
  let count = 0;
  let m = matcher(separator, s);
  if (m === undefined) return [s];
  let start = 0;
  while (m !== undefined && (limit === undefined || count < (limit as number))) {
    result.push(s.substring(start, m.start));
    start = m.end;
    m = m.next();
    count++;
  }
  if (limit === undefined || count < (limit as number)) result.push(s.substring(start));
  return result;
}
