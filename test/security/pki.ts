/**
 * Certificates made at test time with the `openssl` CLI, in a temporary directory: a CA, a server
 * certificate for localhost/127.0.0.1, client certificates (mutual TLS), and the bad ones the tests
 * refuse: an expired server certificate, one for another host name, a second CA and a client
 * certificate it signed. EC P-256 keys (fast to make).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Pair {
  readonly key: string;
  readonly cert: string;
}

export interface Pki {
  readonly dir: string;
  /** The CA's certificate file. */
  readonly ca: string;
  /** Another CA, unknown to everybody. */
  readonly otherCa: string;
  /** For localhost and 127.0.0.1, signed by `ca`. */
  readonly server: Pair;
  /** Signed by `ca`, valid in 2020 only. */
  readonly expiredServer: Pair;
  /** Signed by `ca`, for elsewhere.example only. */
  readonly wrongHostServer: Pair;
  /** Client certificate of CN=orders, signed by `ca`. */
  readonly orders: Pair;
  /** Client certificate of CN=billing, signed by `ca`. */
  readonly billing: Pair;
  /** Client certificate of CN=orders, signed by `otherCa`. */
  readonly intruder: Pair;
  /** A new server certificate (same names) from `ca`, e.g. to rotate to. */
  issueServer(name: string): Pair;
  remove(): void;
}

const openssl = (cwd: string, args: string[]) => execFileSync('openssl', args, { cwd, stdio: 'pipe' });

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '3',
    '-subj',
    `/CN=${name}`,
  ]);
}

function issue(
  dir: string,
  ca: string,
  name: string,
  subject: string,
  altNames: string,
  dates?: { start: string; end: string },
): Pair {
  openssl(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    subject,
  ]);
  fs.writeFileSync(path.join(dir, `${name}.ext`), `subjectAltName=${altNames}\n`);
  if (dates === undefined) {
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    ]);
  } else {
    // `openssl ca` takes explicit dates (x509 -req cannot back-date in OpenSSL 3.0)
    const db = path.join(dir, `${ca}-db`);
    fs.mkdirSync(db, { recursive: true });
    fs.writeFileSync(path.join(db, 'index.txt'), '');
    fs.writeFileSync(path.join(db, 'serial'), '1000\n');
    fs.writeFileSync(
      path.join(dir, `${name}.cnf`),
      [
        '[ca]',
        'default_ca = test',
        '[test]',
        `dir = ${db}`,
        'database = $dir/index.txt',
        'serial = $dir/serial',
        'new_certs_dir = $dir',
        'default_md = sha256',
        'policy = any',
        'copy_extensions = none',
        'unique_subject = no',
        '[any]',
        'commonName = supplied',
        '[ext]',
        `subjectAltName=${altNames}`,
        '',
      ].join('\n'),
    );
    openssl(dir, [
      'ca',
      '-batch',
      '-config',
      `${name}.cnf`,
      '-cert',
      `${ca}.pem`,
      '-keyfile',
      `${ca}.key`,
      '-in',
      `${name}.csr`,
      '-out',
      `${name}.pem`,
      '-startdate',
      dates.start,
      '-enddate',
      dates.end,
      '-extensions',
      'ext',
      '-notext',
    ]);
  }
  return { key: path.join(dir, `${name}.key`), cert: path.join(dir, `${name}.pem`) };
}

export function makePki(): Pki {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-pki-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  const serverNames = 'DNS:localhost,IP:127.0.0.1';
  return {
    dir,
    ca: path.join(dir, 'ca.pem'),
    otherCa: path.join(dir, 'other-ca.pem'),
    server: issue(dir, 'ca', 'server', '/CN=localhost', serverNames),
    expiredServer: issue(dir, 'ca', 'expired', '/CN=localhost', serverNames, {
      start: '20200101000000Z',
      end: '20200102000000Z',
    }),
    wrongHostServer: issue(dir, 'ca', 'wrong-host', '/CN=elsewhere.example', 'DNS:elsewhere.example'),
    orders: issue(dir, 'ca', 'orders', '/CN=orders', 'DNS:orders'),
    billing: issue(dir, 'ca', 'billing', '/CN=billing', 'DNS:billing'),
    intruder: issue(dir, 'other-ca', 'intruder', '/CN=orders', 'DNS:orders'),
    issueServer: (name) => issue(dir, 'ca', name, '/CN=localhost', serverNames),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
