// Pure: what Agave 3.1's cost model and account loader say about one transaction, from its wire form and the
// accounts it loaded — `meta.costUnits` (getTransaction) and `loadedAccountsDataSize` (simulation results).
// Constants from solana-cost-model 3.1 (block_cost_limits.rs), solana-fee-structure and solana-svm's
// account_loader.rs (SIMD-186, formalize_loaded_transaction_data_size, active on a 3.1 test validator).
import bs58 from 'bs58';
import type { AccountSnapshot } from './encode';
import { LoadedAddresses, WireTransaction, allAccountKeys, isWritable } from './wire';

const SIGNATURE_COST = 720n; // 30 × 24
const WRITE_LOCK_UNITS = 300n; // 30 × 10
const INSTRUCTION_DATA_BYTES_COST = 4; // 140 bytes per µs / 30 CU per µs, in integers
const ACCOUNT_DATA_COST_PAGE_SIZE = 32 * 1024;
const HEAP_COST = 8n; // DEFAULT_HEAP_COST per page
/** Every account a transaction loads counts its data length plus this. */
const TRANSACTION_ACCOUNT_BASE_SIZE = 64;
/** Every address lookup table a v0 transaction names counts this. */
const ADDRESS_LOOKUP_TABLE_BASE_SIZE = 8248;
const BPF_LOADER_UPGRADEABLE_ID = 'BPFLoaderUpgradeab1e11111111111111111111111';
const NATIVE_LOADER_ID = 'NativeLoader1111111111111111111111111111111';
/**
 * A builtin program's account holds its name; where LiteSVM's name differs from the node's, the node's counts
 * (LiteSVM: 'solana_system_program').
 */
const NODE_BUILTIN_NAMES: Record<string, string> = { '11111111111111111111111111111111': 'system_program' };

/**
 * Bytes the account loader counts for this transaction: each account key's data + 64, the programdata of each
 * upgradeable program among them (once, unless it is a key itself), and 8248 per lookup table. A builtin program
 * that is only invoked (read-only, in no instruction's accounts) counts its name alone, without the 64: Agave 3.1's
 * loader takes such a program's size from its program cache (a SOL transfer loads 64 + 64 + 14 = 142 bytes on
 * solana-test-validator 3.1.4, tests/fixtures/golden).
 */
export function loadedAccountsDataSize(
  tx: WireTransaction,
  loaded: LoadedAddresses,
  pre: Array<AccountSnapshot | null>,
  getAccount: (address: string) => AccountSnapshot | null,
): number {
  const keys = allAccountKeys(tx, loaded);
  let size = tx.lookups.length * ADDRESS_LOOKUP_TABLE_BASE_SIZE;
  const counted = new Set<string>();
  const instructionAccounts = new Set(tx.instructions.flatMap((ix) => ix.accounts));
  pre.forEach((a, i) => {
    if (a && a.owner === NATIVE_LOADER_ID) {
      const length = NODE_BUILTIN_NAMES[keys[i]]?.length ?? a.data.length;
      const onlyInvoked = !instructionAccounts.has(i) && !isWritable(tx, loaded, i);
      size += onlyInvoked ? length : TRANSACTION_ACCOUNT_BASE_SIZE + length;
      return;
    }
    size += TRANSACTION_ACCOUNT_BASE_SIZE + (a?.data.length ?? 0);
    // UpgradeableLoaderState::Program: u32 tag 2, then the programdata address.
    if (a && a.owner === BPF_LOADER_UPGRADEABLE_ID && a.data.length >= 36 && a.data[0] === 2) {
      const programdata = bs58.encode(a.data.subarray(4, 36));
      if (keys.includes(programdata) || counted.has(programdata)) return;
      const pd = getAccount(programdata);
      if (pd) {
        size += TRANSACTION_ACCOUNT_BASE_SIZE + pd.data.length;
        counted.add(programdata);
      }
    }
  });
  return size;
}

/**
 * CostModel::calculate_cost_for_executed_transaction(..).sum(): signatures, write locks, instruction data bytes,
 * the executed compute units and the loaded data size in 32 KiB pages. Precompile signatures (secp256k1,
 * ed25519, secp256r1 instructions) are not counted here.
 */
export function costUnits(
  tx: WireTransaction,
  loaded: LoadedAddresses,
  executedUnits: bigint,
  loadedBytes: number,
): bigint {
  const nKeys = allAccountKeys(tx, loaded).length;
  let writeLocks = 0n;
  for (let i = 0; i < nKeys; i++) if (isWritable(tx, loaded, i)) writeLocks++;
  const dataLen = tx.instructions.reduce((n, ix) => n + ix.data.length, 0);
  const pages = BigInt(Math.ceil(loadedBytes / ACCOUNT_DATA_COST_PAGE_SIZE));
  return (
    BigInt(tx.signatures.length) * SIGNATURE_COST +
    writeLocks * WRITE_LOCK_UNITS +
    BigInt(Math.floor(dataLen / INSTRUCTION_DATA_BYTES_COST)) +
    executedUnits +
    pages * HEAP_COST
  );
}
