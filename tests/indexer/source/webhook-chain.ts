// A real chain for the webhook tests: `oncepay localnet` (LiteSVM behind our JSON-RPC server), one mint, a funded
// source account, and real transferChecked payments whose getTransaction results are what a provider would send.
import bs58 from 'bs58';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { createTransferCheckedInstruction } from '@solana/spl-token';
import { startLocalnet, LocalnetHandle } from '../../../localnet';
import { createRpcClient, RpcClient } from '../../../indexer/rpc';
import { airdrop, confirm, createMint, createTokenAccount, mintTo, waitFinalized } from '../../../demo/solana';

export interface Payee {
  owner: string;
  account: string;
  mint: string;
}

export interface WebhookChain {
  net: LocalnetHandle;
  rpc: RpcClient;
  mint: string;
  payee(): Promise<Payee>;
  /** A real transfer, confirmed; returns its signature. */
  pay(amount: bigint, to: Payee): Promise<string>;
  /** A transfer signed but not sent: its signature exists nowhere until send(). */
  signed(amount: bigint, to: Payee): Promise<{ signature: string; send(): Promise<void> }>;
  /** A transfer above the source's balance, sent without preflight: it lands with meta.err. */
  payFailing(to: Payee): Promise<string>;
  /** The finalized getTransaction result of a signature, as a provider would deliver it. */
  item(signature: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startWebhookChain(): Promise<WebhookChain> {
  const net = await startLocalnet({ slotMs: 20, finalityDepth: 2, wsOnNextPort: false });
  const connection = new Connection(net.url, 'confirmed');
  const payer = Keypair.generate();
  await airdrop(connection, payer.publicKey, 50_000_000_000);
  const mint = await createMint(connection, payer, 6);
  const source = await createTokenAccount(connection, payer, mint, payer.publicKey);
  await mintTo(connection, payer, mint, source, 1_000_000_000_000n);
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
      const st = async () => (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0];
      while (!(await st())?.confirmationStatus) await new Promise((r) => setTimeout(r, 25));
      return signature;
    },
    async item(signature) {
      const slot = (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0]!.slot;
      await waitFinalized(connection, slot);
      const tx = await rpc.getTransaction(signature, 'finalized');
      if (!tx) throw new Error(`no finalized transaction ${signature}`);
      return tx;
    },
    stop: () => net.stop(),
  };
}
