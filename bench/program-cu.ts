// Compute units of execute_payout in both runtimes, next to a bare transfer_checked measured in the same run.
// CU counts are deterministic for given inputs; what varies is the op PDA's canonical bump (each bump below 255
// costs one more sha256 + curve check), so the figures are over many op ids.
//   node -r ts-node/register/transpile-only bench/program-cu.ts   (make bench runs it)
import { cpus, totalmem } from 'node:os';
import { Keypair } from '@solana/web3.js';
import { createTransferCheckedInstruction } from '@solana/spl-token';
import { createRuntime, RUNTIMES, type RuntimeName, type TxResult } from '../tests/program/runtimes';
import {
  createWorld,
  fundSystemAccount,
  opIdFor,
  opPda,
  payout,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  writeTokenAccount,
  type World,
} from '../tests/program/world';

const OPS = 64;
const TOKEN_IDS = [TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()];

/** CU the token program itself reported inside a transaction ("Program Token… consumed N of M"). */
function tokenProgramCu(r: TxResult): bigint {
  let sum = 0n;
  for (const line of r.logs) {
    const m = /^Program (\S+) consumed (\d+) of/.exec(line);
    if (m && TOKEN_IDS.includes(m[1])) sum += BigInt(m[2]);
  }
  return sum;
}

function stats(xs: bigint[]) {
  const s = [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const mean = Number(s.reduce((a, b) => a + b, 0n)) / s.length;
  return { min: s[0], median: s[Math.floor(s.length / 2)], mean: Math.round(mean), max: s[s.length - 1] };
}

async function bareTransferChecked(w: World): Promise<TxResult> {
  const owner = Keypair.generate();
  fundSystemAccount(w.rt, owner.publicKey);
  const source = Keypair.generate().publicKey;
  writeTokenAccount(w.rt, source, { mint: w.mint, owner: owner.publicKey, amount: 1_000_000n, tokenProgram: w.tokenProgram });
  const ix = createTransferCheckedInstruction(source, w.mint, w.recipient, owner.publicKey, 1_000n, 6, [], w.tokenProgram);
  return w.send([ix], [owner]);
}

async function measure(name: RuntimeName, tokenProgram = TOKEN_PROGRAM_ID) {
  const rt = await createRuntime(name);
  const w = await createWorld(rt, { tokenProgram, vaultAmount: 10n ** 15n });
  const bare = await bareTransferChecked(w);
  if (!bare.ok) throw new Error(`transfer_checked failed: ${bare.error}`);
  const totals: bigint[] = [];
  const own: bigint[] = [];
  const byBump = new Map<number, bigint[]>();
  for (let i = 0; i < OPS; i++) {
    const opId = opIdFor(`bench-${i}`);
    const r = await payout(w, { opId, amount: 1_000n });
    if (!r.ok) throw new Error(`execute_payout failed: ${r.error}`);
    const bump = opPda(w.merchant.pda, opId)[1];
    totals.push(r.computeUnits);
    own.push(r.computeUnits - tokenProgramCu(r));
    byBump.set(bump, [...(byBump.get(bump) ?? []), r.computeUnits]);
  }
  return { bare: bare.computeUnits, bareToken: tokenProgramCu(bare), totals: stats(totals), own: stats(own), byBump };
}

async function main() {
  console.log(
    `program-cu: machine ${cpus().length}× ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}` +
      ' (CU do not depend on the machine)',
  );
  console.log(`program-cu: execute_payout over ${OPS} op ids per runtime (canonical bumps vary), amount 1000, SPL Token`);
  for (const name of RUNTIMES) {
    const m = await measure(name);
    const label = name === 'bankrun' ? 'bankrun (Solana 1.18, legacy SPL Token)' : 'LiteSVM (Agave 3, p-token)';
    console.log(`\n${label}`);
    console.log(`  bare transfer_checked (top level)          ${m.bare} CU`);
    console.log(
      `  execute_payout total     min ${m.totals.min}  median ${m.totals.median}  mean ${m.totals.mean}  max ${m.totals.max} CU`,
    );
    console.log(
      `  execute_payout − token program's own CU     min ${m.own.min}  median ${m.own.median}  mean ${m.own.mean}  max ${m.own.max} CU` +
        `  (token program inside: ${m.totals.min - m.own.min} CU)`,
    );
    console.log(`  ratio execute_payout / bare transfer_checked (median)   ${(Number(m.totals.median) / Number(m.bare)).toFixed(2)}×`);
    const bumps = [...m.byBump.entries()].sort((a, b) => b[0] - a[0]);
    console.log(
      '  by canonical bump: ' +
        bumps.map(([b, xs]) => `${b}: ${stats(xs).median} CU (n=${xs.length})`).join(', '),
    );
    if (name === 'litesvm') {
      const verdict = m.totals.median <= 6000n ? 'within' : 'OVER';
      console.log(`  target ≤ 6,000 CU under LiteSVM: median ${m.totals.median} → ${verdict}`);
    }
  }
  const t22 = await measure('litesvm', TOKEN_2022_PROGRAM_ID);
  console.log(
    `\nLiteSVM, Token-2022 mint: bare transfer_checked ${t22.bare} CU; execute_payout median ${t22.totals.median} CU, ` +
      `own (without Token-2022's ${t22.totals.median - t22.own.median} CU) ${t22.own.median} CU`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
