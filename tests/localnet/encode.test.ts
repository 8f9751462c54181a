// Pure modules of the localnet, without I/O: JSON with exact u64s, error shapes, token layouts, meta building,
// transaction encodings, instruction parsing, lookup resolution, fault rules.
import { expect } from 'chai';
import { Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import {
  AccountLayout,
  MintLayout,
  TOKEN_PROGRAM_ID,
  createTransferCheckedInstruction,
  createTransferCheckedWithFeeInstruction,
  TOKEN_2022_PROGRAM_ID,
} from '@solana/spl-token';
import bs58 from 'bs58';
import {
  buildMeta,
  encodeAccount,
  encodeMeta,
  encodeTransaction,
  isExecutionError,
  toRpcTxError,
  tokenBalances,
  txErrorMessage,
  AccountSnapshot,
} from '../../localnet/encode';
import { costUnits, loadedAccountsDataSize } from '../../localnet/cost';
import { parseLedger, stringifyLedger, stringifyRpc } from '../../localnet/json';
import { parseInstruction, type ParsedIx } from '../../localnet/parsed';
import { decodeMint, decodeTokenAccount, formatUiAmount } from '../../localnet/token-state';
import { decodeWireTransaction, isWritable, lookupTableAddresses, resolveLookups } from '../../localnet/wire';
import { createResponseFaults } from '../../localnet/faults';
import { messageFee } from '../../localnet/fee';
import { ComputeBudgetProgram, TransactionMessage } from '@solana/web3.js';
import { isOncepayError } from '../../common/errors';

// Stand-ins named like LiteSVM's native classes (toRpcTxError reads the class name and fields).
class TransactionErrorInstructionError {
  constructor(
    public index: number,
    private e: unknown,
  ) {}
  err(): unknown {
    return this.e;
  }
}
class InstructionErrorCustom {
  constructor(public code: number) {}
}
class TransactionErrorInsufficientFundsForRent {
  constructor(public accountIndex: number) {}
}

function tokenAccountBytes(mint: PublicKey, owner: PublicKey, amount: bigint): Uint8Array {
  const b = Buffer.alloc(AccountLayout.span);
  AccountLayout.encode(
    {
      mint,
      owner,
      amount,
      delegateOption: 0,
      delegate: PublicKey.default,
      state: 1,
      isNativeOption: 0,
      isNative: 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: 0,
      closeAuthority: PublicKey.default,
    },
    b,
  );
  return Uint8Array.from(b);
}

function mintBytes(authority: PublicKey, supply: bigint, decimals: number): Uint8Array {
  const b = Buffer.alloc(MintLayout.span);
  MintLayout.encode(
    {
      mintAuthorityOption: 1,
      mintAuthority: authority,
      supply,
      decimals,
      isInitialized: true,
      freezeAuthorityOption: 0,
      freezeAuthority: PublicKey.default,
    },
    b,
  );
  return Uint8Array.from(b);
}

describe('localnet pure: json', () => {
  it('writes u64 values above 2^53 digit for digit, and the ledger format round-trips bigints', () => {
    const v = { lamports: 18446744073709551615n, list: [9007199254740993n], s: 'x' };
    expect(stringifyRpc(v)).to.equal('{"lamports":18446744073709551615,"list":[9007199254740993],"s":"x"}');
    expect(parseLedger(stringifyLedger(v))).to.deep.equal(v);
  });
});

describe('localnet pure: errors', () => {
  it('maps LiteSVM errors to the RPC shape and the node message', () => {
    const custom = toRpcTxError(new TransactionErrorInstructionError(0, new InstructionErrorCustom(6000)));
    expect(custom).to.deep.equal({ InstructionError: [0, { Custom: 6000 }] });
    expect(txErrorMessage(custom)).to.equal('Error processing Instruction 0: custom program error: 0x1770');
    const fieldless = toRpcTxError(new TransactionErrorInstructionError(2, 1));
    expect(fieldless).to.deep.equal({ InstructionError: [2, 'InvalidArgument'] });
    expect(toRpcTxError(7)).to.equal('BlockhashNotFound');
    expect(toRpcTxError(6)).to.equal('AlreadyProcessed');
    expect(txErrorMessage('BlockhashNotFound')).to.equal('Blockhash not found');
    const rent = toRpcTxError(new TransactionErrorInsufficientFundsForRent(1));
    expect(rent).to.deep.equal({ InsufficientFundsForRent: { account_index: 1 } });
    expect(isExecutionError(custom)).to.equal(true);
    expect(isExecutionError(rent)).to.equal(true);
    expect(isExecutionError('BlockhashNotFound')).to.equal(false);
  });
});

describe('localnet pure: token layouts', () => {
  it('decodes token accounts and mints; formats ui amounts like the RPC', () => {
    const mint = Keypair.generate().publicKey;
    const owner = Keypair.generate().publicKey;
    const t = decodeTokenAccount(TOKEN_PROGRAM_ID.toBase58(), tokenAccountBytes(mint, owner, 18446744073709551615n));
    expect(t).to.deep.include({
      mint: mint.toBase58(),
      owner: owner.toBase58(),
      amount: 18446744073709551615n,
      state: 'initialized',
      delegate: null,
    });
    expect(decodeTokenAccount('11111111111111111111111111111111', tokenAccountBytes(mint, owner, 1n))).to.equal(null);
    const m = decodeMint(TOKEN_PROGRAM_ID.toBase58(), mintBytes(owner, 5n, 9));
    expect(m).to.deep.include({ decimals: 9, supply: 5n, mintAuthority: owner.toBase58(), freezeAuthority: null });
    expect(formatUiAmount(1_500_000n, 6)).to.equal('1.5');
    expect(formatUiAmount(0n, 6)).to.equal('0');
    expect(formatUiAmount(1n, 9)).to.equal('0.000000001');
    expect(formatUiAmount(18446744073709551615n, 0)).to.equal('18446744073709551615');
  });
});

describe('localnet pure: meta and encodings', () => {
  const payer = Keypair.generate();
  const mint = Keypair.generate().publicKey;
  const alice = Keypair.generate().publicKey;
  const src = Keypair.generate().publicKey;
  const dst = Keypair.generate().publicKey;
  const tx = new Transaction({
    feePayer: payer.publicKey,
    recentBlockhash: Keypair.generate().publicKey.toBase58(),
  }).add(createTransferCheckedInstruction(src, mint, dst, payer.publicKey, 250n, 2));
  tx.sign(payer);
  const wire = decodeWireTransaction(tx.serialize());
  const keys = wire.staticKeys;
  const acct = (data: Uint8Array, owner = TOKEN_PROGRAM_ID.toBase58()): AccountSnapshot => ({
    lamports: 2039280n,
    owner,
    data,
    executable: false,
    rentEpoch: 0n,
  });

  it('builds pre/post balances, token balances and grouped inner instructions', () => {
    const pre = keys.map((k) =>
      k === src.toBase58()
        ? acct(tokenAccountBytes(mint, payer.publicKey, 1000n))
        : k === payer.publicKey.toBase58()
          ? { ...acct(new Uint8Array(0), '11111111111111111111111111111111'), lamports: 10_000n }
          : null,
    );
    const post = keys.map((k) =>
      k === src.toBase58()
        ? acct(tokenAccountBytes(mint, payer.publicKey, 750n))
        : k === dst.toBase58()
          ? acct(tokenAccountBytes(mint, alice, 250n))
          : k === payer.publicKey.toBase58()
            ? { ...acct(new Uint8Array(0), '11111111111111111111111111111111'), lamports: 5_000n }
            : null,
    );
    const meta = buildMeta({
      keys,
      pre,
      post,
      decimalsOf: () => 2,
      err: null,
      fee: 5000n,
      logs: ['l'],
      computeUnits: 10n,
      costUnits: 1_766n,
      loaded: { writable: [], readonly: [] },
      inner: [[{ programIdIndex: 1, accounts: [0, 2], data: Uint8Array.from([2, 0, 0, 0]), stackHeight: 2 }], []],
    });
    const srcIdx = keys.indexOf(src.toBase58());
    const dstIdx = keys.indexOf(dst.toBase58());
    expect(meta.preTokenBalances.map((b) => b.accountIndex)).to.deep.equal([srcIdx]);
    expect(meta.postTokenBalances.find((b) => b.accountIndex === dstIdx)).to.deep.equal({
      accountIndex: dstIdx,
      mint: mint.toBase58(),
      owner: alice.toBase58(),
      programId: TOKEN_PROGRAM_ID.toBase58(),
      uiTokenAmount: { amount: '250', decimals: 2, uiAmount: 2.5, uiAmountString: '2.5' },
    });
    expect(meta.innerInstructions).to.deep.equal([
      {
        index: 0,
        instructions: [
          { programIdIndex: 1, accounts: [0, 2], data: bs58.encode(Uint8Array.from([2, 0, 0, 0])), stackHeight: 2 },
        ],
      },
    ]);
    expect(meta.preBalances[0]).to.equal(10_000n);
    expect(meta.postBalances[0]).to.equal(5_000n);
    expect(meta.status).to.deep.equal({ Ok: null });
    expect(meta.costUnits).to.equal(1_766n);
    // The ledger's round trip makes a zero uiAmount null (getTransaction); simulation keeps the decoder's 0.
    const empty = [acct(tokenAccountBytes(mint, alice, 0n))];
    expect(tokenBalances(empty, () => 2, true)[0].uiTokenAmount).to.deep.equal({
      amount: '0',
      decimals: 2,
      uiAmount: null,
      uiAmountString: '0',
    });
    expect(tokenBalances(empty, () => 2, false)[0].uiTokenAmount.uiAmount).to.equal(0);
    // jsonParsed resolves inner instruction accounts to addresses.
    const parsed = encodeMeta(meta, wire, 'jsonParsed') as {
      innerInstructions: Array<{ instructions: Array<{ programId: string; accounts?: string[] }> }>;
      loadedAddresses?: unknown;
    };
    expect(parsed.innerInstructions[0].instructions[0].programId).to.equal(keys[1]);
    expect(parsed.loadedAddresses).to.equal(undefined);
  });

  it("costs a transaction as Agave 3.1's cost model: signatures, write locks, data bytes, units, loaded pages", () => {
    // payer (signer, writable), src and dst (writable), mint and the token program (read-only).
    const none = { writable: [], readonly: [] };
    const states = keys.map((k) =>
      k === src.toBase58() || k === dst.toBase58()
        ? acct(new Uint8Array(165))
        : k === mint.toBase58()
          ? acct(new Uint8Array(82))
          : k === TOKEN_PROGRAM_ID.toBase58()
            ? { ...acct(new Uint8Array(40_000), 'BPFLoader2111111111111111111111111111111111'), executable: true }
            : acct(new Uint8Array(0), '11111111111111111111111111111111'),
    );
    // 5 accounts × 64 + 165 + 165 + 82 + 40 000 = 40 732 bytes: two 32 KiB pages.
    const bytes = loadedAccountsDataSize(wire, none, states, () => null);
    expect(bytes).to.equal(40_732);
    // 720 (1 signature) + 3 × 300 (write locks) + floor(10 data bytes / 4) + 6 000 units + 2 pages × 8.
    expect(costUnits(wire, none, 6_000n, bytes)).to.equal(720n + 900n + 2n + 6_000n + 16n);
  });

  it("counts the System program as a 3.1 node loads it: its name 'system_program', alone when only invoked", () => {
    // As recorded from solana-test-validator 3.1.4 (tests/fixtures/golden): a SOL transfer loads 142 bytes, payer and
    // recipient 64 each plus the invoked System program's 14 (LiteSVM's account holds 'solana_system_program').
    const [from, to] = [Keypair.generate(), Keypair.generate()];
    const none = { writable: [], readonly: [] };
    const native = 'NativeLoader1111111111111111111111111111111';
    const sys = { ...acct(new TextEncoder().encode('solana_system_program'), native), executable: true };
    const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: bs58.encode(new Uint8Array(32).fill(1)) });
    tx.add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to.publicKey, lamports: 1 })).sign(from);
    const w = decodeWireTransaction(tx.serialize());
    const pre = w.staticKeys.map((k) => (k === SystemProgram.programId.toBase58() ? sys : null));
    expect(loadedAccountsDataSize(w, none, pre, () => null)).to.equal(142);
    // Passed to an instruction as an account (as Anchor passes system_program), it counts 64 + 14.
    const asAccount = new Transaction({ feePayer: from.publicKey, recentBlockhash: tx.recentBlockhash });
    asAccount.add(
      SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to.publicKey, lamports: 1 }),
      new TransactionInstruction({
        programId: SystemProgram.programId,
        keys: [{ pubkey: SystemProgram.programId, isSigner: false, isWritable: false }],
        data: Buffer.alloc(0),
      }),
    );
    asAccount.sign(from);
    const w2 = decodeWireTransaction(asAccount.serialize());
    const pre2 = w2.staticKeys.map((k) => (k === SystemProgram.programId.toBase58() ? sys : null));
    expect(loadedAccountsDataSize(w2, none, pre2, () => null)).to.equal(64 + 64 + 64 + 14);
  });

  it('encodes the transaction as json (compiled), jsonParsed and base64', () => {
    const json = encodeTransaction(wire, { writable: [], readonly: [] }, 'json') as {
      message: { accountKeys: string[]; instructions: Array<{ data: string }>; addressTableLookups?: unknown };
    };
    expect(json.message.accountKeys).to.deep.equal(keys);
    expect(json.message.addressTableLookups).to.equal(undefined);
    expect(bs58.decode(json.message.instructions[0].data)[0]).to.equal(12);
    // Agave 3.1 gives top-level instructions the transaction level, 1 (not null), in json and jsonParsed.
    expect(json.message.instructions.map((i) => (i as { stackHeight?: unknown }).stackHeight)).to.deep.equal([1]);
    const p = encodeTransaction(wire, { writable: [], readonly: [] }, 'jsonParsed') as {
      message: {
        accountKeys: Array<{ pubkey: string; signer: boolean; writable: boolean }>;
        instructions: Array<{ parsed: { type: string; info: Record<string, unknown> } }>;
      };
    };
    expect(p.message.accountKeys[0]).to.deep.equal({
      pubkey: payer.publicKey.toBase58(),
      signer: true,
      writable: true,
      source: 'transaction',
    });
    expect(p.message.instructions[0].parsed.type).to.equal('transferChecked');
    expect((p.message.instructions[0] as { stackHeight?: unknown }).stackHeight).to.equal(1);
    expect(p.message.instructions[0].parsed.info.tokenAmount).to.deep.equal({
      amount: '250',
      decimals: 2,
      uiAmount: 2.5,
      uiAmountString: '2.5',
    });
    const b64 = encodeTransaction(wire, { writable: [], readonly: [] }, 'base64') as [string, string];
    expect(Buffer.from(b64[0], 'base64').equals(tx.serialize())).to.equal(true);
  });

  it('encodes accounts as base64, base58 and jsonParsed token accounts', () => {
    const a = acct(tokenAccountBytes(mint, alice, 42n));
    const parsed = encodeAccount(a, 'jsonParsed', () => 1) as {
      data: { program: string; parsed: { type: string; info: { tokenAmount: { uiAmountString: string } } } };
    };
    expect(parsed.data.program).to.equal('spl-token');
    expect(parsed.data.parsed.info.tokenAmount.uiAmountString).to.equal('4.2');
    const sliced = encodeAccount(a, 'base64', () => 1, { offset: 0, length: 32 }) as {
      data: [string, string];
      space: number;
    };
    expect(Buffer.from(sliced.data[0], 'base64').equals(mint.toBuffer())).to.equal(true);
    expect(sliced.space).to.equal(165);
  });
});

