// The stream source's options and defaults, apart from stream.ts so the command line can show them without
// loading the Yellowstone client's native module; which subscription a command line asks for, and its x-token.
import * as fs from 'fs';
import { OncepayError } from '../../common/errors';
import { SOURCE_CODES } from '../../common/errors/codes';

export const STREAM_SOURCE = 'stream' as const;

/** What the source needs of a Yellowstone client (the real one: `@triton-one/yellowstone-grpc`'s Client). */
export interface GeyserClient {
  connect(): Promise<void>;
  subscribe(): Promise<NodeJS.ReadWriteStream & { destroy(error?: Error): void }>;
  /** The oldest slot the server can replay from. */
  subscribeReplayInfo(): Promise<{ firstAvailable?: string }>;
}

/** What both subscription sources (gRPC stream, websocket) are configured with. */
export interface SubscriptionOptions {
  cluster: string;
  /** finalized: ledger only. confirmed: also provisional rows as transactions are confirmed. */
  commitment: 'confirmed' | 'finalized';
  /** First slot when there is no checkpoint yet (default: live from now). */
  fromSlot?: number;
  /** Client pings this often (keep-alive through proxies and load balancers). */
  pingMs: number;
  /** A connection with no message at all (nor pong) for this long is taken as dead and reconnected. */
  idleTimeoutMs: number;
  /** The watched addresses are read again this often; a change re-sends the filters / subscriptions. */
  refreshMs: number;
  /** How often the checkpoint may move (see each source). */
  checkpointMs: number;
  /** Reconnect backoff: capped exponential with jitter. */
  backoff: { baseMs: number; capMs: number };
}

/** The gRPC stream: checkpointMs is the longest wait before finalized slots with nothing to credit are written. */
export type StreamOptions = SubscriptionOptions;

export const DEFAULT_STREAM: Omit<StreamOptions, 'cluster'> = {
  commitment: 'finalized',
  pingMs: 10_000,
  idleTimeoutMs: 35_000,
  refreshMs: 5_000,
  checkpointMs: 1_000,
  backoff: { baseMs: 500, capMs: 30_000 },
};

/** --x-token-file, else ONCEPAY_GRPC_X_TOKEN, else --x-token (visible in ps), else none. */
export function xTokenOf(o: { xTokenFile?: string; xToken?: string }): string | undefined {
  if (o.xTokenFile !== undefined) {
    const t = fs.readFileSync(o.xTokenFile, 'utf8').trim();
    if (t === '') throw new OncepayError(SOURCE_CODES.INVALID_OPTION, `${o.xTokenFile} is empty`);
    return t;
  }
  return process.env.ONCEPAY_GRPC_X_TOKEN || o.xToken || undefined;
}

/** Exactly one of --grpc / --ws (a --grpc from ONCEPAY_GRPC_URL gives way to an explicit --ws). */
export function pickSubscription(o: { grpc?: string; ws?: string }, grpcFromEnv: boolean): 'grpc' | 'ws' {
  if (o.ws !== undefined && o.grpc !== undefined && !grpcFromEnv)
    throw new OncepayError(SOURCE_CODES.INVALID_OPTION, '--grpc and --ws are two sources: run one process for each');
  if (o.ws !== undefined) return 'ws';
  if (o.grpc !== undefined) return 'grpc';
  throw new OncepayError(SOURCE_CODES.INVALID_OPTION, 'one of --grpc <url> or --ws <url> is required');
}
