// The flags the block-reading sources share (`indexer run | backfill | webhook`): the JSON-RPC endpoint, the
// cluster, the RPC deadline and attempts, and the commitment.
import { Command, Option } from 'commander';
import { OncepayError } from '../common/errors';
import { SOURCE_CODES } from '../common/errors/codes';
import { DEFAULT_RETRY } from '../indexer/rpc';
import { DEFAULT_SCANNER } from '../indexer/source/scanner';
import { clusterOption, intOption, rpcOption } from './options';

const DEFAULT_RPC = 'http://127.0.0.1:8899';

export interface RpcOpts {
  rpc: string;
  cluster: string;
  rpcTimeoutMs: number;
  rpcAttempts: number;
}

export function commitmentOption(help = 'commitment to read at; only "finalized" is offered here'): Option {
  return new Option('--commitment <level>', help).choices(['finalized', 'confirmed']).default('finalized');
}

/** Backfill and the webhook credit finalized transactions only (`indexer run` keeps confirmed ones provisional). */
export function assertFinalized(c: string, why: string): void {
  if (c !== 'finalized') throw new OncepayError(SOURCE_CODES.COMMITMENT_UNSUPPORTED, why);
}

/** --rpc, --cluster, --rpc-timeout-ms, --rpc-attempts. */
export function withRpcOptions(cmd: Command): Command {
  return cmd
    .addOption(rpcOption({ fallback: DEFAULT_RPC, description: 'JSON-RPC endpoint' }))
    .addOption(clusterOption('cluster name, part of every receipt key'))
    .option(
      '--rpc-timeout-ms <ms>',
      'deadline of one RPC attempt',
      intOption('--rpc-timeout-ms', 1),
      DEFAULT_RETRY.timeoutMs,
    )
    .option(
      '--rpc-attempts <n>',
      'attempts per RPC call (retries on 429, 5xx, timeouts, network errors)',
      intOption('--rpc-attempts', 1),
      DEFAULT_RETRY.attempts,
    );
}

/** --chunk-size, --concurrency: how the scanner and backfill read blocks. */
export function blockReadOptions(cmd: Command): Command {
  return cmd
    .option(
      '--chunk-size <blocks>',
      'blocks per ledger transaction',
      intOption('--chunk-size', 1),
      DEFAULT_SCANNER.chunkSize,
    )
    .option(
      '--concurrency <n>',
      'getBlock calls in flight',
      intOption('--concurrency', 1),
      DEFAULT_SCANNER.concurrency,
    );
}
