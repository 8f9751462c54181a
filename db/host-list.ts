// A pg Pool that connects through a libpq host list (db/conninfo.ts) and keeps only connections to a server that
// takes writes, so every process follows the primary across a failover (pg_auto_failover hands out
// `postgres://h1:p1,h2:p2/db?target_session_attrs=read-write`).
//
// - Each new connection goes to the host db/host-cursor.ts names; with target_session_attrs=read-write it asks
//   `SELECT pg_is_in_recovery(), current_setting('transaction_read_only')` before the pool lends it, and a
//   read-only server's connection is closed (error 25006, an outage for db/unavailable.ts) and the cursor moves on.
// - One acquire tries every host (twice each when sslmode=prefer falls back to plain text) before it fails: the
//   caller then sees the last host's error, which db/unavailable.ts classes as "the database is away" (503 +
//   Retry-After, backoff, /readyz), as for one host.
// - A lent connection whose server turned read-only under it (a statement answered 25006) is closed at once, so the
//   pool drops it when it comes back instead of lending it again. Connections that a failover ended (57P01, a reset)
//   were already dropped by pg-pool.
// Built on pg's own extension points (a Client subclass given as the Pool's `Client`, a Pool subclass whose
// connect retries): no fork of node-postgres. LISTEN clients use the same Client class (`clientClassOf(pool)`).
import { Client, ClientConfig, Pool, PoolClient, PoolConfig } from 'pg';
import { parse as parseConnectionParams } from 'pg-connection-string';
import { logger } from '../common/log';
import { ConnInfo, describeHost, sslModeForAttempt } from './conninfo';
import { HostCursor } from './host-cursor';

/** SQLSTATE read_only_sql_transaction: also what a connection to a read-only server fails with here. */
export const READ_ONLY_SQLSTATE = '25006';

/** Logged (warn) when a process's connections moved to another host: it followed a failover. */
export const FOLLOWED_MESSAGE = 'database connections now go to this host';

const SSL_REFUSED = 'The server does not support SSL connections';

/** Errors raised while connecting to one host of the list: the acquire may try the next host. */
const hostFailures = new WeakSet<object>();

