// Compute units of execute_payout for both program binaries (the Anchor program and its lean twin), side by side in
// both runtimes and with both token programs (SPL Token, Token-2022), next to a bare transfer_checked measured in the
// same run, and both .so sizes. CU counts are deterministic for given inputs; what varies is the op PDA's canonical
// bump (each bump below 255 costs the twin one more sha256 + curve check, the Anchor program one more
// create_program_address in find_program_address), so the figures are given at bump 255 and averaged over random op
// ids: exactly, from the cost per bump and the bumps' distribution (bump 255 − k with probability 2^−(k+1), so on
// average one bump below 255), and as the mean of a sample of random op ids (the same ids for both binaries) as a
// check.
// Target, LiteSVM, averaged over random op ids: lite ≤ 4,800 CU. The Anchor program has none (written for the reader).
//   node -r ts-node/register/transpile-only bench/program-cu.ts   (make bench runs it)
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { createTransferCheckedInstruction } from '@solana/spl-token';
import type { ProgramBinary } from '../common/program-binary';
import { BINARIES, requireBinary } from '../testkit/program/binaries';
import { keypair, seedKeys } from '../testkit/program/keys';
import { createRuntime, RUNTIMES, type RuntimeName, type TxResult } from '../testkit/program/runtimes';
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
} from '../testkit/program/world';
import { OncepayError, BENCH_CODES } from '../common/errors';
import { machineLabel } from './machine';

/** Random op ids per measurement (the same for both binaries). */
const OPS = 256;
const TOKEN_IDS = [TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()];
const TARGETS: Partial<Record<ProgramBinary, bigint>> = { lite: 4_800n };

/** CU the token program itself reported inside a transaction ("Program Token… consumed N of M"). */
function tokenProgramCu(r: TxResult): bigint {
  let sum = 0n;
  for (const line of r.logs) {
    const m = /^Program (\S+) consumed (\d+) of/.exec(line);
    if (m && TOKEN_IDS.includes(m[1])) sum += BigInt(m[2]);
  }
  return sum;
}

function mean(xs: bigint[]): number {
  return Number(xs.reduce((a, b) => a + b, 0n)) / xs.length;
}

async function bareTransferChecked(w: World): Promise<TxResult> {
  const owner = keypair();
  fundSystemAccount(w.rt, owner.publicKey);
  const source = keypair().publicKey;
  writeTokenAccount(w.rt, source, {
    mint: w.mint,
    owner: owner.publicKey,
    amount: 1_000_000n,
    tokenProgram: w.tokenProgram,
  });
  const ix = createTransferCheckedInstruction(
    source,
    w.mint,
    w.recipient,
    owner.publicKey,
    1_000n,
    6,
    [],
    w.tokenProgram,
  );
  return w.send([ix], [owner]);
}

/** An op id whose op PDA has canonical bump 255 and one with 254 (CU depend only on that, given the inputs). */
function opIdsAtBumps(w: World): Map<number, Buffer> {
  const found = new Map<number, Buffer>();
  for (let i = 0; found.size < 2 && i < 100_000; i++) {
    const opId = opIdFor(`bench-bump-${i}`);
    const bump = opPda(w.merchant.pda, opId)[1];
    if (bump >= 254 && !found.has(bump)) found.set(bump, opId);
  }
  return found;
}

interface Measure {
  bare: bigint;
  at255: bigint;
  own255: bigint;
  step: bigint;
  sampleMean: number;
  sampleMax: bigint;
}

