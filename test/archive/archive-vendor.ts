/**
 * A made-up vendor for the archive's tests: a task API (`POST /jobs` starts one, `GET /jobs/{id}`
 * says it is done, with the URL of its file on this vendor) and an image API (`POST /draw`
 * answers the URL of a file), whose files are made on the fly (src/sim/generated-file.ts) and
 * counted. `failNext(n)` makes the next n file answers 500, `goneNext(n)` 403 (an expired signed URL).
 * `GET /jobs/{id}/result` names the file again (a two-step vendor's result call), counted.
 */
import { createServer, type Server } from 'node:http';
import { serveGenerated, type Transfer } from '../../src/sim/generated-file.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';

/** A vendor of generated files. */
export interface ArchiveVendor {
  readonly url: string;
  /** Every file answer so far (500s included, as status 500). */
  /** Each file answer, with how many result lookups the vendor had answered before it. */
  readonly transfers: { readonly path: string; readonly status: number; readonly t: Transfer | null; readonly resultsBefore: number }[];
  /** File answers of the file `seed`. */
  fileAnswers(seed: number): number;
  failNext(n: number): void;
  goneNext(n: number): void;
  /** Result calls (`GET /jobs/{id}/result`) so far. */
  resultCalls(): number;
  close(): Promise<void>;
}

/** Files are `/files/<seed>-<size>`: a job's file is named in its submission (`{"seed":…,"size":…}`). */
export async function startArchiveVendor(): Promise<ArchiveVendor> {
  const transfers: { path: string; status: number; t: Transfer | null; resultsBefore: number }[] = [];
  let failing = 0;
  let gone = 0;
  let results = 0;
  let base = '';
  const jobs = new Map<string, { seed: number; size: number }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { seed?: number; size?: number }) : {};
      if (req.method === 'POST' && path === '/jobs') {
        const id = `job${jobs.size + 1}`;
        jobs.set(id, { seed: Number(body.seed ?? 1), size: Number(body.size ?? 1024) });
        return json(200, { job: id, state: 'working' });
      }
      const result = /^\/jobs\/(job[0-9]+)\/result$/.exec(path);
      if (result) {
        const j = jobs.get(result[1]!);
        results++;
        return j ? json(200, { url: `${base}/files/${j.seed}-${j.size}` }) : json(404, { error: 'no such job' });
      }
      const job = /^\/jobs\/(job[0-9]+)$/.exec(path);
      if (job) {
        const j = jobs.get(job[1]!);
        if (!j) return json(404, { error: 'no such job' });
        return json(200, { job: job[1], state: 'done', url: `${base}/files/${j.seed}-${j.size}` });
      }
      if (req.method === 'POST' && path === '/draw') return json(200, { files: [{ url: `${base}/files/${body.seed}-${body.size}` }] });
      const file = /^\/files\/([0-9]+)-([0-9]+)$/.exec(path);
      if (file) {
        if (gone > 0) {
          gone--;
          transfers.push({ path, status: 403, t: null, resultsBefore: results });
          return json(403, { error: 'the signature expired' });
        }
        if (failing > 0) {
          failing--;
          transfers.push({ path, status: 500, t: null, resultsBefore: results });
          return json(500, { error: 'busy' });
        }
        const t = serveGenerated(req, res, { seed: Number(file[1]), size: Number(file[2]), contentType: 'video/mp4' });
        transfers.push({ path, status: t.status, t, resultsBefore: results });
        return;
      }
      json(404, { error: 'no route' });
    });
  });
  base = await listenLocal(server);
  return {
    url: base,
    transfers,
    fileAnswers: (seed) => transfers.filter((x) => x.path.startsWith(`/files/${seed}-`)).length,
    failNext(n) {
      failing = n;
    },
    goneNext(n) {
      gone = n;
    },
    resultCalls: () => results,
    close: () => closeLocal(server),
  };
}

/** routes.yaml and channels.yaml of a task route, its query and content routes, and an image route with links, in front of `vendorUrl`. */
export function archiveConfig(vendorUrl: string, opts: { drawArchive?: string; jobsArchive?: string; twoStep?: boolean } = {}): Record<string, string> {
  return {
    'routes.yaml': `version: 1
routes:
  - id: jobs
    method: POST
    path: /jobs
    kind: task-submit
    operation: create
    model: { body: /model }
    models: [m]
    body: { schema: body.json }
    task: { kind: job, answer: '{ "id": task.id, "status": task.status }' }
${opts.jobsArchive ? `    archive: ${opts.jobsArchive}\n` : ''}  - id: job
    method: GET
    path: /jobs/{id}
    kind: task-query
    task: { kinds: [job], id: { path: id }, answer: '{ "id": task.id, "status": task.status }' }
  - id: job-content
    method: GET
    path: /jobs/{id}/content
    kind: task-content
    task: { kinds: [job], id: { path: id } }
  - id: draw
    method: POST
    path: /draw
    kind: sync
    operation: draw
    model: { body: /model }
    models: [d]
    body: { schema: body.json }
    links: [/files/*/url]
${opts.drawArchive ? `    archive: ${opts.drawArchive}\n` : ''}  - id: links
    method: GET
    path: /v1/links/{link}
    kind: link-content
families:
  - { name: jobs, models: [m] }
  - { name: drawings, models: [d] }
`,
    'channels.yaml': `version: 1
groups: { default: {} }
profiles:
  fake:
    auth: { type: none }
    operations:
      create:
        request: { method: POST, path: '"/jobs"', body: '{ "seed": body.seed, "size": body.size }' }
        response: { body: '{ "id": body.job, "status": "in_progress" }' }
      draw:
        request: { method: POST, path: '"/draw"', body: '{ "seed": body.seed, "size": body.size }' }
        response: { body: '{ "files": body.files }' }
    tasks:
      query:
        request: { method: GET, path: '"/jobs/" & task.upstream_id' }
        response:
          body: '{ "id": body.job, "status": body.state = "done" ? "completed" : "in_progress"${opts.twoStep ? '' : ', "results": body.state = "done" ? [{ "url": body.url, "type": "video" }]'} }'
${
  opts.twoStep
    ? `      result:
        request: { method: GET, path: '"/jobs/" & task.upstream_id & "/result"' }
        response: { body: '{ "results": [{ "url": body.url, "type": "video" }] }' }
`
    : ''
}channels:
  - name: fake
    profile: fake
    base_url: ${vendorUrl}
    groups: [default]
    models: [m, d]
    polling: { interval_ms: 100 }
`,
  };
}
