/**
 * Elements built from data without parsing HTML: every value lands as text or as an attribute, so
 * nothing a vendor, a token name or a config file says can run in the console (no innerHTML).
 */
export type Child = Node | string | number | null | undefined | false;
type Attr = string | number | boolean | null | undefined | ((e: Event) => void);

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, Attr> = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (v === true) el.setAttribute(k, '');
    else if (v !== false && v !== null && v !== undefined) el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
}

/** A column of a table: its heading and the cell of a row. */
export interface Column<T> {
  readonly label: string;
  readonly cell: (row: T) => Child | Child[];
  /** Right-aligned figures. */
  readonly numeric?: boolean;
}

/**
 * A table of rows, in a box of its own that scrolls sideways when the table is wider than its card
 * (a phone): the page itself never gets wider than the screen.
 */
export function table<T>(columns: readonly Column<T>[], rows: readonly T[], opts: { empty?: string; testid?: string } = {}): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty', 'data-testid': opts.testid }, opts.empty ?? 'Nothing yet.');
  return h('div', { class: 'table-scroll' }, tableOf(columns, rows, opts.testid));
}

function tableOf<T>(columns: readonly Column<T>[], rows: readonly T[], testid: string | undefined): HTMLElement {
  return h(
    'table',
    { 'data-testid': testid },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c) => h('th', { class: c.numeric ? 'num' : null }, c.label)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((r) =>
        h(
          'tr',
          {},
          columns.map((c) => h('td', { class: c.numeric ? 'num' : null }, c.cell(r))),
        ),
      ),
    ),
  );
}

/** A labelled figure of a summary row. */
export const stat = (label: string, value: Child) => h('div', { class: 'stat' }, h('span', { class: 'label' }, label), h('span', { class: 'value' }, value));

/** Unix ms or an ISO string as the browser's local date and time; '—' for none. */
export function when(t: number | string | null | undefined): string {
  if (t === null || t === undefined) return '—';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString();
}

export const section = (title: string, ...children: (Child | Child[])[]) => h('section', {}, h('h2', {}, title), ...children);
