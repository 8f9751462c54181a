// nextAction is the journal's rules as a pure function: every rule here, without a database or a chain. The loop
// that performs the actions (run-payout.ts) is tested against real PostgreSQL and a real runtime beside this file.
import { expect } from 'chai';
import {
  Action,
  emptyRound,
  nextAction,
  Observation,
  Round,
  winnerAmongAttempts,
  winnerInHistory,
} from '../../../app/payout/next-action';
import { AttemptRow, PayoutRow } from '../../../app/payout/store';
import { OpAccount } from '../../../app/payout/program';
import { SignatureStatus } from '../../../app/payout/chain';
import { opId } from '../../../app/op-id';
import { Address, Signature } from '../../../app/types';

const OP = opId('cd'.repeat(32));
const T0 = new Date(0);

function payout(over: Partial<PayoutRow> = {}): PayoutRow {
  return {
    id: '7',
    merchantId: '1',
    merchantPayoutId: 'po-1' as PayoutRow['merchantPayoutId'],
    programId: 'Prog' as Address,
    merchantAddress: 'Merchant' as Address,
    vault: 'Vault' as Address,
    tokenProgram: 'Token' as Address,
    recipientToken: 'Recipient' as Address,
    mint: 'Mint' as Address,
    amount: 18446744073709551615n,
    opId: OP,
    opPda: 'OpPda' as Address,
    opBump: 255,
    state: 'executing',
    resultSignature: null,
    resultSlot: null,
    conflict: null,
    lastError: null,
    createdAt: T0,
    updatedAt: T0,
    finishedAt: null,
    nextAttemptAt: T0,
    retries: 0,
    claimedBy: null,
    ...over,
  };
}

function attempt(n: number, over: Partial<AttemptRow> = {}): AttemptRow {
  return {
    id: `a${n}`,
    payoutId: '7',
    attemptNo: n,
    signature: `sig${n}` as Signature,
    blockhash: `bh${n}`,
    lastValidBlockHeight: 100n,
    txBytes: Buffer.from([n]),
    status: 'sent',
    slot: null,
    error: null,
    sendCount: 1,
    createdAt: T0,
    updatedAt: T0,
    ...over,
  };
}

const op = (over: Partial<OpAccount> = {}): OpAccount => ({
  opId: OP,
  merchant: 'Merchant' as Address,
  recipient: 'Recipient' as Address,
  mint: 'Mint' as Address,
  amount: 18446744073709551615n,
  slot: 42n,
  bump: 255,
  ...over,
});

const LIFETIME = { blockhash: 'fresh', lastValidBlockHeight: 250n };

function obs(over: Partial<Observation> = {}, round: Partial<Round> = {}): Observation {
  return {
    now: 10_000,
    rebroadcastMs: 2000,
    retryFailed: false,
    reopened: false,
    unsent: new Set(),
    lastSend: new Map(),
    awaitingWinner: false,
    ...over,
    round: { ...emptyRound(), ...round },
  };
}

const NOT_FOUND: SignatureStatus = { found: false };
const statuses = (entries: Array<[string, SignatureStatus]>) => new Map(entries);
const landed = (slot: bigint, err: unknown = null): SignatureStatus => ({
  found: true,
  settled: true,
  slot,
  err: err as never,
});

