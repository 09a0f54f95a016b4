/**
 * The documents a reader finds: every relative link of README.md, the Markdown of docs/ and
 * bench/*.md resolves (the file exists, and a `#anchor` is a heading or an explicit anchor of the Markdown file
 * it names, slugged as GitHub slugs headings); the README stays short and opens with the two commands.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { anchorsOf, brokenLinks, githubSlug, relativeLinks } from '../helpers/markdown-links.js';

/** The Markdown files of a folder and its subfolders, relative to the project root. */
function markdownUnder(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? markdownUnder(`${dir}/${d.name}`) : d.name.endsWith('.md') ? [`${dir}/${d.name}`] : [],
  );
}

const DOCUMENTS = [
  'README.md',
  'CHANGELOG.md',
  ...markdownUnder('docs'),
  ...readdirSync(join(PROJECT_ROOT, 'bench'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `bench/${f}`),
];

describe('the link checker', () => {
  test('slugs headings as GitHub does', () => {
    assert.equal(githubSlug('routes.yaml reference'), 'routesyaml-reference');
    assert.equal(githubSlug('Streaming: :streamGenerateContent?alt=sse'), 'streaming-streamgeneratecontentaltsse');
    assert.equal(githubSlug('Operating: admin routes and metrics'), 'operating-admin-routes-and-metrics');
    assert.equal(githubSlug('Several replicas on PostgreSQL (--replicas N)'), 'several-replicas-on-postgresql---replicas-n');
    assert.equal(githubSlug('History: reloads from ~230 ms to ~60 ms'), 'history-reloads-from-230-ms-to-60-ms');
    assert.equal(githubSlug('A [linked](x.md) heading_with_underscores'), 'a-linked-heading_with_underscores');
  });

  test('anchors: headings (duplicates numbered, code spans read as text), explicit ids; none from code blocks', () => {
    const md = [
      '# Title',
      '## Same',
      '## Same',
      '### `npm run docs`',
      '<a id="kept"></a>**Bold.**',
      '```',
      '# not a heading',
      '```',
      '    # nor this',
      '',
    ].join('\n');
    assert.deepEqual([...anchorsOf(md)].sort(), ['kept', 'npm-run-docs', 'same', 'same-1', 'title']);
  });

  test('finds links over line breaks and reference definitions; not in code, comments or URLs', () => {
    const md = [
      'See [the\ndocs](docs/a.md#x) and ![a picture](img.png "title").',
      '`[not](code.md)` and <!-- [not](comment.md) --> and [a site](https://example.com).',
      '',
      '```',
      '[not](fenced.md)',
      '```',
      '[ref]: other.md#y',
    ].join('\n');
    assert.deepEqual(relativeLinks(md), [
      { line: 2, target: 'docs/a.md#x' },
      { line: 2, target: 'img.png' },
      { line: 8, target: 'other.md#y' },
    ]);
  });

  test('reports a missing file, a missing anchor and a link out of the repository, and passes good links', () => {
    const root = mkdtempSync(join(tmpdir(), 'gw-links-'));
    try {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'docs/a.md'), '# A\n\n## Part one\n\n<a id="here"></a>Text.\n');
      writeFileSync(
        join(root, 'README.md'),
        [
          '[ok](docs/a.md) [ok](docs/a.md#part-one) [ok](docs/a.md#here) [ok](#top) [ok](docs/)',
          '# Top',
          '[gone](docs/b.md) [no anchor](docs/a.md#part-two) [self](#nowhere) [out](../x.md)',
        ].join('\n'),
      );
      assert.deepEqual(brokenLinks(root, ['README.md', 'docs/a.md']), [
        'README.md:3: docs/b.md: no such file',
        'README.md:3: docs/a.md#part-two: no heading or anchor "part-two" in docs/a.md',
        'README.md:3: #nowhere: no heading or anchor "nowhere" in README.md',
        'README.md:3: ../x.md: outside the repository',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the documents', () => {
  test('there are documents to check: the README, docs/ and its generated, spec and subject files, bench/', () => {
    for (const f of [
      'README.md',
      'docs/client-api.md',
      'docs/generated/catalogue.md',
      'docs/generated/errors.md',
      'docs/spec/interface.md',
      'bench/RESULTS.md',
    ])
      assert.ok(DOCUMENTS.includes(f), f);
  });

  test('every relative link of README.md, docs/**/*.md and bench/*.md resolves, to a file and to an anchor in it', () => {
    const links = DOCUMENTS.reduce((n, f) => n + relativeLinks(readFileSync(join(PROJECT_ROOT, f), 'utf8')).length, 0);
    assert.ok(links > 100, `${links} links checked`);
    assert.deepEqual(brokenLinks(PROJECT_ROOT, DOCUMENTS), []);
  });

  test('the README is under 250 lines and opens with the two commands a newcomer runs', () => {
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    assert.ok(readme.split('\n').length < 250, `${readme.split('\n').length} lines`);
    const first = /^# .*\n\n```sh\n([\s\S]*?)```/.exec(readme);
    assert.ok(first, 'a title, then a shell block');
    assert.match(first[1]!, /^npm ci && npm run demo\b/m);
    assert.match(first[1]!, /^npm test\b/m);
  });
});
