/**
 * Ids as the console shows them: short enough to fit a phone's table (a task id is 29 characters,
 * a token id 32), the whole value on hover (title), and copied whole, by the copy button beside it
 * or by selecting the short text and copying it. Tokens are shown by name, their id in the title.
 */
import { h } from './dom.js';

/** Ids up to this long are shown whole; `console-refused-1` and `admin:0123456789ab` fit. */
const WHOLE = 18;
/** Characters kept after a short prefix (`task_`, `we_`), and at the end. */
const HEAD = 4;
const TAIL = 4;

/**
 * The shown part of an id: whole when short, else its prefix, its first and its last characters
 * (`task_JUeZ…x9Qa`). The end is kept because ids made from the time (request ids) share their
 * start with every other id of the minute.
 */
export function shortText(id: string): string {
  if (id.length <= WHOLE) return id;
  const prefix = /^[a-z]{1,8}[_-]/i.exec(id)?.[0] ?? '';
  return `${id.slice(0, prefix.length + HEAD)}…${id.slice(-TAIL)}`;
}

/** Puts text on the clipboard: the Clipboard API where the page may use it, else a selection copied. */
async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // refused (no permission, not focused): the selection below may still work
  }
  const area = h('textarea', { class: 'copy-buffer', readonly: true, 'aria-hidden': 'true', tabindex: -1 });
  area.value = text;
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  return ok;
}

const SVG = 'http://www.w3.org/2000/svg';

/** Two overlapping sheets, drawn (no font has to hold a copy sign). */
function copyIcon(): SVGSVGElement {
  const icon = document.createElementNS(SVG, 'svg');
  icon.setAttribute('viewBox', '0 0 12 12');
  icon.setAttribute('aria-hidden', 'true');
  for (const [x, y] of [
    [1, 1],
    [4, 4],
  ] as const) {
    const sheet = document.createElementNS(SVG, 'rect');
    for (const [k, v] of Object.entries({ x, y, width: 7, height: 7, rx: 1 })) sheet.setAttribute(k, String(v));
    icon.append(sheet);
  }
  return icon;
}

/** The copy button of a value: copies it whole, and says how that went for a moment (its class and title). */
export function copyButton(value: string, label = value): HTMLButtonElement {
  const title = `Copy ${label}`;
  const button = h('button', { type: 'button', class: 'copy', title, 'aria-label': `copy ${label}`, 'data-copy': value }, copyIcon());
  button.addEventListener('click', async (e) => {
    e.preventDefault();
    e.stopPropagation();
    const ok = await copyText(value);
    button.classList.add(ok ? 'copied' : 'failed');
    button.title = ok ? 'Copied' : 'The browser refused to copy';
    setTimeout(() => {
      button.classList.remove('copied', 'failed');
      button.title = title;
    }, 1200);
  });
  return button;
}

/** The short text of an id as `<code>`, its whole value in the title and in what a copy of its text gives. */
export function idCode(id: string): HTMLElement {
  const code = h('code', { class: 'id', title: id, 'data-id': id }, shortText(id));
  if (code.textContent !== id) {
    code.addEventListener('copy', (e: ClipboardEvent) => {
      // Selecting the shortened text and copying it copies the id, not `task_Ab3dE9x1…`.
      if (!e.clipboardData) return;
      e.clipboardData.setData('text/plain', id);
      e.preventDefault();
    });
  }
  return code;
}

/** An id shortened, with its copy button; `href` makes the short text a link (to the task, say). */
export function shortId(id: string, href?: string): HTMLElement {
  const code = idCode(id);
  return h('span', { class: 'id-cell' }, href ? h('a', { href, title: id }, code) : code, copyButton(id));
}

/** A token as a person knows it: its name (its id in the title), or its short id once it is deleted; '—' for none. */
export function tokenLabel(id: string | null, name: string | null | undefined, href?: string): HTMLElement | string {
  if (id === null) return '—';
  if (!name) return h('span', { class: 'token-ref', title: `${id} (deleted)` }, idCode(id), ' (deleted)');
  // A long name shows its first two lines (console.css); the title has it whole, with the id.
  const text = h('span', { class: 'token-name', title: `${name}\n${id}`, 'data-token-id': id }, name);
  return h('span', { class: 'token-ref' }, href ? h('a', { href, title: id }, text) : text, copyButton(id, `token id ${id}`));
}
