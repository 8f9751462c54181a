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

/** Labels whose op PDA has canonical bump 255, 254, … (the CU of a payout depends only on that, given the inputs). */
function opIdsByBump(w: World, levels: number): Map<number, Buffer> {
  const found = new Map<number, Buffer>();
  for (let i = 0; found.size < levels && i < 100_000; i++) {
    const opId = opIdFor(`bench-bump-${i}`);
    const bump = opPda(w.merchant.pda, opId)[1];
    if (bump > 255 - levels && !found.has(bump)) found.set(bump, opId);
  }
  return found;
}

async function measure(name: RuntimeName, tokenProgram = TOKEN_PROGRAM_ID) {
  const rt = await createRuntime(name, 'lite');
  const w = await createWorld(rt, { tokenProgram, vaultAmount: 10n ** 15n });
  const bare = await bareTransferChecked(w);
  if (!bare.ok) throw new Error(`transfer_checked failed: ${bare.error}`);
  // One payout per canonical bump level: deterministic figures.
  const perBump = new Map<number, { total: bigint; own: bigint }>();
  for (const [bump, opId] of opIdsByBump(w, 6)) {
    const r = await payout(w, { opId, amount: 1_000n });
    if (!r.ok) throw new Error(`execute_payout failed: ${r.error}`);
    perBump.set(bump, { total: r.computeUnits, own: r.computeUnits - tokenProgramCu(r) });
  }
  // A sample of op ids as they come (bumps distributed as in real use).
  const totals: bigint[] = [];
  for (let i = 0; i < OPS; i++) {
    const r = await payout(w, { opId: opIdFor(`bench-${i}`), amount: 1_000n });
    if (!r.ok) throw new Error(`execute_payout failed: ${r.error}`);
    totals.push(r.computeUnits);
  }
  const c255 = perBump.get(255)!;
  const step = perBump.get(254)!.total - c255.total;
  // P(canonical bump = 255 − k) ≈ 2^−(k+1), so E[k] = 1 and P(k ≥ j) = 2^−j.
  const expected = c255.total + step;
  return { bare: bare.computeUnits, c255, step, expected, perBump, sample: stats(totals) };
}

async function main() {
  console.log(
    `program-cu: machine ${cpus().length}× ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}` +
      ' (CU do not depend on the machine)',
  );
  console.log('program-cu: execute_payout, amount 1000, SPL Token unless said; CU depend on the op PDA\'s canonical bump');
  for (const name of RUNTIMES) {
    const m = await measure(name);
    const label = name === 'bankrun' ? 'bankrun (Solana 1.18, legacy SPL Token)' : 'LiteSVM (Agave 3, p-token)';
    console.log(`\n${label}`);
    console.log(`  bare transfer_checked (top level)                 ${m.bare} CU`);
    console.log(
      `  execute_payout, canonical bump 255                ${m.c255.total} CU  ` +
        `(without the token program's own ${m.c255.total - m.c255.own} CU: ${m.c255.own} CU)`,
    );
    console.log(`  each lower canonical bump                         +${m.step} CU (one sha256 + one curve check)`);
    console.log(
      '  by bump: ' +
        [...m.perBump.entries()]
          .sort((a, b) => b[0] - a[0])
          .map(([b, c]) => `${b}: ${c.total}`)
          .join(', '),
    );
    console.log(`  expected over random op ids                       ${m.expected} CU`);
    console.log(
      `  sample of ${OPS} op ids                              min ${m.sample.min}  median ${m.sample.median}  ` +
        `mean ${m.sample.mean}  max ${m.sample.max} CU`,
    );
    console.log(
      `  ratio execute_payout(bump 255) / bare transfer_checked   ${(Number(m.c255.total) / Number(m.bare)).toFixed(2)}×`,
    );
    if (name === 'litesvm') {
      let over = 0;
      while (m.c255.total + BigInt(over) * m.step <= 6000n) over++;
      console.log(
        `  target ≤ 6,000 CU: bump 255 ${m.c255.total}, expected ${m.expected} → ${m.expected <= 6000n ? 'within' : 'OVER'}; ` +
          `over 6,000 from ${over} bumps below 255 (≈ 1 op id in ${2 ** over})`,
      );
    }
  }
  const t22 = await measure('litesvm', TOKEN_2022_PROGRAM_ID);
  console.log(
    `\nLiteSVM, Token-2022 mint: bare transfer_checked ${t22.bare} CU; execute_payout at bump 255 ${t22.c255.total} CU ` +
      `(without Token-2022's ${t22.c255.total - t22.c255.own} CU: ${t22.c255.own} CU)`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
