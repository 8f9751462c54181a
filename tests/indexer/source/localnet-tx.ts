// Send-and-confirm over JSON-RPC for the localnet scanner test (polling getSignatureStatuses: no websocket).
import { Connection, Keypair, PublicKey, Transaction, TransactionInstruction } from '@solana/web3.js';

export async function confirm(connection: Connection, signature: string): Promise<void> {
  // Bounded by mocha's test timeout; confirmation speed is the localnet's slot time.
  for (;;) {
    const s = (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0];
    if (s && (s.confirmationStatus === 'confirmed' || s.confirmationStatus === 'finalized')) {
      if (s.err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(s.err)}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function sendAndConfirm(connection: Connection, ixs: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
  const tx = new Transaction({ feePayer: signers[0].publicKey, blockhash, lastValidBlockHeight }).add(...ixs);
  tx.sign(...signers);
  const sig = await connection.sendRawTransaction(tx.serialize());
  await confirm(connection, sig);
  return sig;
}

export async function fund(connection: Connection, to: PublicKey, lamports = 10_000_000_000): Promise<void> {
  await confirm(connection, await connection.requestAirdrop(to, lamports));
}
