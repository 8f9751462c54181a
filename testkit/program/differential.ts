// The differential part of the program tests: every case runs on both binaries (binaries.ts) in both runtimes, and
// what it did is recorded here — each transaction's outcome (success, runtime error text, the Anchor error code and
// number the logs name, the events) and, at the end, every account its transactions touched (owner, lamports,
// data), minus wallets and programs. With the same keys (keys.ts) the Anchor program and its lean twin must leave
// the same record; a difference fails the suite's comparison test unless differences.ts lists it with its reason.
import { AnchorError } from '@coral-xyz/anchor';
import { PublicKey, SystemProgram, type Transaction } from '@solana/web3.js';
import type { ProgramBinary } from '../../common/program-binary';
import type { Runtime, RuntimeName, TxResult } from './runtimes';

interface TxOutcome {
  ok: boolean;
  error: string | null;
  anchorError: string | null;
  events: string[];
}

interface CaseRecord {
  transactions: string[];
  accounts: string[];
}

interface OpenCase {
  key: string;
  binary: ProgramBinary;
  runtimes: Runtime[];
  transactions: string[];
  touched: Set<string>;
}

let open: OpenCase | null = null;
/** case key (runtime | suite | title) → binary → record */
const records = new Map<string, Map<ProgramBinary, CaseRecord>>();

export function caseKey(runtime: RuntimeName, suite: string, title: string): string {
  return `${runtime} | ${suite} | ${title}`;
}

export function beginCase(key: string, binary: ProgramBinary): void {
  open = { key, binary, runtimes: [], transactions: [], touched: new Set() };
}

/** Called by createRuntime and sharedRuntime: the accounts of every runtime a case uses are compared. */
export function recordRuntime(rt: Runtime): void {
  open?.runtimes.push(rt);
}

/** The Anchor error the logs name (AnchorError.parse, as @coral-xyz/anchor's clients read it), as `Name (number)`. */
export function anchorErrorOf(logs: string[]): string | null {
  const e = AnchorError.parse(logs);
  return e ? `${e.error.errorCode.code} (${e.error.errorCode.number})` : null;
}

function outcome(r: TxResult): TxOutcome {
  return {
    ok: r.ok,
    error: r.error,
    anchorError: anchorErrorOf(r.logs),
    events: r.logs.filter((l) => l.startsWith('Program data: ')),
  };
}

/** Called by Runtime.send / sendAll. Results of one sendAll are kept as a sorted set: which racer wins may vary. */
export function recordTransactions(rt: Runtime, txs: Transaction[], results: TxResult[]): void {
  if (!open) return;
  const runtimeIndex = open.runtimes.indexOf(rt);
  const lines = results.map((r) => `rt${runtimeIndex}: ${JSON.stringify(outcome(r))}`);
  open.transactions.push(...(txs.length > 1 ? lines.sort() : lines));
  for (const tx of txs) {
    for (const k of tx.compileMessage().accountKeys) open.touched.add(`${runtimeIndex}:${k.toBase58()}`);
  }
}

/** Closes the case: reads every touched account that is neither a wallet (System-owned) nor executable. */
export async function endCase(): Promise<void> {
  const c = open;
  open = null;
  if (!c) return;
  const accounts: string[] = [];
  for (const entry of [...c.touched].sort()) {
    const [index, key] = entry.split(':');
    const a = await c.runtimes[Number(index)].getAccount(new PublicKey(key));
    if (a === null) {
      accounts.push(`${entry} absent`);
    } else if (!a.executable && !a.owner.equals(SystemProgram.programId)) {
      accounts.push(`${entry} owner ${a.owner.toBase58()} lamports ${a.lamports} data ${a.data.toString('hex')}`);
    }
  }
  const byBinary = records.get(c.key) ?? new Map<ProgramBinary, CaseRecord>();
  byBinary.set(c.binary, { transactions: c.transactions, accounts });
  records.set(c.key, byBinary);
}

/** What one transaction answered, in one word: `ok`, the Anchor error the logs name, or the runtime's error text. */
export function answerOf(line: string): string {
  const o = JSON.parse(line.slice(line.indexOf(' ') + 1)) as TxOutcome;
  if (o.ok) return 'ok';
  return o.anchorError ?? `runtime: ${o.error}`;
}

/** Where the records of one case on two binaries differ. */
export interface CaseDifference {
  /** Each differing transaction, by position: the two recorded lines and what each answered (answerOf). */
  transactions: Array<{ index: number; lines: [string | undefined, string | undefined]; answers: [string, string] }>;
  /** Each differing account, by position: the two recorded lines. */
  accounts: Array<{ index: number; lines: [string | undefined, string | undefined] }>;
  /** Set when the case ran on one binary only. */
  onlyOn?: ProgramBinary;
}

function differingLines(
  xs: string[],
  ys: string[],
): Array<{ index: number; lines: [string | undefined, string | undefined] }> {
  const out = [];
  for (let i = 0; i < Math.max(xs.length, ys.length); i++) {
    if (xs[i] !== ys[i]) out.push({ index: i, lines: [xs[i], ys[i]] as [string | undefined, string | undefined] });
  }
  return out;
}

function diffRecords(a: CaseRecord, b: CaseRecord): CaseDifference | null {
  const transactions = differingLines(a.transactions, b.transactions).map((d) => ({
    ...d,
    answers: d.lines.map((l) => (l === undefined ? '(none)' : answerOf(l))) as [string, string],
  }));
  const accounts = differingLines(a.accounts, b.accounts);
  return transactions.length + accounts.length > 0 ? { transactions, accounts } : null;
}

/** A difference as text lines, for a failure message. */
export function describeDifference(d: CaseDifference, [na, nb]: [string, string]): string[] {
  if (d.onlyOn) return [`ran on ${d.onlyOn} only`];
  const out: string[] = [];
  for (const [what, list] of [
    ['transaction', d.transactions],
    ['account', d.accounts],
  ] as const) {
    for (const { index, lines } of list)
      out.push(`${what} ${index}:\n      ${na}: ${lines[0] ?? '(none)'}\n      ${nb}: ${lines[1] ?? '(none)'}`);
  }
  return out;
}

/** Every case of `runtime` and `suite` whose records on the two binaries differ, and how. */
export function differingCases(
  runtime: RuntimeName,
  suite: string,
  binaries: [ProgramBinary, ProgramBinary],
): Map<string, CaseDifference> {
  const prefix = caseKey(runtime, suite, '');
  const out = new Map<string, CaseDifference>();
  for (const [key, byBinary] of records) {
    if (!key.startsWith(prefix)) continue;
    const title = key.slice(prefix.length);
    const [a, b] = binaries.map((bin) => byBinary.get(bin));
    if (!a || !b) {
      out.set(title, { transactions: [], accounts: [], onlyOn: a ? binaries[0] : binaries[1] });
      continue;
    }
    const d = diffRecords(a, b);
    if (d) out.set(title, d);
  }
  return out;
}

/** How many cases of `runtime` and `suite` were recorded on both binaries. */
export function comparedCases(runtime: RuntimeName, suite: string): number {
  const prefix = caseKey(runtime, suite, '');
  return [...records.entries()].filter(([k, v]) => k.startsWith(prefix) && v.size > 1).length;
}
