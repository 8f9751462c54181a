// libpq's connection strings, as every PostgreSQL HA tool hands them out (pg_auto_failover's
// `postgres://h1:p1,h2:p2/db?target_session_attrs=read-write`), parsed into the hosts to try in order and the rest.
// node-postgres's own parser (pg-connection-string) reads one host only and ignores target_session_attrs, so a
// process given a failover URL would keep connecting to the first host. Pure: no I/O, unit-tested.
//
// Both libpq forms are read: the URI (`postgres[ql]://[user[:password]@][host[:port][,...]][/dbname][?k=v&...]`,
// IPv6 hosts in brackets, every part percent-decoded, `host=`/`port=` query lists overriding the authority) and the
// keyword/value form (`host=a,b port=5432,5433 dbname=app`, values quoted '…' with \' and \\ escapes). A single
// port applies to every host; otherwise there must be one port per host (an empty one is 5432), as in libpq.
// What this cannot honour is refused with DB_CODES.CONNINFO_UNSUPPORTED naming the value, never ignored.
import { DB_CODES, OncepayError } from '../common/errors';

/** The target_session_attrs values the pool honours (libpq's read-only, standby and prefer-standby are refused). */
export type TargetSessionAttrs = 'any' | 'read-write' | 'primary';

export interface HostPort {
  /** A name, an IP address (IPv6 without brackets) or a Unix-socket folder (starts with '/'). */
  host: string;
  port: number;
}

export interface ConnInfo {
  /** In the order libpq tries them; never empty ({ host: '', … } stands for pg's default host). */
  hosts: HostPort[];
  targetSessionAttrs: TargetSessionAttrs;
  user?: string;
  password?: string;
  database?: string;
  /** Every other parameter (sslmode, application_name, options, …), decoded, for node-postgres to read. */
  params: Record<string, string>;
}

export const DEFAULT_PORT = 5432;

/** Parameters the pool reads itself; every other one goes on to node-postgres. */
const OWN_KEYS = new Set(['host', 'port', 'user', 'password', 'dbname', 'target_session_attrs']);

/**
 * Parameters libpq knows that would change which server or how it is chosen, and that this pool does not
 * implement: refused rather than silently ignored (a `hostaddr` list quietly dropped would connect elsewhere).
 */
const REFUSED_KEYS = new Set(['hostaddr', 'service', 'servicefile']);

const HONOURED_TSA: readonly TargetSessionAttrs[] = ['any', 'read-write', 'primary'];

function unsupported(message: string): OncepayError {
  return new OncepayError(DB_CODES.CONNINFO_UNSUPPORTED, message);
}

function malformed(message: string): OncepayError {
  return new OncepayError(DB_CODES.CONNINFO_MALFORMED, message);
}

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw malformed(`the database URL's ${what} has a malformed percent-encoding`);
  }
}

/** `host[:port]` or `[v6]:port` from the URI's authority; the port stays a string until the lists are paired. */
function splitHostPort(spec: string): { host: string; port: string } {
  if (spec.startsWith('[')) {
    const end = spec.indexOf(']');
    if (end < 0) throw malformed('an IPv6 host in the database URL has no closing bracket');
    const rest = spec.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) throw malformed('unexpected text after an IPv6 host in the database URL');
    return { host: spec.slice(1, end), port: rest.slice(1) };
  }
  const colon = spec.lastIndexOf(':');
  if (colon < 0) return { host: decode(spec, 'host'), port: '' };
  return { host: decode(spec.slice(0, colon), 'host'), port: spec.slice(colon + 1) };
}

function parsePort(text: string): number {
  if (text === '') return DEFAULT_PORT;
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535)
    throw malformed(`a port in the database URL is not a number from 1 to 65535: "${text}"`);
  return Number(text);
}

/** Pairs libpq's host and port lists: one port for all, or one per host. */
function pairHosts(hosts: string[], ports: string[]): HostPort[] {
  if (ports.length > 1 && ports.length !== hosts.length)
    throw malformed(`the database URL names ${hosts.length} host(s) but ${ports.length} ports`);
  return hosts.map((host, i) => ({ host, port: parsePort(ports.length > 1 ? ports[i] : (ports[0] ?? '')) }));
}

interface Raw {
  /** From the URI's authority (before the query's host=/port= override them). */
  authorityHosts: string[];
  authorityPorts: string[];
  user?: string;
  password?: string;
  database?: string;
  params: Map<string, string>;
}

