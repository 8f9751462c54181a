// Shared setup for the SDK suites: a node running the compiled program (a localnet, or the node ANCHOR_PROVIDER_URL
// names: testkit/node), a migrated schema, keypair files
// (mode 600, as `solana-keygen` writes them) and the real `oncepay` binary.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Connection, Keypair, PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import {
  TOKEN_2022_PROGRAM_ID,
  createInitializeMint2Instruction,
  getMintLen,
  ExtensionType,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { send } from '../../testkit/cluster';
import { fund, startTestNode, TestNode } from '../../testkit/node';
import { CliResult, oncepay, ROOT } from '../indexer/cli/run-cli';

export { ROOT };
export const SO = path.join(ROOT, 'target', 'deploy', 'oncepay.so');

export async function startNet(): Promise<{ net: TestNode; connection: Connection }> {
  if (!fs.existsSync(SO)) throw new Error(`${SO} is missing: run \`make program\``);
  const net = await startTestNode({
    slotMs: 20,
    finalityDepth: 4,
    programs: [{ programId: ONCEPAY_PROGRAM_ID, path: SO }],
  });
  return { net, connection: net.connection() };
}

export class Keys {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-sdk-'));
  /** Write a keypair file as the Solana CLI does (JSON array of 64 bytes), mode 600 unless told otherwise. */
  file(kp: Keypair, name: string, mode = 0o600): string {
    const p = path.join(this.dir, `${name}.json`);
    fs.writeFileSync(p, JSON.stringify([...kp.secretKey]), { mode });
    fs.chmodSync(p, mode);
    return p;
  }
  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export async function fundedKeypair(connection: Connection): Promise<Keypair> {
  const kp = Keypair.generate();
  await fund(connection, kp.publicKey, 10_000_000_000);
  return kp;
}

/** A mint under SPL Token (no extensions) or Token-2022 with the given extensions, initialised by `extensionIxs`. */
export async function createMint(
  connection: Connection,
  payer: Keypair,
  o: {
    token2022?: boolean;
    extensions?: ExtensionType[];
    extensionIxs?: (mint: PublicKey) => TransactionInstruction[];
    freezeAuthority?: PublicKey | null;
  } = {},
): Promise<PublicKey> {
  const mint = Keypair.generate();
  const programId = o.token2022 ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID;
  const space = o.token2022 ? getMintLen(o.extensions ?? []) : MINT_SIZE;
  await send(
    connection,
    [
      SystemProgram.createAccount({
        fromPubkey: payer.publicKey,
        newAccountPubkey: mint.publicKey,
        lamports: await connection.getMinimumBalanceForRentExemption(space),
        space,
        programId,
      }),
      ...(o.extensionIxs?.(mint.publicKey) ?? []),
      createInitializeMint2Instruction(mint.publicKey, 6, payer.publicKey, o.freezeAuthority ?? null, programId),
    ],
    [payer, mint],
  );
  return mint.publicKey;
}

/** `oncepay <args>` against the suite's schema; stdout parsed as JSON when it is (as `J`: the fields the caller reads). */
export async function cli<J = unknown>(args: string[], env: Record<string, string>): Promise<CliResult & { json: J }> {
  const r = await oncepay(args, { env });
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { ...r, json: json as J };
}

/** The `code` of the error a command logged on stderr. */
export function errorCode(r: CliResult): string | undefined {
  for (const line of r.stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    const j = JSON.parse(line) as { code?: string };
    if (j.code) return j.code;
  }
  return undefined;
}
