/**
 * Self-signed certificates for the TLS tests, made by `openssl` (node:crypto cannot write X.509):
 * each for 127.0.0.1 and localhost, valid for two days. Where openssl is missing the tests skip
 * saying so, except under CI=true (`.ci/run` installs it), where a skip is a failure instead.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { skipReason } from './skip-reason.js';

/** A certificate and its key: the files and their contents. */
export interface Certificate {
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: string;
  readonly key: string;
  /** SHA-256 fingerprint, as a TLS peer certificate reports it (`fingerprint256`). */
  readonly fingerprint: string;
}

function opensslPath(): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, 'openssl'))) return join(dir, 'openssl');
  return null;
}

/** Why the TLS tests cannot run here, or null when they can. Throws under CI=true. */
export function opensslMissing(): string | null {
  if (opensslPath() !== null) return null;
  return skipReason('openssl is not installed (apt-get install openssl); the TLS tests are skipped');
}

/** Makes a self-signed certificate and its EC P-256 key as `<name>.pem` and `<name>.key` in `dir`. */
export function makeCertificate(dir: string, name: string, commonName = name): Certificate {
  const certFile = join(dir, `${name}.pem`);
  const keyFile = join(dir, `${name}.key`);
  execFileSync(
    opensslPath() ?? 'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'pipe', timeout: 20_000 },
  );
  const cert = readFileSync(certFile, 'utf8');
  return { certFile, keyFile, cert, key: readFileSync(keyFile, 'utf8'), fingerprint: new X509Certificate(cert).fingerprint256 };
}
