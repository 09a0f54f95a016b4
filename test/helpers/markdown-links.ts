/**
 * Relative links of Markdown files, and whether they resolve: the file or directory must exist in
 * the repository, and a `#anchor` into a Markdown file must be one of its headings (slugged as
 * GitHub slugs them, duplicates numbered) or an explicit `<a id>`/`<a name>`. Code (fenced,
 * indented, inline) and HTML comments hold no links.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** A heading's anchor as GitHub makes it: plain text, lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  return heading
    .replace(/<[^>]*>/g, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The text with fenced and indented code blocks and HTML comments blanked out, line count kept. */
function proseOf(markdown: string): string[] {
  const lines = markdown.replace(/<!--[\s\S]*?-->/g, (c) => c.replace(/[^\n]/g, ' ')).split('\n');
  let fence: string | null = null;
  let indented = false;
  return lines.map((line, i) => {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== null) {
      if (open && open[1]!.startsWith(fence)) fence = null;
      return '';
    }
    if (open) {
      fence = open[1]!;
      return '';
    }
    const blankBefore = i === 0 || lines[i - 1]!.trim() === '';
    if (/^( {4}|\t)/.test(line) && (indented || blankBefore)) {
      indented = true;
      return '';
    }
    if (line.trim() !== '') indented = false;
    return line;
  });
}

/** Inline code spans blanked out, block by block (a span never crosses a blank line). */
function withoutCodeSpans(lines: string[]): string {
  return lines
    .join('\n')
    .split(/(\n[ \t]*\n)/)
    .map((block) => block.replace(/(`+)[\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, ' ')))
    .join('');
}

/** Every anchor a file offers: heading slugs (the second of a name gets `-1`, …) and explicit ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseOf(markdown)) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (heading) {
      const slug = githubSlug(heading[1]!.replace(/`/g, ''));
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** The link targets of a file that are not URLs, with their line numbers. */
export function relativeLinks(markdown: string): { line: number; target: string }[] {
  const text = withoutCodeSpans(proseOf(markdown));
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const links: { line: number; target: string }[] = [];
  const found = [
    ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => ({ index: m.index!, target: m[1]! })),
    ...[...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => ({ index: m.index!, target: m[1]! })),
  ];
  for (const { index, target } of found) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
    links.push({ line: lineAt(index), target });
  }
  return links.sort((a, b) => a.line - b.line);
}

/** `file:line: what is wrong` for every relative link of `files` (paths relative to `root`) that does not resolve. */
export function brokenLinks(root: string, files: readonly string[]): string[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => {
    let a = anchorCache.get(file);
    if (!a) anchorCache.set(file, (a = anchorsOf(readFileSync(file, 'utf8'))));
    return a;
  };
  const out: string[] = [];
  for (const file of files) {
    const from = join(root, file);
    for (const { line, target } of relativeLinks(readFileSync(from, 'utf8'))) {
      const where = `${file}:${line}: ${target}`;
      const hash = target.indexOf('#');
      const pathPart = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? null : target.slice(hash + 1);
      let path: string;
      try {
        path = decodeURIComponent(pathPart);
      } catch {
        out.push(`${where}: a malformed escape`);
        continue;
      }
      const to = path === '' ? from : path.startsWith('/') ? join(root, path) : resolve(dirname(from), path);
      const inside = relative(root, to);
      if (inside.startsWith('..') || inside.split(sep)[0] === '..') {
        out.push(`${where}: outside the repository`);
        continue;
      }
      if (!existsSync(to)) {
        out.push(`${where}: no such file`);
        continue;
      }
      if (anchor === null || anchor === '') continue;
      if (!to.endsWith('.md')) {
        if (!/^L\d+(-L\d+)?$/.test(anchor)) out.push(`${where}: an anchor into a file that is not Markdown`);
        continue;
      }
      if (!anchorsIn(to).has(decodeURIComponent(anchor))) out.push(`${where}: no heading or anchor "${anchor}" in ${relative(root, to)}`);
    }
  }
  return out;
}
