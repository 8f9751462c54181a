// Decoder throughput, measured side by side in one run: the same LiteSVM fixture transactions in the `json`,
// `jsonParsed` and `base64` encodings (decode only, input already parsed), and reading input text with
// parseJsonExact (plain, with integers beyond 2^53) and the character reader versus JSON.parse (ratios), plus
// absolute figures labelled with the machine.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Message, MessageV0, PublicKey, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { decodeTransaction, parseJsonExact, readTransactionsInput } from '../indexer/decode';
import { parseJsonByCharacter } from '../indexer/decode/json-reader';
import { machineLabel } from './machine';

const DIR = join(__dirname, '..', 'tests', 'fixtures', 'transactions', 'litesvm');
const ROUNDS = Number(process.env.BENCH_DECODE_ROUNDS ?? 400);

type Tx = Record<string, unknown>;

function load(encoding: string): Tx[] {
  return readdirSync(join(DIR, encoding))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => readTransactionsInput(readFileSync(join(DIR, encoding, f), 'utf8'))[0] as Tx);
}

interface JsonMessage {
  header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
  accountKeys: string[];
  recentBlockhash: string;
  instructions: Array<{ programIdIndex: number; accounts: number[]; data: string }>;
  addressTableLookups?: Array<{ accountKey: string; writableIndexes: number[]; readonlyIndexes: number[] }>;
}

/** The json fixtures re-encoded as base64 wire bytes by web3.js (its serialiser, our signatures). */
function asBase64(txs: Tx[]): Tx[] {
  return txs.map((t) => {
    const tx = t.transaction as { signatures: string[]; message: JsonMessage };
    const m = tx.message;
    const keys = m.accountKeys.map((k) => new PublicKey(k));
    const sigs = tx.signatures.map((s) => bs58.decode(s));
    const bytes =
      t.version === 0
        ? new VersionedTransaction(
            new MessageV0({
              header: m.header,
              staticAccountKeys: keys,
              recentBlockhash: m.recentBlockhash,
              compiledInstructions: m.instructions.map((ix) => ({
                programIdIndex: ix.programIdIndex,
                accountKeyIndexes: ix.accounts,
                data: bs58.decode(ix.data),
              })),
              addressTableLookups: (m.addressTableLookups ?? []).map((l) => ({
                ...l,
                accountKey: new PublicKey(l.accountKey),
              })),
            }),
            sigs,
          ).serialize()
        : new VersionedTransaction(
            new Message({
              header: m.header,
              accountKeys: keys,
              recentBlockhash: m.recentBlockhash,
              instructions: m.instructions,
            }),
            sigs,
          ).serialize();
    return { ...t, transaction: [Buffer.from(bytes).toString('base64'), 'base64'] };
  });
}

function time(f: () => void): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

