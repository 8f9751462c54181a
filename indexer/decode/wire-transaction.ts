// The binary encodings (`base64`, `base58`): the RPC returns `transaction: ["<bytes>", "base64"]`, the signed
// transaction exactly as sent. Parsed here into the shape of the `json` encoding (instruction data kept as bytes)
// so one path decodes both.
// Layout: compact-u16 n, n × 64-byte signatures, then the message:
//   [0x80 | version]? (absent for legacy), header (3 × u8), compact-u16 n, n × 32-byte keys, 32-byte blockhash,
//   compact-u16 n instructions { u8 programIdIndex, compact-u16 n, n × u8 account, compact-u16 n, n × u8 data },
//   v0 only: compact-u16 n lookups { 32-byte table, compact-u16 n, writable u8…, compact-u16 n, readonly u8… }.
import bs58 from 'bs58';
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';

export interface WireTransaction {
  version: 'legacy' | 0;
  signatures: string[];
  message: {
    header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
    accountKeys: string[];
    recentBlockhash: string;
    /** data stays bytes: no base58 round trip. */
    instructions: Array<{ programIdIndex: number; accounts: number[]; data: Uint8Array }>;
    addressTableLookups?: Array<{ accountKey: string; writableIndexes: number[]; readonlyIndexes: number[] }>;
  };
}

function bad(what: string): OncepayError {
  return new OncepayError(DECODE_CODES.MALFORMED_TRANSACTION, `binary transaction: ${what}`);
}

export function decodeWireTransaction(encoded: string, encoding: string): WireTransaction {
  let bytes: Uint8Array;
  if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) throw bad('not base64');
    bytes = Buffer.from(encoded, 'base64');
  } else if (encoding === 'base58') {
    try {
      bytes = bs58.decode(encoded);
    } catch {
      throw bad('not base58');
    }
  } else {
    throw new OncepayError(
      DECODE_CODES.UNSUPPORTED_ENCODING,
      `transaction encoding ${JSON.stringify(encoding)} is not supported`,
    );
  }
  let at = 0;
  const take = (n: number): Uint8Array => {
    if (at + n > bytes.length) throw bad('truncated');
    const out = bytes.subarray(at, at + n);
    at += n;
    return out;
  };
  const u8 = (): number => take(1)[0];
  const shortVec = (): number => {
    // compact-u16: 7 bits per byte, at most 3 bytes
    let v = 0;
    for (let i = 0; i < 3; i++) {
      const b = u8();
      v |= (b & 0x7f) << (7 * i);
      if ((b & 0x80) === 0) return v;
    }
    throw bad('compact-u16 too long');
  };
  const key = (): string => bs58.encode(take(32));
  const list = <T>(item: () => T): T[] => Array.from({ length: shortVec() }, item);

  const signatures = list(() => bs58.encode(take(64)));
  let version: 'legacy' | 0 = 'legacy';
  if (bytes[at] !== undefined && (bytes[at] & 0x80) !== 0) {
    const v = u8() & 0x7f;
    if (v !== 0)
      throw new OncepayError(DECODE_CODES.UNSUPPORTED_VERSION, `transaction version ${v} is not legacy or 0`, {
        version: String(v),
      });
    version = 0;
  }
  const header = { numRequiredSignatures: u8(), numReadonlySignedAccounts: u8(), numReadonlyUnsignedAccounts: u8() };
  const accountKeys = list(key);
  const recentBlockhash = key();
  const instructions = list(() => ({
    programIdIndex: u8(),
    accounts: Array.from(take(shortVec())),
    data: take(shortVec()),
  }));
  const message: WireTransaction['message'] = { header, accountKeys, recentBlockhash, instructions };
  if (version === 0) {
    message.addressTableLookups = list(() => ({
      accountKey: key(),
      writableIndexes: Array.from(take(shortVec())),
      readonlyIndexes: Array.from(take(shortVec())),
    }));
  }
  if (at !== bytes.length) throw bad(`${bytes.length - at} trailing bytes`);
  return { version, signatures, message };
}
