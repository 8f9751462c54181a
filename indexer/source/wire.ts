// What every source process is wired with: a logger, the metrics registry, the pool and the ledger over it; the
// RPC client (its failed attempts counted and logged) and the block decoder; /metrics when asked for.
import { logger } from '../../common/log';
import { createPoolFromEnv } from '../../db/pool';
import { decodeBlock } from '../decode';
import { createLedger } from '../ledger';
import { createIndexerMetrics, serveMetrics } from '../metrics';
import { createRpcClient, RpcClient } from '../rpc';
import type { DecodeBlockFn } from './block-reader';
import { createSourceMetrics } from './metrics';
import { SourceMetrics } from './ports';

/** A logger named `component`, the metrics registry, a pool named `command` and the ledger over it. */
export function wireLedger(component: string, command: string) {
  const log = logger(component);
  const indexerMetrics = createIndexerMetrics({ defaults: true });
  const metrics: SourceMetrics = createSourceMetrics(indexerMetrics);
  const pool = createPoolFromEnv({ name: command });
  const ledger = createLedger({ db: pool, log: logger('ledger'), metrics: indexerMetrics });
  return { log, indexerMetrics, metrics, pool, ledger };
}

export type WiredLedger = ReturnType<typeof wireLedger>;

/** With a port: /metrics (+ /healthz, /readyz) on 127.0.0.1 for a source's registry and pool. */
export async function serveMetricsIfAsked(w: WiredLedger, port: number | undefined) {
  if (port === undefined) return undefined;
  const server = await serveMetrics({ port, registry: w.indexerMetrics.registry, db: w.pool });
  w.log.info({ url: server.url }, 'metrics listening');
  return server;
}

export interface SourceRpcOptions {
  rpc: string;
  rpcTimeoutMs: number;
  rpcAttempts: number;
}

/** The RPC client of a source: its failed attempts counted in oncepay_rpc_errors_total and logged. */
export function sourceRpc(o: SourceRpcOptions, w: Pick<WiredLedger, 'log' | 'metrics'>): RpcClient {
  return createRpcClient({
    url: o.rpc,
    retry: { timeoutMs: o.rpcTimeoutMs, attempts: o.rpcAttempts },
    onError: (kind) => w.metrics.countRpcError(kind),
    onRetry: (i) => w.log.warn(i, 'rpc attempt failed, retrying'),
  });
}

/** wireLedger plus the RPC client and the block decoder of a source reading blocks (scanner, backfill, webhook). */
export function wireSource(o: SourceRpcOptions & { cluster: string }, component: string, command: string) {
  const { log, indexerMetrics, metrics, pool, ledger } = wireLedger(component, command);
  const rpc = sourceRpc(o, { log, metrics });
  // A transaction whose transfers disagree with its own token balances is never credited; it must not stop the
  // scan either (reading a finalized block again cannot change it): skipped, logged and counted.
  const decode: DecodeBlockFn = (block, slot) =>
    decodeBlock(block, {
      slot,
      cluster: o.cluster,
      onBalanceMismatch: (e) => {
        metrics.countBalanceMismatch(o.cluster, component);
        log.error({ slot, code: e.code, ...e.context }, `transaction refused, nothing credited: ${e.message}`);
      },
    });
  return { log, indexerMetrics, metrics, pool, ledger, rpc, decode };
}

export type WiredSource = ReturnType<typeof wireSource>;
