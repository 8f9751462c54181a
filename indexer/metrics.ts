// The indexer's Prometheus metrics: one Registry per process (a factory, so tests get their own), and a tiny
// /metrics HTTP server (with /healthz and /readyz when given the process's pool) the long-running commands reuse.
import * as http from 'http';
import { AddressInfo } from 'net';
import type { Db } from '../db/sql';
import { answerHealth, isHealthPath } from '../db/health-http';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export interface IndexerMetrics {
  registry: Registry;
  receiptsTotal: Counter<'cluster' | 'source'>;
  duplicatesTotal: Counter<'cluster' | 'source'>;
  exceptionsTotal: Counter<'kind'>;
  /** Set by the sources: chain tip minus checkpoint, in slots. */
  checkpointLagSlots: Gauge<'cluster' | 'source'>;
  outboxDepth: Gauge;
  outboxOldestAgeSeconds: Gauge;
  outboxDead: Gauge;
  rpcErrorsTotal: Counter<'kind'>;
  outboxDeliveriesTotal: Counter<'result'>;
}

/** The `result` label values of oncepay_outbox_deliveries_total (indexer/outbox/worker.ts). */
export const OUTBOX_DELIVERY_RESULTS = ['delivered', 'failed', 'dead'] as const;

export interface OutboxStats {
  /** Rows not yet delivered nor dead. */
  depth: number;
  /** Age of the oldest such row, 0 when none. */
  oldestAgeSeconds: number;
  /** Rows dead-lettered and not replayed: paid invoices whose merchant was never told. */
  dead: number;
}

export function createIndexerMetrics(
  opts: { defaults?: boolean; outboxStats?: () => Promise<OutboxStats> } = {},
): IndexerMetrics {
  const registry = new Registry();
  if (opts.defaults) collectDefaultMetrics({ register: registry });
  const stats = opts.outboxStats;
  // Outbox gauges are read from the database at scrape time when a reader is given: the table is the truth.
  // While the database is away the gauges keep their last known values, so /metrics still answers (and the rest
  // of the process's metrics stay visible) instead of failing the whole scrape.
  let known: OutboxStats = { depth: 0, oldestAgeSeconds: 0, dead: 0 };
  let last: Promise<OutboxStats> | undefined;
  const read = () =>
    (last ??= (
      stats
        ? stats().then(
            (s) => (known = s),
            () => known,
          )
        : Promise.resolve(known)
    ).finally(() => setImmediate(() => (last = undefined))));
  /** A gauge of the outbox table, set from `read()` at scrape time (only when a reader is given). */
  const outboxGauge = (name: string, help: string, field: keyof OutboxStats): Gauge =>
    new Gauge({
      name,
      help,
      registers: [registry],
      ...(stats
        ? {
            async collect(this: Gauge) {
              this.set((await read())[field]);
            },
          }
        : {}),
    });
  const outboxDeliveriesTotal = new Counter({
    name: 'oncepay_outbox_deliveries_total',
    help: 'Outbox delivery attempts, by result',
    labelNames: ['result'],
    registers: [registry],
  });
  // Every result exported from the start (at 0): the first dead letter is then an increase Prometheus can see
  // (a series born at 1 is not), which deploy/prometheus's OncepayOutboxDeadLetter alert relies on.
  for (const result of OUTBOX_DELIVERY_RESULTS) outboxDeliveriesTotal.inc({ result }, 0);
  return {
    registry,
    receiptsTotal: new Counter({
      name: 'oncepay_receipts_total',
      help: 'Receipts newly inserted into the ledger',
      labelNames: ['cluster', 'source'],
      registers: [registry],
    }),
    duplicatesTotal: new Counter({
      name: 'oncepay_receipt_duplicates_total',
      help: 'Receipt deliveries that were already in the ledger',
      labelNames: ['cluster', 'source'],
      registers: [registry],
    }),
    exceptionsTotal: new Counter({
      name: 'oncepay_exceptions_total',
      help: 'Payment exceptions raised, by kind',
      labelNames: ['kind'],
      registers: [registry],
    }),
    checkpointLagSlots: new Gauge({
      name: 'oncepay_checkpoint_lag_slots',
      help: 'Slots between the chain tip and the checkpoint',
      labelNames: ['cluster', 'source'],
      registers: [registry],
    }),
    outboxDepth: outboxGauge('oncepay_outbox_depth', 'Outbox rows pending or being delivered', 'depth'),
    outboxOldestAgeSeconds: outboxGauge(
      'oncepay_outbox_oldest_age_seconds',
      'Age of the oldest undelivered outbox row',
      'oldestAgeSeconds',
    ),
    outboxDead: outboxGauge(
      'oncepay_outbox_dead',
      'Outbox rows dead-lettered and not replayed (paid invoices whose merchant was never told)',
      'dead',
    ),
    rpcErrorsTotal: new Counter({
      name: 'oncepay_rpc_errors_total',
      help: 'RPC errors, by kind',
      labelNames: ['kind'],
      registers: [registry],
    }),
    outboxDeliveriesTotal,
  };
}

export interface MetricsServer {
  port: number;
  url: string;
  close(): Promise<void>;
}

/**
 * Serve `GET /metrics` on 127.0.0.1 (port 0 = ephemeral), and `GET /healthz`, `GET /readyz` for `db`. None takes a
 * body: a request that announces one (Content-Length > 0, or chunked) is refused 413 before a byte of it is read,
 * and its connection closed, so nothing a stranger sends is buffered here.
 */
export function serveMetrics(opts: {
  port?: number;
  host?: string;
  registry: Registry;
  db?: Db;
}): Promise<MetricsServer> {
  const host = opts.host ?? '127.0.0.1';
  const server = http.createServer((req, res) => {
    if (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0) {
      res
        .writeHead(413, { 'content-type': 'application/json', connection: 'close' })
        .end(JSON.stringify({ code: 'BODY_TOO_LARGE', message: 'this server takes no request body' }));
      return;
    }
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && opts.db && isHealthPath(path)) {
      void answerHealth(path, opts.db).then((a) =>
        res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(JSON.stringify(a.body)),
      );
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    opts.registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(body),
      (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(e.message),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        port,
        url: `http://${host}:${port}/metrics`,
        close: () =>
          new Promise<void>((res) => {
            server.closeAllConnections?.();
            server.close(() => res());
          }),
      });
    });
  });
}
