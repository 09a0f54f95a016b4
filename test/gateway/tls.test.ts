/**
 * HTTPS served by the gateway (docs/deploying.md, "TLS and proxies"): real TLS clients (node:https,
 * node:tls and undici) against self-signed certificates made in the test with openssl; a renewed
 * certificate serves new connections while a kept-alive one stays open; a broken renewal is logged
 * and the certificate serving stays; a pair that cannot serve is refused with the variable named.
 */
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Agent, request } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import pino from 'pino';
import { Agent as UndiciAgent, fetch as undiciFetch } from 'undici';
import { readTlsPair, type TlsFiles, tlsFilesFrom } from '../../src/http/tls.js';
import { type Certificate, makeCertificate, opensslMissing } from '../helpers/certificates.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

const missing = opensslMissing();

/** A log line as pino writes it. */
type Line = Record<string, unknown> & { msg: string; level: number };

/** Replaces a file the way a renewal does: a new file renamed over the old one. */
function replace(file: string, text: string): void {
  writeFileSync(`${file}.new`, text);
  renameSync(`${file}.new`, file);
}

/** One HTTPS GET through `agent`: the status, the body, the socket it went on and the certificate that socket was shown. */
function get(base: string, path: string, agent: Agent, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string; socket: Socket; fingerprint: string }>((resolve, reject) => {
    const req = request(`${base}${path}`, { agent, headers }, (res: IncomingMessage) => {
      // Read now: a kept-alive socket goes back to the agent, and off the answer, once the body ends.
      const socket = res.socket as TLSSocket;
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, socket, fingerprint }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A new TLS connection's view of the server's certificate (its fingerprint), trusting `ca`. */
function handshake(port: number, ca: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}

/** Sends `text` on a plain TCP connection and resolves with everything the server wrote before it closed. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () => socket.write(text));
    let got = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      got += d;
    });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
  });
}

describe('HTTPS with GATEWAY_TLS_CERT and GATEWAY_TLS_KEY', { skip: missing ?? false }, () => {
  let dir: string;
  let a: Certificate;
  let b: Certificate;
  let files: TlsFiles;
  let h: Harness;
  const lines: Line[] = [];
  let port: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-tls-'));
    a = makeCertificate(dir, 'a');
    b = makeCertificate(dir, 'b');
    // The files the gateway serves, in a directory of their own, as a renewal tool keeps them.
    mkdirSync(join(dir, 'live'));
    files = { certFile: join(dir, 'live', 'cert.pem'), keyFile: join(dir, 'live', 'key.pem') };
    writeFileSync(files.certFile, a.cert);
    writeFileSync(files.keyFile, a.key);
    const log = pino(
      { level: 'info' },
      {
        write(chunk: string) {
          for (const l of chunk.split('\n')) if (l) lines.push(JSON.parse(l) as Line);
        },
      },
    );
    h = await startHarness({ network: { tls: { files, pair: readTlsPair(files), debounceMs: 50 } }, log });
    port = Number(new URL(h.url).port);
  });
  after(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a client trusting the certificate gets answers over HTTPS; one that does not gets none', async () => {
    assert.match(h.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const trusting = new UndiciAgent({ connect: { ca: a.cert } });
    try {
      const res = await undiciFetch(`${h.url}/v1/models`, { dispatcher: trusting, headers: { authorization: `Bearer ${h.key}` } });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { data: unknown[] };
      assert.ok(body.data.length > 0, 'the model list came back over TLS');
      assert.ok(res.headers.get('x-request-id'));
    } finally {
      await trusting.close();
    }
    assert.equal(await handshake(port, [a.cert]), a.fingerprint, 'the certificate shown is the one of GATEWAY_TLS_CERT');
    await assert.rejects(fetch(`${h.url}/healthz`), 'a client that does not trust the self-signed certificate refuses it');
  });

  test('plain HTTP on the TLS port is answered 400 in clear, saying to use https; TLS on the same port still serves', async () => {
    // It once got the connection closed with no answer at all.
    const res = await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: `Bearer ${h.key}` } });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('connection'), 'close');
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'invalid_request');
    assert.equal(body.error.message, `this port speaks HTTPS only: call https://127.0.0.1:${port}/ instead of http://127.0.0.1:${port}/`);
    // Without a Host header it still says which scheme to use.
    const raw = await rawExchange(port, 'GET / HTTP/1.0\r\n\r\n');
    assert.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(raw, /this port speaks HTTPS only: call https:\/\/ instead of http:\/\//);
    assert.equal(await handshake(port, [a.cert]), a.fingerprint, 'a TLS client on the same port still gets its handshake');
  });

  test('a renewed certificate serves new connections, while a kept-alive connection stays open and answers', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: [a.cert, b.cert] });
    try {
      const first = await get(h.url, '/healthz', agent);
      assert.equal(first.status, 200);
      assert.equal(first.fingerprint, a.fingerprint);
      // As certbot or a secret mount renews: the key, then the certificate, each replaced whole.
      replace(files.keyFile, b.key);
      replace(files.certFile, b.cert);
      await until('new connections are shown the renewed certificate', async () => (await handshake(port, [a.cert, b.cert])) === b.fingerprint);
      assert.ok(
        lines.some((l) => l.msg.startsWith('TLS certificate reloaded') && String(l.subject).includes('CN=b')),
        'the reload is logged with the new subject',
      );
      const second = await get(h.url, '/v1/models', agent, { authorization: `Bearer ${h.key}` });
      assert.equal(second.status, 200, second.body);
      assert.equal(second.socket, first.socket, 'the second request went on the connection opened before the renewal');
      assert.equal(second.fingerprint, a.fingerprint, 'that connection keeps the certificate it was opened with');
      assert.equal(first.socket.destroyed, false);
    } finally {
      agent.destroy();
    }
  });

  test('a renewal that does not load is logged, and the certificate serving stays', async () => {
    const before = lines.length;
    replace(files.certFile, 'not a certificate\n');
    await until('the broken renewal is logged', () => lines.slice(before).find((l) => l.msg.includes('do not load')));
    const warned = lines.slice(before).find((l) => l.msg.includes('do not load'));
    assert.equal(warned?.level, 40, 'a warning');
    assert.match(String(warned?.err), /GATEWAY_TLS_CERT=.*not a PEM certificate/);
    assert.equal(await handshake(port, [a.cert, b.cert]), b.fingerprint, 'new connections still get the last good certificate');
    const res = await get(h.url, '/healthz', new Agent({ ca: [b.cert] }));
    assert.equal(res.status, 200);
    // Put right again (written in place this time): the watch picks it up.
    writeFileSync(files.certFile, a.cert);
    writeFileSync(files.keyFile, a.key);
    await until('the repaired pair serves', async () => (await handshake(port, [a.cert, b.cert])) === a.fingerprint);
    assert.equal(h.gateway.reloadTls(), false, 'nothing new to read: the pair serving is the pair in the files');
  });
});

describe('a TLS pair that cannot serve is refused, naming the variable', { skip: missing ?? false }, () => {
  let dir: string;
  let a: Certificate;
  let b: Certificate;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-tls-bad-'));
    a = makeCertificate(dir, 'a');
    b = makeCertificate(dir, 'b');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('both variables or neither', () => {
    assert.equal(tlsFilesFrom(null, null), null);
    assert.throws(() => tlsFilesFrom(a.certFile, null), /^Error: GATEWAY_TLS_CERT is set but GATEWAY_TLS_KEY is not/);
    assert.throws(() => tlsFilesFrom(null, a.keyFile), /^Error: GATEWAY_TLS_KEY is set but GATEWAY_TLS_CERT is not/);
  });

  test('a missing file, a file that is not PEM, an encrypted key, and a key of another certificate', () => {
    assert.throws(() => readTlsPair({ certFile: join(dir, 'nope.pem'), keyFile: a.keyFile }), /GATEWAY_TLS_CERT=.*nope\.pem: cannot be read \(ENOENT\)/);
    assert.throws(() => readTlsPair({ certFile: a.certFile, keyFile: join(dir, 'nope.key') }), /GATEWAY_TLS_KEY=.*nope\.key: cannot be read \(ENOENT\)/);
    // Each file in the other's place: neither is what its variable says.
    assert.throws(() => readTlsPair({ certFile: a.keyFile, keyFile: a.keyFile }), /GATEWAY_TLS_CERT=.*: not a PEM certificate/);
    assert.throws(() => readTlsPair({ certFile: a.certFile, keyFile: a.certFile }), /GATEWAY_TLS_KEY=.*: not a PEM private key/);
    assert.throws(
      () => readTlsPair({ certFile: a.certFile, keyFile: b.keyFile }),
      /GATEWAY_TLS_KEY=.*b\.key is not the key of the certificate in GATEWAY_TLS_CERT=.*a\.pem/,
    );
    const encrypted = join(dir, 'encrypted.key');
    writeFileSync(encrypted, createPrivateKey(a.key).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }));
    assert.throws(() => readTlsPair({ certFile: a.certFile, keyFile: encrypted }), /GATEWAY_TLS_KEY=.*: an encrypted key/);
    const pair = readTlsPair({ certFile: a.certFile, keyFile: a.keyFile });
    assert.match(pair.subject, /CN=a/);
  });
});
