// What every merchant / vault / exception command shares: its chain flags and the SDK's OncePay it runs on (from
// DATABASE_URL, ONCEPAY_DB_SCHEMA and --rpc).
import { Command, Option } from 'commander';
import { addressOption, pollMsOption, rpcOption } from './options';
import { ONCEPAY_PROGRAM_ID } from '../app/program/idl';
import { OncePay } from '../sdk/oncepay';

export interface ChainFlags {
  rpc?: string;
  program: string;
  commitment: 'confirmed' | 'finalized';
  pollMs: number;
  json?: boolean;
}

/** --rpc (required when `needsRpc`), --program, --commitment, --poll-ms, --json. */
export function chainFlags(c: Command, needsRpc = true): Command {
  return c
    .addOption(rpcOption({ required: needsRpc }))
    .addOption(addressOption('--program <address>', 'oncepay program id').default(ONCEPAY_PROGRAM_ID))
    .addOption(
      new Option('--commitment <level>', 'commitment at which a transaction counts as landed')
        .choices(['confirmed', 'finalized'])
        .default('confirmed'),
    )
    .addOption(pollMsOption())
    .option('--json', 'one-line JSON output');
}

/** Run `use` on an OncePay for these flags (database from DATABASE_URL / ONCEPAY_DB_SCHEMA), closed afterwards. */
export async function withOncePay<T>(f: ChainFlags, use: (o: OncePay) => Promise<T>): Promise<T> {
  const o = OncePay.connect({
    databaseUrl: process.env.DATABASE_URL || undefined,
    schema: process.env.ONCEPAY_DB_SCHEMA || undefined,
    rpcUrl: f.rpc,
    programId: f.program,
    commitment: f.commitment,
    pollIntervalMs: f.pollMs,
  });
  try {
    return await use(o);
  } finally {
    await o.close();
  }
}