describe('localnet pure: instruction parsing', () => {
  it('parses System transfer, SPL transferChecked(WithFee); anything else stays partially decoded', () => {
    const [a, b] = [Keypair.generate().publicKey, Keypair.generate().publicKey];
    const sys = SystemProgram.transfer({ fromPubkey: a, toPubkey: b, lamports: 123 });
    const ps = parseInstruction(
      sys.programId.toBase58(),
      sys.keys.map((k) => k.pubkey.toBase58()),
      sys.data,
      null,
    );
    expect(ps).to.deep.equal({
      program: 'system',
      programId: '11111111111111111111111111111111',
      parsed: { type: 'transfer', info: { source: a.toBase58(), destination: b.toBase58(), lamports: 123n } },
      stackHeight: null,
    });
    const mint = Keypair.generate().publicKey;
    const fee = createTransferCheckedWithFeeInstruction(a, mint, b, a, 1000n, 3, 10n, [], TOKEN_2022_PROGRAM_ID);
    const pf = parseInstruction(
      fee.programId.toBase58(),
      fee.keys.map((k) => k.pubkey.toBase58()),
      fee.data,
      2,
    ) as ParsedIx;
    expect(pf.program).to.equal('spl-token-2022');
    expect(pf.parsed.type).to.equal('transferCheckedWithFee');
    expect(pf.parsed.info).to.have.nested.property('tokenAmount.amount', '1000');
    expect(pf.parsed.info).to.have.nested.property('feeAmount.amount', '10');
    const unknown = parseInstruction(a.toBase58(), [b.toBase58()], Uint8Array.from([1, 2, 3]), 1);
    expect(unknown).to.deep.equal({
      programId: a.toBase58(),
      accounts: [b.toBase58()],
      data: bs58.encode(Uint8Array.from([1, 2, 3])),
      stackHeight: 1,
    });
  });

  it('names extra accounts after the token authority as multisigAuthority + signers, as the real RPC does', () => {
    const [src, mint, dst, owner, extra] = [0, 1, 2, 3, 4].map(() => Keypair.generate().publicKey.toBase58());
    const data = Uint8Array.from([12, 5, 0, 0, 0, 0, 0, 0, 0, 2]); // transferChecked 5, decimals 2
    const single = parseInstruction(TOKEN_PROGRAM_ID.toBase58(), [src, mint, dst, owner], data, null) as {
      parsed: { info: Record<string, unknown> };
    };
    expect(single.parsed.info.authority).to.equal(owner);
    expect(single.parsed.info).to.not.have.property('signers');
    const multi = parseInstruction(TOKEN_PROGRAM_ID.toBase58(), [src, mint, dst, owner, extra], data, null) as {
      parsed: { info: Record<string, unknown> };
    };
    expect(multi.parsed.info.multisigAuthority).to.equal(owner);
    expect(multi.parsed.info.signers).to.deep.equal([extra]);
    expect(multi.parsed.info).to.not.have.property('authority');
  });

  it("parses getAccountDataSize (the ATA program's first CPI) with its extension types, as a 3.1 node does", () => {
    const mint = Keypair.generate().publicKey.toBase58();
    const token = TOKEN_PROGRAM_ID.toBase58();
    // [21, then u16 LE extension types]: 7 = ImmutableOwner, what the ATA program asks for.
    expect(parseInstruction(token, [mint], Uint8Array.from([21, 7, 0]), 2)).to.deep.equal({
      program: 'spl-token',
      programId: token,
      parsed: { type: 'getAccountDataSize', info: { mint, extensionTypes: ['immutableOwner'] } },
      stackHeight: 2,
    });
    expect(parseInstruction(token, [mint], Uint8Array.from([21]), 2)).to.deep.include({
      parsed: { type: 'getAccountDataSize', info: { mint } },
    });
    // An extension type we do not know, or half of one: left partially decoded.
    expect(parseInstruction(token, [mint], Uint8Array.from([21, 0xff, 0xff]), 2)).to.have.property('data');
    expect(parseInstruction(token, [mint], Uint8Array.from([21, 7]), 2)).to.have.property('data');
  });
});

