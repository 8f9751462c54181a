// A Subscribe stream's messages, coalesced into few HTTP/2 DATA frames, as a tonic server (Yellowstone's) sends
// them: tonic encodes every message that is ready into one buffer and writes it when its source has nothing more
// ready or the buffer passes 32 KiB, so a burst of updates leaves as a few large frames.
//
// grpc-js writes each message as its own DATA frame instead, and a burst of small updates (slot updates, pings,
// pongs: ~30 bytes each) then reaches the real client as hundreds of tiny frames. The client's HTTP/2 layer (h2
// 0.4.19, under tonic in the napi binding) charges every non-final DATA frame under 256 bytes (256 − its length)
// against a connection budget of 25,600, refunded only as the application reads that frame; a frame of 256 bytes
// or more refunds (its length − 256). A client reading slowly through a burst of ~120 such frames exhausts it and
// the connection is closed with GOAWAY ENHANCE_YOUR_CALM "too_many_data_frames" (h2 src/proto/streams/counts.rs,
// record_data_frame; raised in streams.rs recv_data).
//
// So the messages queued in one turn of the event loop go out in one write of their gRPC length-prefixed frames
// (a message boundary is independent of DATA frame boundaries), at most MAX_BATCH bytes at a time, written to the
// call's HTTP/2 stream directly: grpc-js has no public way to write several messages at once.
import type * as grpc from '@grpc/grpc-js';
import { OncepayError, LOCALNET_CODES } from '../../common/errors';

/**
 * The largest batch: one DATA frame at the default SETTINGS_MAX_FRAME_SIZE (16 KiB, what the client advertises),
 * so a batch is not split into a large frame and a small remainder. A single larger message goes alone.
 */
export const MAX_BATCH = 16_384;
/** gRPC's length prefix: a compressed flag byte, then the message's length (u32, big-endian). */
const PREFIX = 5;

/** The part of Node's ServerHttp2Stream the outbox uses. */
interface RawStream {
  write(chunk: Buffer): boolean;
  readonly writable: boolean;
  once(event: 'drain' | 'close', fn: () => void): unknown;
  off(event: 'drain' | 'close', fn: () => void): unknown;
}

export interface Outbox {
  /** Queue one encoded message; it is written with the others queued before the event loop turns. */
  push(message: Uint8Array): void;
  /** Write what is queued now (before the call ends, so its status follows its last message). */
  flush(): void;
  /** Null when the transport takes more; else a promise that resolves once it drained (or the stream closed). */
  backpressure(): Promise<void> | null;
  /** Drop what is queued and write nothing more (the call is over). */
  close(): void;
}

/**
 * The HTTP/2 stream under a grpc-js server call: ServerDuplexStreamImpl.call is the server's intercepting call,
 * which is grpc-js's BaseServerInterceptingCall (this server installs no interceptors), holding the stream.
 * Private fields of @grpc/grpc-js 1.14: checked here, so a grpc-js that moved them fails loudly at the first
 * Subscribe rather than sending nothing.
 */
export function http2StreamOf(call: grpc.ServerDuplexStream<unknown, unknown>): RawStream {
  const stream = (call as unknown as { call?: { stream?: Partial<RawStream> & { respond?: unknown } } }).call?.stream;
  if (!stream || typeof stream.write !== 'function' || typeof stream.respond !== 'function')
    throw new OncepayError(
      LOCALNET_CODES.GEYSER_UNSUPPORTED,
      'localnet geyser: the grpc-js call no longer exposes its HTTP/2 stream (call.call.stream)',
    );
  return stream as RawStream;
}

export function createOutbox(stream: RawStream): Outbox {
  let queued: Buffer[] = [];
  let size = 0;
  let scheduled: NodeJS.Immediate | null = null;
  let full = false;
  let closed = false;

  const flush = (): void => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = null;
    if (size === 0) return;
    const batch = queued.length === 1 ? queued[0] : Buffer.concat(queued, size);
    queued = [];
    size = 0;
    if (closed || !stream.writable) return;
    if (!stream.write(batch)) full = true;
  };

  return {
    push(message) {
      if (closed) return;
      const framed = Buffer.allocUnsafe(PREFIX + message.length);
      framed.writeUInt8(0, 0);
      framed.writeUInt32BE(message.length, 1);
      framed.set(message, PREFIX);
      if (size > 0 && size + framed.length > MAX_BATCH) flush();
      queued.push(framed);
      size += framed.length;
      if (size >= MAX_BATCH) flush();
      else if (!scheduled) scheduled = setImmediate(flush);
    },
    flush,
    backpressure() {
      if (!full || closed) return null;
      return new Promise<void>((resolve) => {
        const done = (): void => {
          stream.off('drain', done);
          stream.off('close', done);
          full = false;
          resolve();
        };
        stream.once('drain', done);
        stream.once('close', done);
      });
    },
    close() {
      closed = true;
      if (scheduled) clearImmediate(scheduled);
      scheduled = null;
      queued = [];
      size = 0;
    },
  };
}
