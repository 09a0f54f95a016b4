/**
 * The settings of how `gateway start` serves (docs/operating.md, "Settings and commands";
 * docs/deploying.md, "TLS and proxies", "CORS"), on real processes: a TLS pair, a trust-proxy list
 * or a CORS origin that cannot work stops the start with exit 2 and one line naming the variable;
 * a good pair serves HTTPS, and says so in the line that says it listens.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Certificate, makeCertificate, opensslMissing } from '../helpers/certificates.js';
import { runCli, startCli } from '../helpers/process.js';

const NO_CHANNEL_ENV = { ALPHA_BASE_URL: '', ALPHA_API_KEY: '' };
const missing = opensslMissing();

describe('gateway start: TLS, trusted proxies and CORS origins', { skip: missing ?? false }, () => {
  let dir: string;
  let a: Certificate;
  let b: Certificate;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-net-cli-'));
    a = makeCertificate(dir, 'a');
    b = makeCertificate(dir, 'b');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const env = (extra: Record<string, string>) => ({ ...NO_CHANNEL_ENV, PORT: '0', HOST: '127.0.0.1', GATEWAY_DB: join(dir, 'gw.db'), ...extra });

  test('a setting that cannot work: exit 2 and one line naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ GATEWAY_TLS_CERT: a.certFile }, /^gateway: GATEWAY_TLS_CERT is set but GATEWAY_TLS_KEY is not; set both to serve HTTPS, or neither/],
      [{ GATEWAY_TLS_CERT: join(dir, 'absent.pem'), GATEWAY_TLS_KEY: a.keyFile }, /^gateway: GATEWAY_TLS_CERT=.*absent\.pem: cannot be read \(ENOENT\)/],
      [
        { GATEWAY_TLS_CERT: a.certFile, GATEWAY_TLS_KEY: b.keyFile },
        /^gateway: GATEWAY_TLS_KEY=.*b\.key is not the key of the certificate in GATEWAY_TLS_CERT/,
      ],
      [{ GATEWAY_TRUST_PROXY: '10.0.0.0/33' }, /^gateway: GATEWAY_TRUST_PROXY: "10\.0\.0\.0\/33" is not an address, a CIDR block/],
      [
        { GATEWAY_CORS_ORIGINS: 'https://app.example.com/' },
        /^gateway: GATEWAY_CORS_ORIGINS: "https:\/\/app\.example\.com\/" is not an origin .*did you mean https:\/\/app\.example\.com\?/,
      ],
    ];
    for (const [extra, message] of cases) {
      const r = runCli(['start'], env(extra));
      assert.equal(r.status, 2, `${JSON.stringify(extra)}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').length, 1, `one line, no stack: ${r.stderr}`);
    }
  });

  test('a good pair serves HTTPS: the listening line says https, and a client trusting the certificate is answered', async () => {
    const proc = startCli(['start'], env({ GATEWAY_TLS_CERT: a.certFile, GATEWAY_TLS_KEY: a.keyFile, GATEWAY_TRUST_PROXY: 'loopback' }));
    try {
      const [, base = ''] = await proc.waitFor(/"url":"(https:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"gateway listening"/);
      assert.match(proc.output(), /"subject":"CN=a"[^\n]*"msg":"serving HTTPS; the certificate files are watched"/);
      assert.match(proc.output(), /"trust_proxy":"loopback"/);
      const status = await new Promise<number>((resolve, reject) => {
        get(`${base}/healthz`, { agent: new Agent({ ca: a.cert }) }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).on('error', reject);
      });
      assert.equal(status, 200);
    } finally {
      assert.equal(await proc.stop('SIGTERM'), 0);
    }
  });
});