function isHostFailure(e: unknown): boolean {
  for (let x = e, depth = 0; x !== null && typeof x === 'object' && depth < 3; depth++) {
    if (hostFailures.has(x)) return true;
    x = (x as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * A connection to a read-only server, closed before the pool lends it. Not an OncepayError, on purpose: it stands in
 * for PostgreSQL's own 25006 refusal, and `code` is that SQLSTATE, which db/unavailable.ts reads as an outage (503 +
 * Retry-After, backoff) like pg's own errors. As an OncepayError its code would be ours, and the callers that test
 * for an OncepayError before asking isDatabaseUnavailable (the payout worker's hand-back) would take an outage for
 * a refusal of the payout.
 */
export class ReadOnlyServerError extends Error {
  readonly code = READ_ONLY_SQLSTATE;
  constructor(where: string, inRecovery: boolean) {
    super(`${where} is read-only (${inRecovery ? 'a standby' : 'transaction_read_only is on'}); trying the next host`);
  }
}

/** node-postgres's settings for one attempt at host `i`: the URL's parameters as pg reads them, then the host. */
function attemptConfig(info: ConnInfo, cursor: HostCursor, i: number, base: ClientConfig): ClientConfig {
  const params = { ...info.params };
  const sslmode = sslModeForAttempt(params.sslmode, cursor.plainOnly(i));
  if (sslmode === undefined) delete params.sslmode;
  else params.sslmode = sslmode;
  // pg-connection-string turns sslmode/sslcert/… into pg's `ssl` option exactly as it does for a one-host URL.
  const query = new URLSearchParams(params).toString();
  const parsed = parseConnectionParams(`postgres://placeholder/${query ? `?${query}` : ''}`) as Record<string, unknown>;
  delete parsed.host;
  delete parsed.port;
  delete parsed.database;
  delete parsed.user;
  delete parsed.password;
  const h = info.hosts[i];
  return {
    ...base,
    ...(parsed as ClientConfig),
    host: h.host || undefined,
    port: h.port,
    user: info.user,
    password: info.password,
    database: info.database,
  };
}

type ConnectCallback = ((err: Error) => void) | ((err: null, c: Client) => void);

/** The pg Client class for one pool: each instance connects to the cursor's host and checks it takes writes. */
function hostListClient(info: ConnInfo, cursor: HostCursor): typeof Client {
  const log = logger('db');
  const wantWritable = info.targetSessionAttrs !== 'any';
  return class HostListClient extends Client {
    private readonly target: number;

    constructor(config?: ClientConfig) {
      const i = cursor.current();
      super(attemptConfig(info, cursor, i, config ?? {}));
      this.target = i;
    }

    // pg-pool calls connect(callback); LISTEN clients await connect().
    connect(): Promise<Client>;
    connect(callback: ConnectCallback): void;
    connect(callback?: ConnectCallback): Promise<Client> | void {
      const done = this.connectChecked().then(() => this);
      if (!callback) return done;
      const cb = callback as (err: Error | null, c?: Client) => void;
      done.then(
        (c) => cb(null, c),
        (e: Error) => cb(e),
      );
    }

    private async connectChecked(): Promise<void> {
      const where = describeHost(info.hosts[this.target]);
      // An 'error' event while the check runs (the server went away in between) has no listener of pg-pool's
      // yet: without this one it would end the process. The check's own query fails with the same error.
      const ignore = () => undefined;
      this.on('error', ignore);
      try {
        await super.connect();
        if (wantWritable) await this.checkWritable(where);
        if (cursor.succeeded(this.target)) log.warn({ host: where }, FOLLOWED_MESSAGE);
      } catch (e) {
        this.noteConnectFailure(e as Error, where);
        throw e;
      } finally {
        this.off('error', ignore);
      }
    }

    private async checkWritable(where: string): Promise<void> {
      const r = await super.query<{ recovery: boolean; read_only: string }>(
        `SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only`,
      );
      const { recovery, read_only } = r.rows[0];
      const readOnly = info.targetSessionAttrs === 'primary' ? recovery : recovery || read_only === 'on';
      if (!readOnly) return;
      await this.end().catch(() => undefined);
      throw new ReadOnlyServerError(where, recovery);
    }

    private noteConnectFailure(e: Error, where: string): void {
      hostFailures.add(e);
      if (e.message === SSL_REFUSED && info.params.sslmode === 'prefer') {
        cursor.refusedSsl(this.target);
        return;
      }
      if (cursor.current() === this.target && info.hosts.length > 1)
        log.warn({ host: where, err: e.message }, 'database host unusable; trying the next one');
      cursor.failed(this.target);
    }

    // A statement refused with 25006 means this server was demoted under the connection: close it, so the pool
    // drops it when it is released, and send the next connection elsewhere. (pool.query's own callbacks already
    // release with the error, which drops the client.)
    query(...args: unknown[]): never {
      const r = (super.query as (...a: unknown[]) => unknown).apply(this, args);
      if (r instanceof Promise)
        r.catch((e: { code?: string }) => {
          if (e?.code !== READ_ONLY_SQLSTATE) return;
          cursor.failed(this.target);
          void this.end().catch(() => undefined);
        });
      return r as never;
    }
  };
}

type AcquireCallback = (err: Error | undefined, client: PoolClient | undefined, done: (e?: Error) => void) => void;

/** A pg Pool over a host list: one acquire tries each host (per the cursor) before it reports the failure. */
export function createHostListPool(info: ConnInfo, config: PoolConfig): Pool {
  const cursor = new HostCursor(info.hosts.length);
  const tries = info.hosts.length * (info.params.sslmode === 'prefer' ? 2 : 1);
  const ClientClass = hostListClient(info, cursor);
  class HostListPool extends Pool {
    connect(): Promise<PoolClient>;
    connect(callback: AcquireCallback): void;
    connect(callback?: AcquireCallback): Promise<PoolClient> | void {
      const acquired = this.acquire();
      if (!callback) return acquired;
      acquired.then(
        (c) => callback(undefined, c, (e?: Error) => c.release(e)),
        (e: Error) => callback(e, undefined, () => undefined),
      );
    }

    private async acquire(): Promise<PoolClient> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await super.connect();
        } catch (e) {
          if (attempt >= tries || !isHostFailure(e)) throw e;
        }
      }
    }
  }
  return new HostListPool({ ...config, Client: ClientClass });
}

/** The Client class a pool connects with (the host-list one for a multi-host URL): for a LISTEN connection. */
export function clientClassOf(pool: Pool): typeof Client {
  return (pool.options as { Client?: typeof Client }).Client ?? Client;
}