describe('localnet pure: lookup tables and writability', () => {
  it('reads a table, resolves writable then readonly, rejects bad indexes', () => {
    const addrs = [0, 1, 2].map(() => Keypair.generate().publicKey);
    const header = Buffer.alloc(56);
    header.writeUInt32LE(1, 0);
    const data = Uint8Array.from(Buffer.concat([header, ...addrs.map((x) => x.toBuffer())]));
    const table = lookupTableAddresses(data);
    expect(table).to.deep.equal(addrs.map((x) => x.toBase58()));
    const loaded = resolveLookups([{ accountKey: 'T', writableIndexes: [2], readonlyIndexes: [0] }], () => table);
    expect(loaded).to.deep.equal({ writable: [table[2]], readonly: [table[0]] });
    let err: unknown;
    try {
      resolveLookups([{ accountKey: 'T', writableIndexes: [3], readonlyIndexes: [] }], () => table);
    } catch (e) {
      err = e;
    }
    expect(isOncepayError(err, 'ONCEPAY__LOCALNET__LOOKUP_TABLE_NOT_FOUND')).to.equal(true);
    const payer = Keypair.generate();
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: payer.publicKey.toBase58() }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: addrs[0], lamports: 1 }),
    );
    tx.sign(payer);
    const w = decodeWireTransaction(tx.serialize());
    expect([0, 1, 2].map((i) => isWritable(w, { writable: [], readonly: [] }, i))).to.deep.equal([true, true, false]);
  });

  it('rejects bytes that are not a transaction with a localnet error code', () => {
    let err: unknown;
    try {
      decodeWireTransaction(Uint8Array.from([1, 2, 3]));
    } catch (e) {
      err = e;
    }
    expect(isOncepayError(err, 'ONCEPAY__LOCALNET__MALFORMED_TRANSACTION')).to.equal(true);
  });
});

