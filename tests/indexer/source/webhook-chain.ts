// A real chain for the webhook tests: `oncepay localnet` (LiteSVM behind our JSON-RPC server) or the node
// ANCHOR_PROVIDER_URL names (testkit/node), one mint, a funded
// source account, and real transferChecked payments whose getTransaction results are what a provider would send.
import bs58 from 'bs58';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import {
  ExtensionType,
  TOKEN_2022_PROGRAM_ID,
  createAssociatedTokenAccountInstruction,
  createInitializeMint2Instruction,
  createInitializeTransferFeeConfigInstruction,
  createMintToInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  getMintLen,
} from '@solana/spl-token';
import { fund, scaledWait, startTestNode, TestNode } from '../../../testkit/node';
import { createRpcClient, RpcClient } from '../../../indexer/rpc';
import { confirm, createTokenAccount, mintWithSource, send, waitFinalized } from '../../../testkit/cluster';

export interface Payee {
  owner: string;
  account: string;
  mint: string;
}

export interface WebhookChain {
  net: TestNode;
  rpc: RpcClient;
  mint: string;
  payee(): Promise<Payee>;
  /** A real transfer, confirmed; returns its signature. */
  pay(amount: bigint, to: Payee): Promise<string>;
  /** A transfer signed but not sent: its signature exists nowhere until send(). */
  signed(amount: bigint, to: Payee): Promise<{ signature: string; send(): Promise<void> }>;
  /** A transfer above the source's balance, sent without preflight: it lands with meta.err. */
  payFailing(to: Payee): Promise<string>;
  /**
   * A real transaction the decoder must refuse: two plain Token-2022 transferChecked of 10.000000 from a
   * transfer-fee mint (1.5 %) into one account. The fees are withheld but stated nowhere, so what arrived (19.7)
   * cannot be attributed to the two transfers (20.0 claimed): a balance mismatch on the chain's own answer.
   */
  payFeeMintTwice(): Promise<{ signature: string; owner: string; mint: string }>;
  /** The finalized getTransaction result of a signature, as a provider would deliver it. */
  item(signature: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startWebhookChain(): Promise<WebhookChain> {
  const net = await startTestNode({ slotMs: 20, finalityDepth: 2 });
  const connection = net.connection();
  const payer = Keypair.generate();
  await fund(connection, payer.publicKey, 50_000_000_000);
  const { mint, source } = await mintWithSource(connection, payer, 6, 1_000_000_000_000n);
  const rpc = createRpcClient({ url: net.url, retry: { attempts: 3, timeoutMs: 10_000 } });

  const build = async (amount: bigint, to: Payee) => {
    const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
      createTransferCheckedInstruction(source, mint, new PublicKey(to.account), payer.publicKey, amount, 6),
    );
    tx.sign(payer);
    return tx;
  };
  const signatureOf = (tx: Transaction) => bs58.encode(tx.signature!);

  return {
    net,
    rpc,
    mint: mint.toBase58(),
    async payee() {
      const owner = Keypair.generate().publicKey;
      const account = await createTokenAccount(connection, payer, mint, owner);
      return { owner: owner.toBase58(), account: account.toBase58(), mint: mint.toBase58() };
    },
    async pay(amount, to) {
      const tx = await build(amount, to);
      const signature = await connection.sendRawTransaction(tx.serialize());
      await confirm(connection, signature);
      return signature;
    },
    async signed(amount, to) {
      const tx = await build(amount, to);
      return {
        signature: signatureOf(tx),
        async send() {
          await confirm(connection, await connection.sendRawTransaction(tx.serialize()));
        },
      };
    },
    async payFailing(to) {
      const tx = await build(10n ** 18n, to);
      const signature = await connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
      const st = async () =>
        (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0];
      while (!(await st())?.confirmationStatus) await new Promise((r) => setTimeout(r, 25));
      return signature;
    },
    async payFeeMintTwice() {
      const feeMint = Keypair.generate();
      const len = getMintLen([ExtensionType.TransferFeeConfig]);
      await send(
        connection,
        [
          SystemProgram.createAccount({
            fromPubkey: payer.publicKey,
            newAccountPubkey: feeMint.publicKey,
            lamports: await connection.getMinimumBalanceForRentExemption(len),
            space: len,
            programId: TOKEN_2022_PROGRAM_ID,
          }),
          createInitializeTransferFeeConfigInstruction(
            feeMint.publicKey,
            payer.publicKey,
            payer.publicKey,
            150,
            1_000_000n,
            TOKEN_2022_PROGRAM_ID,
          ),
          createInitializeMint2Instruction(feeMint.publicKey, 6, payer.publicKey, null, TOKEN_2022_PROGRAM_ID),
        ],
        [payer, feeMint],
      );
      const owner = Keypair.generate().publicKey;
      const from = getAssociatedTokenAddressSync(feeMint.publicKey, payer.publicKey, false, TOKEN_2022_PROGRAM_ID);
      const to = getAssociatedTokenAddressSync(feeMint.publicKey, owner, false, TOKEN_2022_PROGRAM_ID);
      await send(
        connection,
        [
          createAssociatedTokenAccountInstruction(
            payer.publicKey,
            from,
            payer.publicKey,
            feeMint.publicKey,
            TOKEN_2022_PROGRAM_ID,
          ),
          createAssociatedTokenAccountInstruction(payer.publicKey, to, owner, feeMint.publicKey, TOKEN_2022_PROGRAM_ID),
          createMintToInstruction(feeMint.publicKey, from, payer.publicKey, 100_000_000n, [], TOKEN_2022_PROGRAM_ID),
        ],
        [payer],
      );
      const twice = [0, 1].map(() =>
        createTransferCheckedInstruction(
          from,
          feeMint.publicKey,
          to,
          payer.publicKey,
          10_000_000n,
          6,
          [],
          TOKEN_2022_PROGRAM_ID,
        ),
      );
      const { signature } = await send(connection, twice, [payer]);
      return { signature, owner: owner.toBase58(), mint: feeMint.publicKey.toBase58() };
    },
    async item(signature) {
      const slot = (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0]!
        .slot;
      // On a real validator finality trails by ~32 slots of 400 ms, and much more on a loaded machine (the
      // case's own timeout bounds the wait there).
      await waitFinalized(connection, slot, scaledWait(90_000));
      const tx = await rpc.getTransaction(signature, 'finalized');
      if (!tx) throw new Error(`no finalized transaction ${signature}`);
      return tx;
    },
    stop: () => net.stop(),
  };
}