describe('app/payout nextAction (pure: the journal rules)', () => {
  describe('final states', () => {
    for (const state of ['succeeded', 'conflict', 'failed'] as const) {
      it(`${state} → done, whatever was observed`, () => {
        expect(
          nextAction(payout({ state }), [attempt(1)], obs({}, { op: { read: 'winner', account: op() } })),
        ).to.deep.equal({ kind: 'done' });
      });
    }
    it('failed with retryFailed → reopen, once per run', () => {
      expect(nextAction(payout({ state: 'failed' }), [], obs({ retryFailed: true }))).to.deep.equal({ kind: 'reopen' });
      expect(nextAction(payout({ state: 'failed' }), [], obs({ retryFailed: true, reopened: true }))).to.deep.equal({
        kind: 'done',
      });
      expect(nextAction(payout({ state: 'succeeded' }), [], obs({ retryFailed: true }))).to.deep.equal({
        kind: 'done',
      });
    });
  });

  describe('rule 1: the first attempt on a blockhash alone; a later one only when none is open and the op account is absent at finalized', () => {
    it('no attempt ever journaled (the first) → only a blockhash: nothing of ours can be on chain, the op PDA guards the rest', () => {
      expect(nextAction(payout({ state: 'pending' }), [], obs())).to.deep.equal({ kind: 'read_blockhash' });
    });
    it('first attempt, blockhash read → sign with it', () => {
      const o = obs({}, { lifetime: LIFETIME });
      expect(nextAction(payout({ state: 'pending' }), [], o)).to.deep.equal({ kind: 'sign', lifetime: LIFETIME });
    });
    it('every attempt settled → read the op account first, too', () => {
      const settled = [attempt(1, { status: 'expired' }), attempt(2, { status: 'failed', error: 'x' })];
      expect(nextAction(payout(), settled, obs())).to.deep.equal({ kind: 'read_op_before_signing' });
    });
    it('op absent at finalized → sign with the blockhash read beside it', () => {
      const settled = [attempt(1, { status: 'expired' })];
      const o = obs({}, { op: { read: 'before_signing', account: null, lifetime: LIFETIME } });
      expect(nextAction(payout(), settled, o)).to.deep.equal({ kind: 'sign', lifetime: LIFETIME });
    });
    it('a blockhash an attempt of this payout already used → wait for a newer one (never the same bytes twice)', () => {
      const settled = [attempt(1, { status: 'expired', blockhash: 'fresh' })];
      const o = obs({}, { op: { read: 'before_signing', account: null, lifetime: LIFETIME } });
      expect(nextAction(payout(), settled, o)).to.deep.equal({ kind: 'wait' });
    });
    it('an op read for another reason is not the pre-signing read', () => {
      const settled = [attempt(1, { status: 'expired' })];
      const o = obs({}, { op: { read: 'expired', account: null, attemptId: 'a1' } });
      expect(nextAction(payout(), settled, o)).to.deep.equal({ kind: 'read_op_before_signing' });
    });
    it('op present → never sign: name the winner, then settle from the op account', () => {
      const o = obs({}, { op: { read: 'before_signing', account: op(), lifetime: LIFETIME } });
      expect(nextAction(payout(), [], o)).to.deep.equal({ kind: 'find_winner', op: op() });
      o.round = { ...o.round, winner: null };
      const a = nextAction(payout(), [], o);
      expect(a).to.include({ kind: 'settle_from_op' });
      expect((a as Extract<Action, { kind: 'settle_from_op' }>).outcome).to.deep.equal({
        state: 'succeeded',
        signature: null,
        slot: 42n,
      });
    });
    it('an open attempt → never sign: look at it', () => {
      const open = [attempt(1, { status: 'built', sendCount: 0 })];
      expect(nextAction(payout(), open, obs())).to.deep.equal({ kind: 'look', attempts: open });
    });
  });

  describe('rule 3: not found while the blockhash is valid → the same bytes again', () => {
    it('signed by this run and not sent yet → send at once, without a look or an expiry call', () => {
      const a = attempt(1, { status: 'built', sendCount: 0 });
      expect(nextAction(payout(), [a], obs({ unsent: new Set(['a1']) }))).to.deep.equal({
        kind: 'send',
        attempt: a,
        first: true,
      });
    });
    it('a built attempt of an earlier run (maybe sent) is looked at and checked for expiry first', () => {
      const a = attempt(1, { status: 'built', sendCount: 0 });
      const o = obs({}, { statuses: statuses([['a1', NOT_FOUND]]) });
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'check_expiry', attempt: a });
      o.round = { ...o.round, expired: new Map([['a1', false]]) };
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'send', attempt: a, first: true });
    });
    it('not found, sent by this run less than a rebroadcast interval ago → wait (no expiry call)', () => {
      const a = attempt(1);
      const o = obs({ now: 10_000, lastSend: new Map([['a1', 9_000]]) }, { statuses: statuses([['a1', NOT_FOUND]]) });
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'wait' });
    });
    it('not found, sent longer ago and not expired → rebroadcast', () => {
      const a = attempt(1);
      const o = obs(
        { now: 10_000, lastSend: new Map([['a1', 7_000]]) },
        { statuses: statuses([['a1', NOT_FOUND]]), expired: new Map([['a1', false]]) },
      );
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'send', attempt: a, first: false });
    });
    it('sent this round and nothing else open to look at → wait, without a look (it would be set aside)', () => {
      const a = attempt(1, { status: 'sent' });
      const o = obs({ lastSend: new Map([['a1', 10_000]]) }, { sent: new Set(['a1']) });
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'wait' });
      // Another open attempt, not sent this round: looked at, the one just sent with it (as before).
      const b = attempt(2, { status: 'sent' });
      expect(nextAction(payout(), [a, b], o)).to.deep.equal({ kind: 'look', attempts: [a, b] });
    });
    it('sent this round → looked at again only next round', () => {
      const a = attempt(1, { status: 'sent' });
      const o = obs({ rebroadcastMs: 0, lastSend: new Map([['a1', 10_000]]) }, { sent: new Set(['a1']) });
      o.round = { ...o.round, statuses: statuses([['a1', NOT_FOUND]]), expired: new Map([['a1', false]]) };
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'wait' });
    });
  });

  describe('rule 2: found at the settle commitment', () => {
    it('without error → settle landed (attempt and payout in one write)', () => {
      const a = attempt(1);
      const o = obs({}, { statuses: statuses([['a1', landed(9n)]]) });
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'settle_landed', attempt: a, slot: 9n });
    });
    it('with OperationAlreadyConsumed (6000) → settle consumed, then read the op account at confirmed', () => {
      const a = attempt(1);
      const o = obs({}, { statuses: statuses([['a1', landed(9n, { InstructionError: [0, { Custom: 6000 }] })]]) });
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'settle_consumed', attempt: a, slot: 9n });
      const after = [attempt(1, { status: 'failed', error: 'OperationAlreadyConsumed' })];
      expect(nextAction(payout(), after, obs({ awaitingWinner: true }))).to.deep.equal({ kind: 'read_winner_op' });
    });
    it('awaiting the winner: absent at confirmed → wait, never sign; present → name the winner', () => {
      const after = [attempt(1, { status: 'failed', error: 'OperationAlreadyConsumed' })];
      expect(
        nextAction(payout(), after, obs({ awaitingWinner: true }, { op: { read: 'winner', account: null } })),
      ).to.deep.equal({ kind: 'wait' });
      expect(
        nextAction(payout(), after, obs({ awaitingWinner: true }, { op: { read: 'winner', account: op() } })),
      ).to.deep.equal({ kind: 'find_winner', op: op() });
    });
    it('with another error → settle failed, named as the IDL names it; the payout fails only when no other attempt is open', () => {
      const err = { InstructionError: [0, { Custom: 6003 }] };
      const a1 = attempt(1);
      const a2 = attempt(2);
      const one = nextAction(payout(), [a1], obs({}, { statuses: statuses([['a1', landed(5n, err)]]) }));
      expect(one).to.deep.equal({
        kind: 'settle_failed',
        attempt: a1,
        slot: 5n,
        error: 'InvalidAmount (6003)',
        failPayout: true,
      });
      // An error the IDL does not name (a runtime error) is kept as the chain gave it.
      const runtime = { InstructionError: [0, 'InvalidAccountData'] };
      expect(nextAction(payout(), [a1], obs({}, { statuses: statuses([['a1', landed(5n, runtime)]]) }))).to.include({
        kind: 'settle_failed',
        error: JSON.stringify(runtime),
      });
      const two = nextAction(
        payout(),
        [a1, a2],
        obs(
          {},
          {
            statuses: statuses([
              ['a1', landed(5n, err)],
              ['a2', { found: true, settled: false, slot: 6n }],
            ]),
          },
        ),
      );
      expect(two).to.include({ kind: 'settle_failed', failPayout: false });
    });
    it('with Unauthorized (a key that is not the merchant payout authority) → hand the payout back, never fail it', () => {
      const err = { InstructionError: [0, { Custom: 6001 }] };
      const a1 = attempt(1);
      const a2 = attempt(2);
      const alone = nextAction(payout(), [a1], obs({}, { statuses: statuses([['a1', landed(7n, err)]]) }));
      expect(alone).to.deep.equal({
        kind: 'hand_back_unauthorized',
        attempt: a1,
        slot: 7n,
        error: 'Unauthorized (6001)',
      });
      // Another attempt still open decides: this one is settled failed, the payout is not.
      const withOther = nextAction(
        payout(),
        [a1, a2],
        obs(
          {},
          {
            statuses: statuses([
              ['a1', landed(7n, err)],
              ['a2', { found: true, settled: false, slot: 8n }],
            ]),
          },
        ),
      );
      expect(withOther).to.include({ kind: 'settle_failed', error: 'Unauthorized (6001)', failPayout: false });
      // Handed back (executing, its attempt settled failed): the next claim signs a new attempt by rule 1.
      const after = [attempt(1, { status: 'failed', error: 'Unauthorized (6001)' })];
      expect(nextAction(payout({ state: 'executing' }), after, obs())).to.deep.equal({
        kind: 'read_op_before_signing',
      });
    });
    it('seen but not settled → wait: never re-sign, no expiry call', () => {
      const a = attempt(1);
      const o = obs({}, { statuses: statuses([['a1', { found: true, settled: false, slot: 3n }]]) });
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'wait' });
    });
    it('a waiting attempt does not hide the next open one', () => {
      const a1 = attempt(1);
      const a2 = attempt(2);
      const o = obs(
        {},
        {
          statuses: statuses([
            ['a1', { found: true, settled: false, slot: 3n }],
            ['a2', landed(4n)],
          ]),
        },
      );
      expect(nextAction(payout(), [a1, a2], o)).to.deep.equal({ kind: 'settle_landed', attempt: a2, slot: 4n });
    });
  });

  describe('rule 4: not found after expiry → only the op account at finalized decides', () => {
    const a = attempt(1);
    const expiredRound = { statuses: statuses([['a1', NOT_FOUND]]), expired: new Map([['a1', true]]) };
    it('expired → read the op account at finalized', () => {
      expect(nextAction(payout(), [a], obs({}, expiredRound))).to.deep.equal({ kind: 'read_expired_op', attempt: a });
    });
    it('expired and the op account absent → settle the attempt expired (a new one is signed next round)', () => {
      const o = obs({}, { ...expiredRound, op: { read: 'expired', account: null, attemptId: 'a1' } });
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'settle_expired', attempt: a });
    });
    it('the op read for another attempt does not settle this one', () => {
      const o = obs({}, { ...expiredRound, op: { read: 'expired', account: null, attemptId: 'a0' } });
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'read_expired_op', attempt: a });
    });
    it('expired but the op account present → executed earlier: name the winner, supersede the rest', () => {
      const o = obs({}, { ...expiredRound, op: { read: 'expired', account: op(), attemptId: 'a1' } });
      expect(nextAction(payout(), [a], o)).to.deep.equal({ kind: 'find_winner', op: op() });
    });
  });

  describe('settling from the op account (rules 2 and 5)', () => {
    const settledFrom = (
      p: PayoutRow,
      attempts: AttemptRow[],
      account: OpAccount,
      winner: { signature: Signature; slot: bigint } | null,
    ) =>
      nextAction(p, attempts, obs({}, { op: { read: 'expired', account, attemptId: 'a1' }, winner })) as Extract<
        Action,
        { kind: 'settle_from_op' }
      >;
    it('the winner lands, other open attempts are superseded, settled ones keep their outcome', () => {
      const a1 = attempt(1, { status: 'expired' });
      const a2 = attempt(2);
      const a3 = attempt(3, { status: 'built' });
      const s = settledFrom(payout(), [a1, a2, a3], op(), { signature: 'sig2' as Signature, slot: 41n });
      expect(s.kind).to.equal('settle_from_op');
      expect(s.attempts).to.deep.equal([
        { attempt: a2, status: 'landed', slot: 41n },
        { attempt: a3, status: 'failed', error: 'superseded: op already executed by sig2' },
      ]);
      expect(s.outcome).to.deep.equal({ state: 'succeeded', signature: 'sig2', slot: 42n });
      expect(s.mismatches).to.deep.equal([]);
    });
    it('no winner named → every open attempt superseded, succeeded without a signature', () => {
      const a1 = attempt(1);
      const s = settledFrom(payout(), [a1], op(), null);
      expect(s.attempts).to.deep.equal([{ attempt: a1, status: 'failed', error: 'superseded: op already executed' }]);
      expect(s.outcome).to.deep.equal({ state: 'succeeded', signature: null, slot: 42n });
    });
    it('rule 5: other terms on chain → conflict, flagged with both sides, never "fixed"', () => {
      const s = settledFrom(payout(), [attempt(1)], op({ recipient: 'Other' as Address, amount: 5n }), null);
      expect(s.mismatches.map((x) => x.field)).to.deep.equal(['recipient', 'amount']);
      expect(s.outcome).to.deep.equal({
        state: 'conflict',
        signature: null,
        slot: 42n,
        conflict: {
          mismatches: s.mismatches,
          opAccount: {
            opId: OP,
            merchant: 'Merchant',
            recipient: 'Other',
            mint: 'Mint',
            amount: '5',
            slot: '42',
          },
        },
        error: 'the op account records other terms than this row',
      });
    });
  });

  describe('naming the winner', () => {
    it('among our attempts: the one found settled without error', () => {
      const as = [attempt(1), attempt(2), attempt(3)];
      const st: SignatureStatus[] = [landed(3n, { Custom: 1 }), { found: true, settled: false, slot: 4n }, landed(5n)];
      expect(winnerAmongAttempts(as, st)).to.deep.equal({ signature: 'sig3', slot: 5n });
      expect(winnerAmongAttempts(as, [NOT_FOUND, NOT_FOUND, NOT_FOUND])).to.equal(null);
    });
    it("in the op account's history: the success in its creation slot, else the first success", () => {
      const h = [
        { signature: 'x' as Signature, slot: 40n, err: { Custom: 0 } as never },
        { signature: 'y' as Signature, slot: 41n, err: null },
        { signature: 'z' as Signature, slot: 42n, err: null },
      ];
      expect(winnerInHistory(h, op())).to.deep.equal({ signature: 'z', slot: 42n });
      expect(winnerInHistory(h, op({ slot: 99n }))).to.deep.equal({ signature: 'y', slot: 41n });
      expect(winnerInHistory(h.slice(0, 1), op())).to.equal(null);
    });
  });
});
