// How the embedded PostgreSQL server (local-server.ts) authenticates: pure pieces, no I/O.
// Every connection, TCP or unix socket, proves the superuser's generated password with SCRAM-SHA-256; the
// password lives in one file in the data folder, in libpq's pgpass format so that `PGPASSFILE=<file> psql …`
// works without the password ever being typed or put on a command line.
import * as crypto from 'crypto';

export const SUPERUSER = 'postgres';

/** The password file, inside the data folder. Mode 0600, owned like the data folder. */
export const PASSWORD_FILE = 'oncepay.pgpass';

/** 192 random bits as base64url: no character needs escaping in a URL or in a pgpass line. */
export function generatePassword(): string {
  return crypto.randomBytes(24).toString('base64url');
}

/** One pgpass line matching any host, port and database for the superuser. */
export function pgpassContent(password: string): string {
  return `*:*:*:${SUPERUSER}:${password}\n`;
}

/** The superuser's password from a pgpass file's text, or null when no line is for it. */
export function parsePgpass(text: string): string | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const fields = line.split(':');
    if (fields.length === 5 && fields[3] === SUPERUSER && fields[4] !== '') return fields[4];
  }
  return null;
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802/7677, PostgreSQL's
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`). Sent in `ALTER ROLE … PASSWORD '<verifier>'`,
 * it sets the password without the password itself ever reaching the server, its logs or a command line.
 */
export function scramVerifier(password: string, salt: Buffer = crypto.randomBytes(16), iterations = 4096): string {
  const salted = crypto.pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const hmac = (key: Buffer, text: string) => crypto.createHmac('sha256', key).update(text).digest();
  const storedKey = crypto.createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** pg_hba.conf of the embedded server: the password for every connection, no `trust` anywhere. */
export function hbaContent(): string {
  return [
    '# Written by oncepay (db/local-server.ts). Every connection proves the generated superuser password,',
    `# kept in ${PASSWORD_FILE} in this folder (mode 0600). Do not add "trust" lines: the socket folder is`,
    '# world-writable and the TCP port is reachable by every local user.',
    '# TYPE  DATABASE     USER  ADDRESS        METHOD',
    'local   all          all                  scram-sha-256',
    'host    all          all   127.0.0.1/32   scram-sha-256',
    'host    all          all   ::1/128        scram-sha-256',
    'local   replication  all                  scram-sha-256',
    'host    replication  all   127.0.0.1/32   scram-sha-256',
    'host    replication  all   ::1/128        scram-sha-256',
    '',
  ].join('\n');
}

/** Methods that let a connection in without proving a password (what a data folder from before had). */
const PASSWORDLESS_METHODS = new Set(['trust', 'peer', 'ident']);

/** The pg_hba.conf lines (without comments) that admit a connection with no password. */
export function passwordlessHbaLines(hba: string): string[] {
  return hba
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l !== '' && l.split(/\s+/).some((t) => PASSWORDLESS_METHODS.has(t)));
}

/** The URL with its password replaced by `***`: the form for logs and messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password === '') return url;
    u.password = '***';
    return u.toString().replace('%2A%2A%2A', '***');
  } catch {
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
  }
}

/**
 * The URL as a shell word for messages that tell a person what to type: the password is read from its file when
 * the command runs, so it is never printed. Without a password file (DATABASE_URL given), the variable itself.
 */
export function shellUrl(url: string, passwordFile: string | null): string {
  if (passwordFile === null) return '"$DATABASE_URL"';
  const u = new URL(url);
  u.password = 'PASSWORD';
  return `"${u.toString().replace(':PASSWORD@', `:$(cut -d: -f5 '${passwordFile}')@`)}"`;
}
