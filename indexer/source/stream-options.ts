// The stream source's options and defaults, apart from stream.ts so the command line can show them without
// loading the Yellowstone client's native module.

export const STREAM_SOURCE = 'stream' as const;

/** What the source needs of a Yellowstone client (the real one: `@triton-one/yellowstone-grpc`'s Client). */
export interface GeyserClient {
  connect(): Promise<void>;
  subscribe(): Promise<NodeJS.ReadWriteStream & { destroy(error?: Error): void }>;
  /** The oldest slot the server can replay from. */
  subscribeReplayInfo(): Promise<{ firstAvailable?: string }>;
}

export interface StreamOptions {
  cluster: string;
  /** finalized: ledger only. confirmed: also provisional rows as transactions arrive. */
  commitment: 'confirmed' | 'finalized';
  /** First slot when there is no checkpoint yet (default: live from now). */
  fromSlot?: number;
  /** Client pings this often (keep-alive through proxies and load balancers). */
  pingMs: number;
  /** A stream with no message at all for this long is taken as dead and reconnected. */
  idleTimeoutMs: number;
  /** The watched addresses are read again this often; a change re-sends the filters on the open stream. */
  refreshMs: number;
  /** Longest wait before the checkpoint of finalized slots with nothing to credit is written. */
  checkpointMs: number;
  backoff: { baseMs: number; capMs: number };
}

export const DEFAULT_STREAM: Omit<StreamOptions, 'cluster'> = {
  commitment: 'finalized',
  pingMs: 10_000,
  idleTimeoutMs: 35_000,
  refreshMs: 5_000,
  checkpointMs: 1_000,
  backoff: { baseMs: 500, capMs: 30_000 },
};