function parseUri(url: string): Raw {
  const scheme = /^(postgres|postgresql):\/\//i.exec(url);
  if (!scheme) throw malformed('a database URL starts with postgres:// or postgresql://');
  let rest = url.slice(scheme[0].length);
  const q = rest.indexOf('?');
  const query = q >= 0 ? rest.slice(q + 1) : '';
  rest = q >= 0 ? rest.slice(0, q) : rest;
  const slash = rest.indexOf('/');
  const path = slash >= 0 ? rest.slice(slash + 1) : '';
  let authority = slash >= 0 ? rest.slice(0, slash) : rest;
  const raw: Raw = { authorityHosts: [], authorityPorts: [], params: new Map() };
  // The user part ends at the last '@' (a password may hold an unencoded '@'; libpq reads it the same way).
  const at = authority.lastIndexOf('@');
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    authority = authority.slice(at + 1);
    const colon = userinfo.indexOf(':');
    const user = colon >= 0 ? userinfo.slice(0, colon) : userinfo;
    if (user !== '') raw.user = decode(user, 'user');
    if (colon >= 0) raw.password = decode(userinfo.slice(colon + 1), 'password');
  }
  if (authority !== '') {
    for (const spec of authority.split(',')) {
      const { host, port } = splitHostPort(spec);
      raw.authorityHosts.push(host);
      raw.authorityPorts.push(port);
    }
  }
  if (path !== '') raw.database = decode(path, 'database name');
  if (query !== '') {
    for (const pair of query.split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      if (eq < 0) throw malformed(`a database URL parameter has no value: "${decode(pair, 'parameter')}"`);
      // '+' is a space in a query string (libpq agrees for the value part).
      const key = decode(pair.slice(0, eq).replace(/\+/g, ' '), 'parameter');
      raw.params.set(key, decode(pair.slice(eq + 1).replace(/\+/g, ' '), `parameter ${key}`));
    }
  }
  return raw;
}

/** The keyword/value form: `key=value` pairs separated by spaces, a value quoted '…' when it has spaces. */
function parseKeywords(text: string): Raw {
  const raw: Raw = { authorityHosts: [], authorityPorts: [], params: new Map() };
  const re = /\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|([^\s']*))/y;
  let i = 0;
  while (i < text.length) {
    if (/^\s*$/.test(text.slice(i))) break;
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) throw malformed('the database connection string is neither a postgres:// URL nor key=value pairs');
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
    raw.params.set(m[1], value);
    i = re.lastIndex;
  }
  return raw;
}

function list(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',');
}

function targetSessionAttrs(value: string | undefined): TargetSessionAttrs {
  if (value === undefined) return 'any';
  if ((HONOURED_TSA as readonly string[]).includes(value)) return value as TargetSessionAttrs;
  throw unsupported(
    `target_session_attrs=${value} is not supported (the pool honours ${HONOURED_TSA.join(', ')}): ` +
      'oncepay writes, so it needs the primary',
  );
}

/** Is `text` one of the two libpq forms (a postgres:// URL, or key=value pairs)? Other strings go to pg as they are. */
export function isLibpqConnString(text: string): boolean {
  return /^postgres(ql)?:\/\//i.test(text) || /^\s*[A-Za-z_][A-Za-z0-9_]*\s*=/.test(text);
}

/** Parses a libpq connection string (URI or keyword/value). Throws an OncepayError naming what it refuses. */
export function parseConnInfo(text: string): ConnInfo {
  const raw = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text) ? parseUri(text) : parseKeywords(text);
  for (const key of raw.params.keys())
    if (REFUSED_KEYS.has(key)) throw unsupported(`the database connection parameter ${key} is not supported`);
  if (raw.params.get('sslmode') === 'allow')
    throw unsupported('sslmode=allow is not supported: use disable, prefer, require, verify-ca or verify-full');
  const lb = raw.params.get('load_balance_hosts');
  if (lb !== undefined && lb !== 'disable')
    throw unsupported(`load_balance_hosts=${lb} is not supported: hosts are tried in the order given`);
  const hostList = list(raw.params.get('host')) ?? raw.authorityHosts;
  const portList = list(raw.params.get('port')) ?? raw.authorityPorts;
  const hosts = pairHosts(hostList.length > 0 ? hostList : [''], portList);
  const params: Record<string, string> = {};
  for (const [k, v] of raw.params) if (!OWN_KEYS.has(k) && k !== 'load_balance_hosts') params[k] = v;
  return {
    hosts,
    targetSessionAttrs: targetSessionAttrs(raw.params.get('target_session_attrs')),
    user: raw.params.get('user') ?? raw.user,
    password: raw.params.get('password') ?? raw.password,
    database: raw.params.get('dbname') ?? raw.database,
    params,
  };
}

/** Does this connection need the host-list connector, or can node-postgres take the string as it is? */
export function needsHostList(info: ConnInfo): boolean {
  return info.hosts.length > 1 || info.targetSessionAttrs !== 'any' || info.params.sslmode === 'prefer';
}

/**
 * The sslmode node-postgres gets for one attempt. libpq's `prefer` (SSL if the server offers it, unverified, else
 * plain text) is `no-verify` until the host has answered that it has no SSL, then `disable`; node-postgres alone
 * would treat `prefer` as verify-full and fail on a server without SSL. Every other mode goes through as written.
 */
export function sslModeForAttempt(sslmode: string | undefined, hostRefusedSsl: boolean): string | undefined {
  if (sslmode !== 'prefer') return sslmode;
  return hostRefusedSsl ? 'disable' : 'no-verify';
}

/** `host:port` (`[v6]:port`, or the socket folder) for logs and errors: never the user or the password. */
export function describeHost(h: HostPort): string {
  if (h.host.startsWith('/')) return `${h.host}/.s.PGSQL.${h.port}`;
  return h.host.includes(':') ? `[${h.host}]:${h.port}` : `${h.host || 'localhost'}:${h.port}`;
}
