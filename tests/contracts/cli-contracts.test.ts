// The command line keeps its contract on bad input, table-driven over the whole commander tree bin/oncepay builds:
// every command, every flag that takes a value, every row-id argument, and an unknown flag. Each malformed value is
// refused before anything runs, with a stable ONCEPAY__… code and the flag named (what the CLI prints as its JSON
// error line: cli/main.ts cliErrorLine); a few refusals that need the database name their flag too; and nothing in
// the database changed. A flag added without a row here fails the completeness check.
import { expect } from 'chai';
import { Command, Option } from 'commander';
import { buildCli } from '../../cli/main';
import { schemaSnapshot, testDbAsCliEnv } from './test-db-env';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Keypair } from '@solana/web3.js';
import { CliRefusal, runCli } from './cli-in-process';

const ADDRESS = 'ONCEPAY__PAYOUT__ADDRESS_MALFORMED';
const VALUE = 'ONCEPAY__CLI__VALUE_INVALID';
const USAGE = 'ONCEPAY__CLI__USAGE';

/** A malformed value for a flag, and the code it is refused with; 'free' for a flag whose value is free text. */
type Malformed = { value: string; code: string } | 'free';
const address: Malformed = { value: 'not-an-address', code: ADDRESS };
const int: Malformed = { value: '1e3', code: VALUE };
const choice: Malformed = { value: 'no-such-choice', code: VALUE };

/** By flag; a `<command path> <flag>` key overrides for one command. */
const MALFORMED: Record<string, Malformed> = {
  '--merchant': { value: 'not a merchant!', code: ADDRESS },
  '--mint': address,
  '--recipient': address,
  '--vault': address,
  '--program': address,
  '--token-program': address,
  '--receiving-address': address,
  '--payout-authority': address,
  '--merchant-authority': address,
  '--to': address,
  '--deposit-address': address,
  '--reference': address,
  'invoice create --mint': address,
  // The ledger's own merchant id (invoices.merchant, webhook_endpoints.merchant): free text, 'default' by default.
  'invoice create --merchant': 'free',
  'outbox set-endpoint --merchant': 'free',
  '--amount': { value: '1.5', code: 'ONCEPAY__AMOUNT__MALFORMED' },
  '--payout-id': { value: '\u0007bell', code: 'ONCEPAY__PAYOUT__ID_MALFORMED' },
  '--authority': { value: '/nonexistent/authority.json', code: 'ONCEPAY__PAYOUT__KEYPAIR_MALFORMED' },
  '--payer': { value: '/nonexistent/payer.json', code: 'ONCEPAY__PAYOUT__KEYPAIR_MALFORMED' },
  '--api-key': { value: 'short', code: VALUE },
  '--rpc': { value: 'ftp://node.example', code: VALUE },
  '--grpc': { value: 'ftp://geyser.example', code: VALUE },
  '--ws': { value: 'http://node.example', code: VALUE },
  '--url': { value: 'not a url', code: VALUE },
  '--explorer': { value: 'javascript:alert(1)', code: VALUE },
  '--public-url': { value: 'javascript:alert(1)', code: VALUE },
  '--provider': { value: 'Not A Name', code: 'ONCEPAY__SOURCE__INVALID_OPTION' },
  '--commitment': choice,
  '--executor': choice,
  '--state': choice,
  '--kind': choice,
  '--source': choice,
  'localnet --token-program': choice,
  // Whole numbers (intOption and localnet's own): an exponent is refused.
  ...Object.fromEntries(
    [
      '--port',
      '--metrics-port',
      '--poll-ms',
      '--timeout-ms',
      '--concurrency',
      '--idle-ms',
      '--blockhash-max-age-ms',
      '--max-chain-failures',
      '--drain-ms',
      '--merchants-refresh-ms',
      '--limit',
      '--hours',
      '--batch-size',
      '--lease-seconds',
      '--max-attempts',
      '--backoff-base-ms',
      '--backoff-cap-ms',
      '--rescan-window',
      '--from-slot',
      '--to-slot',
      '--max-slots-per-pass',
      '--chunk-size',
      '--list-span',
      '--rpc-timeout-ms',
      '--rpc-attempts',
      '--signature-tolerance',
      '--hint-max-age',
      '--recheck-ms',
      '--inline-check-ms',
      '--body-limit',
      '--max-pending-hints',
      '--hint-round',
      '--hint-concurrency',
      '--hint-retention',
      '--refresh-ms',
      '--idle-timeout-ms',
      '--ping-ms',
      '--slot-ms',
      '--finality-depth',
      '--grpc-port',
    ].map((f) => [f, int]),
  ),
  // Free text: names, notes, ids, paths of files read when the command runs, secrets (never echoed).
  ...Object.fromEntries(
    [
      '--name',
      '--note',
      '--id',
      '--cluster',
      '--host',
      '--schema',
      '--secret',
      '--secret-file',
      '--x-token',
      '--x-token-file',
      '--invoice',
      'localnet --program',
      '--program-id',
      '--ledger',
      '--data-dir',
      '--dir',
    ].map((f) => [f, 'free' as const]),
  ),
};

/** Every command below `c` that has an action, with its path. */
function leaves(c: Command, prefix: string[] = []): Array<{ path: string[]; cmd: Command }> {
  return c.commands.flatMap((sub) => {
    const p = [...prefix, sub.name()];
    const own = (sub as unknown as { _actionHandler?: unknown })._actionHandler ? [{ path: p, cmd: sub }] : [];
    return [...own, ...leaves(sub, p)];
  });
}

