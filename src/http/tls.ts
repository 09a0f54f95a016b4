import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createSecureContext, type Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';

/**
 * HTTPS served by the gateway itself (GATEWAY_TLS_CERT, GATEWAY_TLS_KEY): the two PEM files are
 * read and checked at start (a missing, unreadable or mismatched file stops the start with a message
 * naming the variable), and read again whenever either changes, so a renewed certificate serves new
 * connections without a restart while the connections already open keep theirs. A new pair that
 * does not load is logged and the pair serving stays.
 */

/** Where the certificate (its chain may follow it) and its private key are, as PEM files. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

/** A certificate and key that belong together, as read. */
export interface TlsPair {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** The certificate's subject and end of validity, for the logs. */
  readonly subject: string;
  readonly validTo: string;
}

/** The files of GATEWAY_TLS_CERT and GATEWAY_TLS_KEY: both set (HTTPS), or neither (null: HTTP). */
export function tlsFilesFrom(certFile: string | null, keyFile: string | null): TlsFiles | null {
  if (certFile === null && keyFile === null) return null;
  if (certFile === null) throw new Error('GATEWAY_TLS_KEY is set but GATEWAY_TLS_CERT is not; set both to serve HTTPS, or neither to serve HTTP');
  if (keyFile === null) throw new Error('GATEWAY_TLS_CERT is set but GATEWAY_TLS_KEY is not; set both to serve HTTPS, or neither to serve HTTP');
  return { certFile: resolve(certFile), keyFile: resolve(keyFile) };
}

function readPem(variable: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`${variable}=${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** Reads and checks the pair; throws a message naming the variable at fault. */
export function readTlsPair(files: TlsFiles): TlsPair {
  const cert = readPem('GATEWAY_TLS_CERT', files.certFile);
  const key = readPem('GATEWAY_TLS_KEY', files.keyFile);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new Error(`GATEWAY_TLS_CERT=${files.certFile}: not a PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    // An encrypted key asks for a passphrase the gateway has no setting for.
    const why = /-----BEGIN ENCRYPTED|Proc-Type: 4,ENCRYPTED/.test(key.toString('latin1'))
      ? 'an encrypted key; give it unencrypted (openssl pkey -in … -out …)'
      : 'not a PEM private key';
    throw new Error(`GATEWAY_TLS_KEY=${files.keyFile}: ${why}`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new Error(`GATEWAY_TLS_KEY=${files.keyFile} is not the key of the certificate in GATEWAY_TLS_CERT=${files.certFile}`);
  }
  try {
    // What the server will do with them: a chain in the wrong order or an unusable key fails here, not at the first handshake.
    createSecureContext({ cert, key });
  } catch (err) {
    throw new Error(`GATEWAY_TLS_CERT / GATEWAY_TLS_KEY: the pair does not load (${(err as Error).message})`);
  }
  return { cert, key, subject: x509.subject.replace(/\n/g, ', '), validTo: new Date(x509.validTo).toISOString() };
}

/** A running watch of the certificate files. */
export interface TlsWatch {
  /** Reads the files again now (SIGHUP); true when a new pair now serves. */
  reload(): boolean;
  close(): void;
}

/**
 * Watches the directories of the two files (a renewal, certbot's or a Kubernetes secret's, replaces
 * them or a symlink to them, which a watch on the file would lose) and, `debounceMs` after the last
 * event, reads the pair again; a pair unlike the one serving is given to `server.setSecureContext`,
 * which new handshakes use. A pair that does not load is logged, and the one serving stays.
 */
export function watchTls(server: TlsServer, files: TlsFiles, serving: TlsPair, log: Logger, debounceMs: number): TlsWatch {
  let current = serving;
  let timer: NodeJS.Timeout | null = null;
  const watchers: FSWatcher[] = [];

  const reload = (): boolean => {
    let next: TlsPair;
    try {
      next = readTlsPair(files);
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'the TLS certificate files changed but do not load; the certificate serving stays');
      return false;
    }
    if (next.cert.equals(current.cert) && next.key.equals(current.key)) return false;
    server.setSecureContext({ cert: next.cert, key: next.key });
    current = next;
    log.info({ subject: next.subject, valid_to: next.validTo }, 'TLS certificate reloaded; new connections use it');
    return true;
  };
  const changed = () => {
    if (timer === null) timer = setTimeout(fire, debounceMs);
    else timer.refresh();
  };
  const fire = () => {
    timer = null;
    reload();
  };

  for (const dir of new Set([dirname(files.certFile), dirname(files.keyFile)])) {
    try {
      const w = watch(dir, { persistent: false }, changed);
      w.on('error', (err) => log.warn({ dir, err: err.message }, 'stopped watching the TLS certificate files; SIGHUP reads them again'));
      watchers.push(w);
    } catch (err) {
      log.warn({ dir, err: (err as Error).message }, 'cannot watch the TLS certificate files; SIGHUP reads them again');
    }
  }
  return {
    reload,
    close() {
      if (timer) clearTimeout(timer);
      timer = null;
      for (const w of watchers) w.close();
    },
  };
}
