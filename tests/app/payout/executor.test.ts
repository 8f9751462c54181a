// The payout executor's seam (app/payout/executor.ts), without a chain or a database: which executor a name gives,
// and what each makes of a worker's chain. That both perform the same rules with the same outcomes is the journal
// suite's to show (localnet.test.ts runs it on each).
import { expect } from 'chai';
import { PayoutChain, SignatureStatus } from '../../../app/payout/chain';
import { EXECUTOR_NAMES, executorNamed, fastExecutor, plainExecutor } from '../../../app/payout/executor';
import { runPayoutLocked } from '../../../app/payout/run-payout';
import { runPlainPayoutLocked } from '../../../app/payout/plain-executor';
import { PAYOUT_CODES } from '../../../common/errors/codes';
import { isOncepayError } from '../../../common/errors';
import { Signature } from '../../../app/types';

/** A chain whose status calls stay in flight until the test answers them, counted. */
function slowChain() {
  const calls: Array<{ sigs: Signature[]; answer(): void }> = [];
  const chain = {
    signatureStatuses: (sigs: Signature[]) =>
      new Promise<SignatureStatus[]>((resolve) =>
        calls.push({ sigs, answer: () => resolve(sigs.map(() => ({ found: false }))) }),
      ),
  } as unknown as PayoutChain;
  return { chain, calls };
}

describe('app/payout executors: the seam (pure)', () => {
  it('names the two executors, each with its own run; an unknown name is OPTION_INVALID', () => {
    expect(EXECUTOR_NAMES).to.deep.equal(['fast', 'plain']);
    expect(executorNamed('fast')).to.equal(fastExecutor);
    expect(executorNamed('plain')).to.equal(plainExecutor);
    expect(fastExecutor.runLocked).to.equal(runPayoutLocked);
    expect(plainExecutor.runLocked).to.not.equal(runPayoutLocked);
    expect(runPlainPayoutLocked).to.be.a('function');
    let thrown: unknown;
    try {
      executorNamed('turbo');
    } catch (e) {
      thrown = e;
    }
    expect(isOncepayError(thrown, PAYOUT_CODES.OPTION_INVALID)).to.equal(true);
  });

  it('the fast executor shares a worker’s chain (status asks merged while one is in flight, riding pauses); the plain one leaves it as it is', async () => {
    const fast = slowChain();
    const shared = fastExecutor.shareChain(fast.chain, { blockhashMaxAgeMs: 0 });
    expect(shared.pauseLooking).to.be.a('function');
    const asks = [
      shared.chain.signatureStatuses(['s1' as Signature]),
      shared.chain.signatureStatuses(['s2' as Signature]),
      shared.chain.signatureStatuses(['s3' as Signature]),
    ];
    expect(fast.calls).to.have.length(1); // the other two wait for it
    fast.calls[0].answer();
    await asks[0];
    await new Promise((r) => setImmediate(r));
    expect(fast.calls.map((c) => c.sigs)).to.deep.equal([['s1'], ['s2', 's3']]);
    fast.calls[1].answer();
    await Promise.all(asks);

    const plain = slowChain();
    const own = plainExecutor.shareChain(plain.chain, { blockhashMaxAgeMs: 250 });
    expect(own.chain).to.equal(plain.chain);
    expect(own.pauseLooking).to.equal(undefined);
  });
});
