import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A certificate and its private key, PEM. */
export interface KeyPair {
  readonly cert: string;
  readonly key: string;
}

/** Certificates made by `openssl` for TLS tests: two CAs, a server certificate and client certificates. */
export interface TestCertificates {
  /** The CA of the receiver and of the client certificate it accepts. */
  readonly ca: KeyPair;
  /** The receiver's certificate for 127.0.0.1 (IP subjectAltName), issued by `ca`. */
  readonly server: KeyPair;
  /** A client certificate issued by `ca`. */
  readonly client: KeyPair;
  /** Another CA, unknown to the receiver. */
  readonly otherCa: KeyPair;
  /** A client certificate issued by `otherCa`: the receiver refuses it. */
  readonly wrongClient: KeyPair;
}

/**
 * Makes {@link TestCertificates} with `openssl` (P-256 keys, valid for 2 days) in a temporary folder, then removes it.
 */
export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'tidings-certs-'));
  const file = (name: string): string => join(dir, name);
  const run = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const read = (name: string): KeyPair => ({
    cert: readFileSync(file(`${name}.crt`), 'utf8'),
    key: readFileSync(file(`${name}.key`), 'utf8'),
  });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  const ca = (name: string): void =>
    run('req', '-x509', ...ec, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`);
  const issue = (name: string, issuer: string, extensions: string): void => {
    writeFileSync(file(`${name}.ext`), extensions);
    run('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    run(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${issuer}.crt`,
      '-CAkey',
      `${issuer}.key`,
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    );
  };
  try {
    ca('test-ca');
    ca('other-ca');
    issue('receiver', 'test-ca', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
    issue('sender', 'test-ca', 'extendedKeyUsage=clientAuth\n');
    issue('stranger', 'other-ca', 'extendedKeyUsage=clientAuth\n');
    return {
      ca: read('test-ca'),
      server: read('receiver'),
      client: read('sender'),
      otherCa: read('other-ca'),
      wrongClient: read('stranger'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