describe('localnet pure: fault rules', () => {
  it('consumes rules by count and method, in arming order', () => {
    const f = createResponseFaults();
    f.failNext({ kind: '429', method: 'getSlot', count: 2 });
    f.dropNextResponses({ method: 'sendTransaction' });
    expect(f.takeFailure(['getBalance'])).to.equal(null);
    expect(f.takeFailure(['getBalance', 'getSlot'])).to.deep.equal({ kind: '429', delayMs: 2000 });
    expect(f.takeFailure(['getSlot'])!.kind).to.equal('429');
    expect(f.takeFailure(['getSlot'])).to.equal(null);
    expect(f.takeDrop(['sendTransaction'])).to.deep.equal({ mode: 'drop', delayMs: 1000 });
    expect(f.takeDrop(['sendTransaction'])).to.equal(null);
    f.failNext({ kind: '500' });
    f.clear();
    expect(f.takeFailure(['anything'])).to.equal(null);
  });
});

describe('localnet pure: message fee', () => {
  it('charges 5000 per signature plus ceil(price × limit / 10^6)', () => {
    const payer = Keypair.generate().publicKey;
    const other = Keypair.generate().publicKey;
    const bh = Keypair.generate().publicKey.toBase58();
    const transfer = SystemProgram.transfer({ fromPubkey: payer, toPubkey: other, lamports: 1 });
    const plain = new TransactionMessage({
      payerKey: payer,
      recentBlockhash: bh,
      instructions: [transfer],
    }).compileToV0Message();
    expect(messageFee(plain.serialize())).to.deep.equal({ recentBlockhash: bh, fee: 5000n });
    const priced = new TransactionMessage({
      payerKey: payer,
      recentBlockhash: bh,
      instructions: [
        ComputeBudgetProgram.setComputeUnitLimit({ units: 300_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 10_001 }),
        transfer,
      ],
    }).compileToLegacyMessage();
    // 10_001 × 300_000 / 10^6 = 3000.3 → 3001
    expect(messageFee(priced.serialize()).fee).to.equal(5000n + 3001n);
    const twoSigners = new TransactionMessage({
      payerKey: payer,
      recentBlockhash: bh,
      instructions: [
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000 }),
        SystemProgram.transfer({ fromPubkey: other, toPubkey: payer, lamports: 1 }),
      ],
    }).compileToV0Message();
    // No explicit limit: 200_000 units for the one non-compute-budget instruction.
    expect(messageFee(twoSigners.serialize()).fee).to.equal(10_000n + 200_000n);
  });
});
