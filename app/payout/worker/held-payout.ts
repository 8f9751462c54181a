// What a slot carries from one payout to its next claim: the connection that ran a payout, still holding that
// payout's advisory lock after its final state was committed. The slot's next claim on the same connection unlocks
// it in the claim's own statement (queries.ts claimDuePayout), so a busy slot spends no round trip on unlocking.
import { DedicatedConnection, unlockPayout } from '../lock';

export interface HeldPayout {
  /** The slot's connection, which holds the lock of `finishedId`. */
  conn: DedicatedConnection;
  /** The payout whose run ended (final state committed) and whose lock is still held. */
  finishedId: string;
}

/** The slot stops: unlock the finished payout it holds and give its connection back. */
export async function releaseHeldPayout(held: HeldPayout | undefined): Promise<void> {
  if (held) await unlockPayout(held.conn, held.finishedId);
}