function main(): void {
  const json = load('json');
  const parsed = load('jsonParsed');
  const base64 = asBase64(json);
  const n = json.length * ROUNDS;
  const run = (txs: Tx[]) => (): void => {
    for (let r = 0; r < ROUNDS; r++) for (const t of txs) decodeTransaction(t);
  };
  // warm-up, then interleave the encodings so drift hits each equally
  for (const txs of [json, parsed, base64]) run(txs)();
  const ms = { json: 0, jsonParsed: 0, base64: 0 };
  for (let i = 0; i < 3; i++) {
    ms.json += time(run(json));
    ms.jsonParsed += time(run(parsed));
    ms.base64 += time(run(base64));
  }
  const texts = readdirSync(join(DIR, 'jsonParsed'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => readFileSync(join(DIR, 'jsonParsed', f), 'utf8'));
  // documents without a bare 16+ digit number take parseJsonExact's JSON.parse fast path
  const small = texts.filter((t) => !/[:[,]\s*-?[0-9]{16,}/.test(t));
  const readRounds = Math.max(1, Math.floor(ROUNDS / 4));
  const parseAll = (f: (t: string) => unknown, list: string[]) => (): void => {
    for (let r = 0; r < readRounds; r++) for (const t of list) f(t);
  };
  const padded = small.map((t) => t.replace(/^\{/, '{"pad":12345678901234567890,')); // one u64 beyond 2^53 each
  const marked = (list: string[]) => (): void => {
    for (let r = 0; r < readRounds; r++) for (const t of list) parseJsonExact(t);
  };
  parseAll((t) => JSON.parse(t), small)(); // warm-up
  parseAll(parseJsonExact, small)();
  marked(padded)();
  parseAll(parseJsonByCharacter, padded)();
  const rd = { jsonParse: 0, exactFast: 0, exactMarked: 0, byCharacter: 0 };
  for (let i = 0; i < 3; i++) {
    rd.jsonParse += time(parseAll((t) => JSON.parse(t), small));
    rd.exactFast += time(parseAll(parseJsonExact, small));
    rd.exactMarked += time(marked(padded));
    rd.byCharacter += time(parseAll(parseJsonByCharacter, padded));
  }
  const perSec = (count: number, m: number): string =>
    `${Math.round((count * 3) / (m / 1000)).toLocaleString('en-US')}/s`;
  const machine = machineLabel();
  process.stdout.write(
    `decode bench (${json.length} fixture transactions × ${ROUNDS} rounds × 3; machine: ${machine})\n`,
  );
  process.stdout.write(`  decodeTransaction json       ${perSec(n, ms.json)} tx  (ratio 1.00)\n`);
  process.stdout.write(
    `  decodeTransaction jsonParsed ${perSec(n, ms.jsonParsed)} tx  (ratio ${(ms.json / ms.jsonParsed).toFixed(2)} of json's speed)\n`,
  );
  process.stdout.write(
    `  decodeTransaction base64     ${perSec(n, ms.base64)} tx  (ratio ${(ms.json / ms.base64).toFixed(2)} of json's speed)\n`,
  );
  const docs = small.length * readRounds;
  // one large document (a real jsonParsed swap × 200 plus one u64 beyond 2^53): MB/s of each reader
  const swap = readFileSync(
    join(
      __dirname,
      '..',
      'tests',
      'fixtures',
      'transactions',
      'real',
      'jsonParsed',
      'mainnet-3P8JT1-p2p-swap-orca-ok.json',
    ),
    'utf8',
  );
  const big = `[${Array.from({ length: 200 }, () => swap).join(',')},18446744073709551615]`;
  JSON.parse(big);
  parseJsonExact(big);
  let bigPlain = 0;
  let bigExact = 0;
  let bigChar = 0;
  for (let i = 0; i < 3; i++) {
    bigPlain += time(() => JSON.parse(big));
    bigExact += time(() => parseJsonExact(big));
    bigChar += time(() => parseJsonByCharacter(big));
  }
  const mbps = (m: number): string => `${((big.length * 3) / 1e6 / (m / 1000)).toFixed(0)} MB/s`;
  const vs = (m: number): string => `ratio ${(rd.jsonParse / m).toFixed(2)} of JSON.parse`;
  process.stdout.write(
    `  read text (jsonParsed fixtures): JSON.parse ${perSec(docs, rd.jsonParse)} docs; parseJsonExact, no long integer ${perSec(docs, rd.exactFast)} (${vs(rd.exactFast)}); with one u64 > 2^53 ${perSec(docs, rd.exactMarked)} (${vs(rd.exactMarked)}); character reader ${perSec(docs, rd.byCharacter)} (${vs(rd.byCharacter)})\n`,
  );
  process.stdout.write(
    `  large document (${(big.length / 1e6).toFixed(1)} MB): JSON.parse ${mbps(bigPlain)} (rounds the u64), parseJsonExact ${mbps(bigExact)} (ratio ${(bigPlain / bigExact).toFixed(2)}), character reader ${mbps(bigChar)} (ratio ${(bigPlain / bigChar).toFixed(2)})\n`,
  );
}

main();
