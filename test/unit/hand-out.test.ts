/**
 * handOutLinks (src/links/hand-out.ts) on its own: which strings of an answer become links in each
 * mode, what is recorded for each, and what is left exactly as it was.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CompiledRoute, LinkPlaces, Snapshot, SyncRoute } from '../../src/config/snapshot.js';
import { handOutLinks, linkIdOf, sequentialLinkSecrets } from '../../src/links/hand-out.js';
import type { RequestContext } from '../../src/pipeline/context.js';
import type { LinkRecord, Store } from '../../src/store/store.js';

const LINK_ROUTE = { kind: 'link-content', path: '/v1/links/{link}', matcher: { params: ['link'] } } as unknown as CompiledRoute;
const NOW = Date.parse('2026-11-26T00:00:00Z');

/** Hands out the links of `answer` on a route with `links`; returns the new answer and what was recorded. */
async function handOut(links: LinkPlaces, answer: unknown, routes: CompiledRoute[] = [LINK_ROUTE]) {
  const recorded: LinkRecord[][] = [];
  const store = { putLinks: async (l: readonly LinkRecord[]) => void recorded.push([...l]) } as unknown as Store;
  const ctx = {
    route: { links } as CompiledRoute,
    snapshot: { routes } as unknown as Snapshot,
    token: { id: 'tok-1' },
    now: new Date(NOW),
    publicBase: 'https://gw.test',
  } as unknown as RequestContext<SyncRoute>;
  const out = await handOutLinks(ctx, answer, 'chan-a', { store, linkTtlMs: 1000, newLinkSecret: sequentialLinkSecrets() });
  return { out, recorded };
}

const link = (n: number) => `https://gw.test/v1/links/${`goldenlink${n}`.padEnd(32, '0')}`;

test('links places: URLs there become links, data: URIs stored results; other strings and places stay', async () => {
  const answer = {
    data: [{ url: 'https://cdn.v.test/a.png?sig=1' }, { url: 'data:image/PNG;name=x;base64,iVBORw==' }, { url: 'not a url' }, { b64_json: 'AAAA' }],
    note: 'https://v.test/docs',
  };
  const { out, recorded } = await handOut({ mode: 'at', places: [['data', '*', 'url']] }, answer);
  assert.deepEqual(out, { data: [{ url: link(1) }, { url: link(2) }, { url: 'not a url' }, { b64_json: 'AAAA' }], note: 'https://v.test/docs' });
  assert.equal(recorded.length, 1, 'one store call for the answer');
  const [vendor, stored] = recorded[0]!;
  assert.deepEqual(vendor, {
    id: linkIdOf('goldenlink1'.padEnd(32, '0')),
    tokenId: 'tok-1',
    channel: 'chan-a',
    url: 'https://cdn.v.test/a.png?sig=1',
    data: null,
    contentType: null,
    createdAt: NOW,
    expiresAt: NOW + 1000,
  });
  assert.equal(stored!.url, null);
  assert.equal(stored!.contentType, 'image/png');
  assert.deepEqual(stored!.data, Buffer.from('iVBORw==', 'base64'));
  assert.deepEqual(answer.data[0], { url: 'https://cdn.v.test/a.png?sig=1' }, 'the answer given is not changed in place');
});

test('a data: URI whose media type is not one is stored as bytes, never as a header it could break', async () => {
  const { recorded } = await handOut({ mode: 'at', places: [['u']] }, { u: 'data:text/html\r\nset-cookie: x=1;base64,PGI+' });
  assert.equal(recorded[0]![0]!.contentType, 'application/octet-stream');
});

test('the scan links every http(s) URL of the answer, never a data: URI; overlapping places link once', async () => {
  const scanned = await handOut({ mode: 'scan' }, { a: ['http://v.test/1', 'data:image/png;base64,AA=='], b: { c: 'HTTPS://v.test/2' }, d: 7 });
  assert.deepEqual(scanned.out, { a: [link(1), 'data:image/png;base64,AA=='], b: { c: link(2) }, d: 7 });
  const twice = await handOut(
    {
      mode: 'at',
      places: [
        ['a', '*'],
        ['a', '0'],
      ],
    },
    { a: ['http://v.test/1'] },
  );
  assert.deepEqual(twice.out, { a: [link(1)] });
  assert.equal(twice.recorded[0]!.length, 1);
});

test('a named segment goes to its own child only: an index as a pointer writes it, a key the answer lacks, an index past the end', async () => {
  const answer = { data: [{ url: 'http://v.test/0' }, { url: 'http://v.test/1' }], keep: { url: 'http://v.test/k' } };
  const { out, recorded } = await handOut(
    {
      mode: 'at',
      places: [
        ['data', '1', 'url'],
        ['data', '01', 'url'],
        ['data', '9', 'url'],
        ['nothing', '*'],
      ],
    },
    answer,
  );
  assert.deepEqual(out, { data: [{ url: 'http://v.test/0' }, { url: link(1) }], keep: { url: 'http://v.test/k' } });
  assert.equal(recorded[0]!.length, 1);
  const o = out as typeof answer;
  assert.equal(o.data[0], answer.data[0], 'an untouched sibling is shared, not copied');
  assert.equal(o.keep, answer.keep);
  assert.notEqual(o.data, answer.data, 'the answer given is never changed in place');
  assert.equal(answer.data[1]!.url, 'http://v.test/1');
});

test('nothing to link, pass_vendor_url, or no link route: the very same answer, no store call', async () => {
  const plain = { data: [{ url: 'plain' }], n: 1 };
  const withUrl = { u: 'https://v.test/x' };
  const cases: [LinkPlaces, unknown, CompiledRoute[]][] = [
    [{ mode: 'at', places: [['data', '*', 'url']] }, plain, [LINK_ROUTE]],
    [{ mode: 'pass' }, withUrl, [LINK_ROUTE]],
    [{ mode: 'scan' }, withUrl, []],
  ];
  for (const [places, answer, routes] of cases) {
    const { out, recorded } = await handOut(places, answer, routes);
    assert.equal(out, answer, `${places.mode}: the same object, nothing copied`);
    assert.deepEqual(recorded, [], `${places.mode}: no store call`);
  }
});
