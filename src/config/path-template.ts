import type { PathMatcher } from './snapshot.js';

/**
 * Path templates of routes.yaml: `{name}` captures a run of characters other than `/`, so both
 * `/v1/videos/{task_id}` and `/v1beta/models/{model}:generateContent` (a parameter followed by a
 * literal suffix inside one segment) are expressible. Compiled once to a regular expression.
 */
const PARAM = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Compiles a template; throws an Error naming the problem when the template is invalid. */
export function compilePathTemplate(template: string): PathMatcher {
  const params: string[] = [];
  let pattern = '';
  let last = 0;
  for (const m of template.matchAll(PARAM)) {
    const name = m[1] ?? '';
    if (params.includes(name)) throw new Error(`parameter {${name}} appears twice in ${template}`);
    pattern += escapeRegExp(template.slice(last, m.index));
    // Lazy, so a literal suffix in the same segment (":generateContent") stays outside the capture.
    pattern += '([^/]+?)';
    params.push(name);
    last = m.index + m[0].length;
  }
  const rest = template.slice(last);
  if (/[{}]/.test(rest) || /[{}]/.test(template.replace(PARAM, ''))) {
    throw new Error(`unbalanced brace in path template ${template}`);
  }
  pattern += escapeRegExp(rest);
  const re = new RegExp(`^${pattern}$`);
  return {
    template,
    params,
    match(pathname) {
      const m = re.exec(pathname);
      if (!m) return null;
      const out: Record<string, string> = {};
      // Each parameter's group follows the last: every one takes part in a match.
      let group = 1;
      for (const name of params) out[name] = decodeURIComponent(m[group++] ?? '');
      return out;
    },
  };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