const takesValue = (o: Option) => o.required || o.optional;
/** The commands whose `<id>` is a row id (outbox replay's is an outbox or fulfilment id: free text). */
const ROW_ID_COMMANDS = new Set([
  'payout execute',
  'payout show',
  'payout retry',
  'exception show',
  'exception refund',
  'exception resolve',
]);
const PK = '5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj';
/** A well-formed value for each required flag, so that a case reaches the flag it is about. */
function validValue(flag: string, keyFile: string): string {
  if (flag === '--authority' || flag === '--payer') return keyFile;
  if (flag === '--rpc') return 'http://127.0.0.1:9';
  if (flag === '--url') return 'http://127.0.0.1:9/hook';
  if (flag === '--amount' || flag === '--from-slot' || flag === '--to-slot') return '1';
  if (['--merchant', '--mint', '--recipient', '--vault', '--payout-authority'].includes(flag)) return PK;
  return 'x'; // --name, --note, --id, --payout-id, --secret
}

describe('cli contract: every command refuses malformed input before it runs, naming the flag', function () {
  this.timeout(300_000);
  const db = testDbAsCliEnv('cli_contracts');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-cli-contracts-'));
  const keyFile = path.join(tmp, 'key.json');
  fs.writeFileSync(keyFile, JSON.stringify([...Keypair.generate().secretKey]), { mode: 0o600 });
  const commands = leaves(buildCli());

  const snapshot = () => schemaSnapshot(db());
  const refusal = (args: string[]) =>
    runCli(args).then(
      () => undefined,
      (e: CliRefusal) => e,
    );

  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('every flag that takes a value has a row (a malformed value, or free text)', () => {
    expect(commands.length).to.be.greaterThan(30);
    const missing = commands.flatMap(({ path, cmd }) =>
      cmd.options
        .filter(takesValue)
        .filter((o) => MALFORMED[`${path.join(' ')} ${o.long}`] === undefined && MALFORMED[o.long!] === undefined)
        .map((o) => `${path.join(' ')} ${o.long}`),
    );
    expect(missing, 'flags without a row').to.deep.equal([]);
  });

  it('each malformed flag value, row id and unknown flag is refused with its code, naming the flag; the database is unchanged', async () => {
    const before = await snapshot();
    const wrong: string[] = [];
    let checked = 0;
    for (const { path: cmdPath, cmd } of commands) {
      const name = cmdPath.join(' ');
      // The rest of a well-formed command line: a row id where one is taken, every other required flag.
      const rowId = ROW_ID_COMMANDS.has(name) ? ['1'] : [];
      const required = (but: string) =>
        cmd.options
          .filter((o) => o.mandatory && o.long !== but)
          .flatMap((o) => [o.long!, validValue(o.long!, keyFile)]);
      const cases: Array<{ args: string[]; code: string; flag: string }> = [
        { args: [...rowId, ...required(''), '--no-such-flag'], code: USAGE, flag: '--no-such-flag' },
      ];
      for (const o of cmd.options.filter(takesValue)) {
        const m = MALFORMED[`${name} ${o.long}`] ?? MALFORMED[o.long!];
        if (m !== 'free')
          cases.push({ args: [...rowId, ...required(o.long!), o.long!, m.value], code: m.code, flag: o.long! });
      }
      if (rowId.length > 0) cases.push({ args: ['not-a-row-id', ...required('')], code: VALUE, flag: 'id' });
      const path = cmdPath;
      for (const c of cases) {
        checked += 1;
        const e = await refusal([...path, ...c.args]);
        const got = e && { code: e.code, flag: e.flag, named: e.message.includes(c.flag) };
        if (!got || got.code !== c.code || got.flag !== c.flag || !got.named)
          wrong.push(`oncepay ${path.join(' ')} ${c.args.join(' ')}: ${JSON.stringify(got)} ${e?.message ?? 'ran'}`);
      }
    }
    expect(checked).to.be.greaterThan(150);
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    expect(await snapshot(), 'the database after the refusals').to.equal(before);
  });

  it('refusals that need the database name their flag too, and change nothing', async () => {
    const before = await snapshot();
    const pk = '5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj';
    const cases: Array<{ args: string[]; code: string; flag: string }> = [
      {
        args: [
          'payout',
          'create',
          '--merchant',
          '424242',
          '--payout-id',
          'p',
          '--recipient',
          pk,
          '--mint',
          pk,
          '--amount',
          '1',
        ],
        code: 'ONCEPAY__PAYOUT__MERCHANT_NOT_FOUND',
        flag: '--merchant',
      },
      { args: ['payout', 'list', '--merchant', pk], code: 'ONCEPAY__PAYOUT__MERCHANT_NOT_FOUND', flag: '--merchant' },
      { args: ['payout', 'retry', '--merchant', pk], code: 'ONCEPAY__PAYOUT__OPTION_INVALID', flag: '--all-failed' },
      { args: ['outbox', 'replay'], code: 'ONCEPAY__OUTBOX__INVALID_OPTION', flag: '--all-dead' },
      { args: ['exception', 'resolve', '1', '--note', ' '], code: 'ONCEPAY__EXCEPTION__NOTE_MISSING', flag: '--note' },
    ];
    const wrong: string[] = [];
    for (const c of cases) {
      const e = await refusal(c.args);
      if (!e || e.code !== c.code || e.flag !== c.flag || !e.message.includes(c.flag))
        wrong.push(`oncepay ${c.args.join(' ')}: ${JSON.stringify(e && { code: e.code, flag: e.flag })} ${e?.message}`);
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    expect(await snapshot()).to.equal(before);
  });
});
