// The account key list instruction indices refer to. json/binary: static keys, then meta.loadedAddresses.writable,
// then .readonly (v0). jsonParsed: objects {pubkey, signer, writable, source} with loaded keys already inline.
import { array, isAddress, isIndex, isRecord, malformed, optionalArray, record, type Json } from './json-shape';

/** The whole account key list with signer flags, in the order instruction indices refer to. */
export interface Keys {
  keys: string[];
  signers: Set<string>;
  indexOf: Map<string, number>;
}

function addresses(v: unknown[], path: string): string[] {
  return v.map((k, i) => {
    if (!isAddress(k)) throw malformed(`${path}[${i}] is not a base58 address`);
    return k;
  });
}

export function loadedAddresses(meta: Json): string[] {
  const loaded = meta.loadedAddresses;
  if (loaded === undefined || loaded === null) return [];
  if (!isRecord(loaded)) throw malformed('meta.loadedAddresses is not an object');
  // v0 order: static keys, then loaded writable, then loaded readonly
  return [
    ...addresses(optionalArray(loaded, 'writable', 'meta.loadedAddresses'), 'meta.loadedAddresses.writable'),
    ...addresses(optionalArray(loaded, 'readonly', 'meta.loadedAddresses'), 'meta.loadedAddresses.readonly'),
  ];
}

export function accountKeys(message: Json, meta: Json, parsed: boolean): Keys {
  const raw = array(message, 'accountKeys', 'transaction.message');
  const keys: string[] = [];
  const signers = new Set<string>();
  if (parsed) {
    let sawLookup = false;
    raw.forEach((k, i) => {
      if (!isRecord(k) || !isAddress(k.pubkey)) throw malformed(`transaction.message.accountKeys[${i}] lacks a pubkey`);
      keys.push(k.pubkey);
      if (k.signer === true) signers.add(k.pubkey);
      if (k.source === 'lookupTable') sawLookup = true;
    });
    // jsonParsed lists loaded addresses inline (source "lookupTable"); append them only if a provider did not
    if (!sawLookup) keys.push(...loadedAddresses(meta));
  } else {
    keys.push(...addresses(raw, 'transaction.message.accountKeys'));
    const header = record(message, 'header', 'transaction.message');
    const n = header.numRequiredSignatures;
    if (!isIndex(n, keys.length + 1)) throw malformed('transaction.message.header.numRequiredSignatures is invalid');
    keys.slice(0, n).forEach((k) => signers.add(k));
    keys.push(...loadedAddresses(meta));
  }
  const indexOf = new Map<string, number>();
  keys.forEach((k, i) => {
    if (!indexOf.has(k)) indexOf.set(k, i);
  });
  return { keys, signers, indexOf };
}
