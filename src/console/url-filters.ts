import { h } from './dom.js';
import type { PageContext } from './page.js';

/**
 * The filters of a paged log (the request log, the audit log), kept in the page's address so a
 * filtered view can be shared and reloaded: the query for its admin route (the filters and the
 * cursor `before`), a form whose submit shows the page with the filled ones, and the filters in
 * force, which the link to the next page carries.
 */
export function urlFilters(
  page: string,
  names: readonly string[],
  { params, go }: Pick<PageContext, 'params' | 'go'>,
  look: { label?: (name: string) => string; size?: (name: string) => number } = {},
): { query: URLSearchParams; form: HTMLFormElement; current: Record<string, string> } {
  const given = (list: readonly string[]): [string, string][] =>
    list.flatMap((f) => {
      const value = params.get(f);
      return value ? [[f, value]] : [];
    });
  const query = new URLSearchParams(given([...names, 'before']));
  const inputs = names.map((f) => [f, h('input', { name: f, value: params.get(f) ?? '', size: look.size?.(f) ?? 14 })] as const);
  const filled = (): Record<string, string> => Object.fromEntries(inputs.map(([f, input]) => [f, input.value.trim()]).filter(([, v]) => v !== ''));
  const form = h(
    'form',
    { class: 'inline', onsubmit: (e: Event) => (e.preventDefault(), go(page, filled())) },
    inputs.map(([f, input]) => h('label', {}, `${look.label?.(f) ?? f} `, input)),
    h('button', { type: 'submit' }, 'Filter'),
  );
  return { query, form, current: Object.fromEntries(given(names)) };
}