async function measure(
  runtime: RuntimeName,
  binary: ProgramBinary,
  randomOpIds: Buffer[],
  tokenProgram = TOKEN_PROGRAM_ID,
): Promise<Measure> {
  // The same keys (merchant, accounts) for every binary, so the same op ids have the same canonical bumps.
  seedKeys(`bench-${runtime}-${tokenProgram.toBase58()}`);
  const rt = await createRuntime(runtime, binary);
  const w = await createWorld(rt, { tokenProgram, vaultAmount: 10n ** 15n });
  const bare = await bareTransferChecked(w);
  if (!bare.ok) throw new OncepayError(BENCH_CODES.CHECK_FAILED, `transfer_checked failed: ${bare.error}`);
  const byBump = new Map<number, TxResult>();
  for (const [bump, opId] of opIdsAtBumps(w)) {
    const r = await payout(w, { opId, amount: 1_000n });
    if (!r.ok)
      throw new OncepayError(
        BENCH_CODES.CHECK_FAILED,
        `execute_payout (${binary}) failed: ${r.error}\n${r.logs.join('\n')}`,
      );
    byBump.set(bump, r);
  }
  const sample: bigint[] = [];
  for (const opId of randomOpIds) {
    const r = await payout(w, { opId, amount: 1_000n });
    if (!r.ok)
      throw new OncepayError(
        BENCH_CODES.CHECK_FAILED,
        `execute_payout (${binary}) failed: ${r.error}\n${r.logs.join('\n')}`,
      );
    sample.push(r.computeUnits);
  }
  const at255 = byBump.get(255)!;
  return {
    bare: bare.computeUnits,
    at255: at255.computeUnits,
    own255: at255.computeUnits - tokenProgramCu(at255),
    step: byBump.get(254)!.computeUnits - at255.computeUnits,
    sampleMean: mean(sample),
    sampleMax: sample.reduce((a, b) => (a > b ? a : b), 0n),
  };
}

const pad = (s: string | number | bigint, n: number) => String(s).padStart(n);

/** What the runtime gives an instruction when no compute-budget instruction says otherwise. */
const DEFAULT_INSTRUCTION_CU = 200_000n;

async function main() {
  console.log(`program-cu: machine ${machineLabel()}` + ' (CU do not depend on the machine)');
  const binaries = BINARIES;
  for (const b of binaries)
    console.log(`program-cu: ${b} .so ${pad(statSync(requireBinary(b)).size.toLocaleString('en'), 9)} bytes`);
  const randomOpIds = Array.from({ length: OPS }, () => randomBytes(32));
  console.log(
    `program-cu: execute_payout, amount 1000, both binaries side by side; average over random op ids exactly (from ` +
      `the cost per bump: one bump below 255 on average) and as the mean of ${OPS} random op ids (the same for every binary)`,
  );
  const header =
    '  program   bare transfer_checked   payout @bump 255 (own)   per lower bump   average (exact)   sample mean   sample max';
  let anchorWorst = 0n;
  for (const runtime of RUNTIMES) {
    for (const [tokenName, tokenProgram] of [
      [runtime === 'bankrun' ? 'legacy SPL Token' : 'SPL Token (p-token)', TOKEN_PROGRAM_ID],
      ['Token-2022', TOKEN_2022_PROGRAM_ID],
    ] as const) {
      console.log(`\n${runtime === 'bankrun' ? 'bankrun (Solana 1.18)' : 'LiteSVM (Agave 3)'}, ${tokenName}`);
      console.log(header);
      const verdicts: string[] = [];
      for (const binary of binaries) {
        const m = await measure(runtime, binary, randomOpIds, tokenProgram);
        // E[k] = Σ_{j≥1} P(k ≥ j) = Σ 2^−j = 1 bump below 255 on average.
        const average = m.at255 + m.step;
        console.log(
          `  ${binary.padEnd(7)} ${pad(m.bare, 12)} CU ${pad(m.at255, 16)} CU (${m.own255}) ${pad(`+${m.step}`, 10)} CU ` +
            `${pad(average, 12)} CU ${pad(Math.round(m.sampleMean), 10)} CU ${pad(m.sampleMax, 10)} CU`,
        );
        const target = TARGETS[binary];
        if (runtime === 'litesvm' && tokenProgram === TOKEN_PROGRAM_ID && target !== undefined) {
          const ok = average <= target;
          verdicts.push(
            `${binary} ${average} CU vs target ≤ ${target.toLocaleString('en')} → ${ok ? 'within' : 'OVER'}`,
          );
        }
        if (binary === 'anchor' && m.sampleMax > anchorWorst) anchorWorst = m.sampleMax;
      }
      for (const v of verdicts) console.log(`  target (LiteSVM, SPL Token, average over random op ids): ${v}`);
    }
  }
  if (binaries.includes('anchor'))
    console.log(
      `\nprogram-cu: anchor, no target: its most expensive payout above (runtime, token program and op id) took ` +
        `${anchorWorst.toLocaleString('en')} CU of the ${DEFAULT_INSTRUCTION_CU.toLocaleString('en')} an instruction ` +
        `gets without a compute-budget instruction (${((Number(anchorWorst) / Number(DEFAULT_INSTRUCTION_CU)) * 100).toFixed(0)}%)`,
    );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
