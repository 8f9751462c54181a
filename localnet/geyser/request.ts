// SubscribeRequest bytes → the request, with one repair: the Rust client (prost) leaves a map entry's value out
// when it is the default message (e.g. a `slots: { s: {} }` filter, or a transactions filter with every field
// empty), and the package's TypeScript decoder then drops the whole entry. A filter named with no value means
// "the default filter", so the names are read from the bytes and given the default value.
import {
  SubscribeRequest,
  SubscribeRequestFilterAccounts,
  SubscribeRequestFilterBlocks,
  SubscribeRequestFilterBlocksMeta,
  SubscribeRequestFilterEntry,
  SubscribeRequestFilterSlots,
  SubscribeRequestFilterTransactions,
} from '@triton-one/yellowstone-grpc';
import { OncepayError, LOCALNET_CODES } from '../../common/errors';

type MapField = 'accounts' | 'slots' | 'transactions' | 'transactionsStatus' | 'blocks' | 'blocksMeta' | 'entry';
const MAP_FIELDS: Record<number, { name: MapField; empty: () => unknown }> = {
  1: { name: 'accounts', empty: () => SubscribeRequestFilterAccounts.fromPartial({}) },
  2: { name: 'slots', empty: () => SubscribeRequestFilterSlots.fromPartial({}) },
  3: { name: 'transactions', empty: () => SubscribeRequestFilterTransactions.fromPartial({}) },
  4: { name: 'blocks', empty: () => SubscribeRequestFilterBlocks.fromPartial({}) },
  5: { name: 'blocksMeta', empty: () => SubscribeRequestFilterBlocksMeta.fromPartial({}) },
  8: { name: 'entry', empty: () => SubscribeRequestFilterEntry.fromPartial({}) },
  10: { name: 'transactionsStatus', empty: () => SubscribeRequestFilterTransactions.fromPartial({}) },
};

class Reader {
  pos = 0;
  constructor(
    readonly b: Uint8Array,
    readonly end = b.length,
  ) {}
  varint(): number {
    let n = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.end) throw new OncepayError(LOCALNET_CODES.GEYSER_REQUEST_MALFORMED, 'truncated varint');
      const x = this.b[this.pos++];
      n += (x & 0x7f) * mul;
      if (x < 0x80) return n;
      mul *= 128;
    }
  }
  /** Skip a field's value; for length-delimited ones return its [start, end). */
  field(wire: number): [number, number] | null {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 5) this.pos += 4;
    else if (wire === 2) {
      const len = this.varint();
      const start = this.pos;
      this.pos += len;
      return [start, start + len];
    } else throw new OncepayError(LOCALNET_CODES.GEYSER_REQUEST_MALFORMED, `unsupported wire type ${wire}`);
    return null;
  }
}

/** Keys of the map entries in field `n` of a message. */
function mapKeys(bytes: Uint8Array): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const r = new Reader(bytes);
  while (r.pos < r.end) {
    const tag = r.varint();
    const span = r.field(tag & 7);
    if (!span || !MAP_FIELDS[tag >>> 3]) continue;
    const e = new Reader(bytes, span[1]);
    e.pos = span[0];
    let key = '';
    while (e.pos < e.end) {
      const t = e.varint();
      const s = e.field(t & 7);
      if (t >>> 3 === 1 && s) key = Buffer.from(bytes.subarray(s[0], s[1])).toString('utf8');
    }
    const list = out.get(tag >>> 3) ?? [];
    list.push(key);
    out.set(tag >>> 3, list);
  }
  return out;
}

export function decodeSubscribeRequest(bytes: Uint8Array): SubscribeRequest {
  const req = SubscribeRequest.decode(bytes);
  for (const [n, keys] of mapKeys(bytes)) {
    const { name, empty } = MAP_FIELDS[n];
    const map = req[name] as Record<string, unknown>;
    for (const k of keys) if (!(k in map)) map[k] = empty();
  }
  return req;
}
