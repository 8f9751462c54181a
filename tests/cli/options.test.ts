// cli/options: the flags every command shares, defined once. Pure: the commander tree bin/oncepay runs,
// parsed in-process (nothing reaches a database or a node: each case stops at parsing or in a stub action).
import { expect } from 'chai';
import { Command, CommanderError, Option } from 'commander';
import { buildCli } from '../../cli/main';
import { CLUSTER_ENV, intOption, RPC_URL_ENV, rpcOption } from '../../cli/options';
import { serveWorkerRpc } from '../../cli/payout-serve';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Keypair } from '@solana/web3.js';

/** A keypair file the keypair flags accept (read at parse time): mode 600, 64 bytes. */
const KEY_FILE = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-cli-options-')), 'k.json');
fs.writeFileSync(KEY_FILE, JSON.stringify([...Keypair.generate().secretKey]), { mode: 0o600 });
after(() => fs.rmSync(path.dirname(KEY_FILE), { recursive: true, force: true }));

/** Every command below `c`, with its path ("payout worker"). */
function allCommands(c: Command, prefix: string[] = []): Array<{ path: string; cmd: Command }> {
  return c.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return [{ path: path.join(' '), cmd: sub }, ...allCommands(sub, path)];
  });
}

function optionOf(cmd: Command, long: string): Option | undefined {
  return cmd.options.find((o) => o.long === long);
}

/** The tree with every exit turned into a thrown CommanderError and commander's own output silenced. */
function quietCli(): Command {
  const root = buildCli();
  const walk = (c: Command) => {
    c.exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
    c.commands.forEach(walk);
  };
  walk(root);
  return root;
}

/** Parses `args`; the action of `path` (if reached) is replaced by one that records the options it got. */
async function parse(args: string[], path: string, env: Record<string, string | undefined> = {}) {
  const root = quietCli();
  const target = allCommands(root).find((c) => c.path === path)!.cmd;
  let seen: Record<string, unknown> | undefined;
  target.action(function (this: Command) {
    seen = this.opts();
  });
  const saved: Record<string, string | undefined> = {};
  for (const k of Object.keys(env)) {
    saved[k] = process.env[k];
    if (env[k] === undefined) delete process.env[k];
    else process.env[k] = env[k];
  }
  try {
    await root.parseAsync(['node', 'oncepay', ...args]);
    return { opts: seen, error: undefined as CommanderError | undefined };
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    return { opts: seen, error: e };
  } finally {
    for (const k of Object.keys(saved)) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

describe('cli/options: shared flags, defined once', () => {
  it('intOption takes whole decimal numbers only (no exponent, fraction or sign) and names the flag', () => {
    const p = intOption('--batch-size', 1);
    expect(p('1000')).to.equal(1000);
    for (const bad of ['1e3', '0.5', '-1', '0', '', ' 1', '0x10', '9007199254740993'])
      expect(() => p(bad), bad).to.throw(/--batch-size must be an integer ≥ 1/);
  });

  it('every command with --rpc reads it from ONCEPAY_RPC_URL when the flag is absent, and its --help says so', () => {
    const withRpc = allCommands(buildCli()).filter((c) => optionOf(c.cmd, '--rpc'));
    const paths = withRpc.map((c) => c.path).sort();
    // The payout commands, the sources, and the SDK's merchant / vault / exception commands.
    for (const p of [
      'payout execute',
      'payout resume',
      'payout serve',
      'payout worker',
      'indexer run',
      'indexer backfill',
    ])
      expect(paths).to.include(p);
    expect(paths.filter((p) => p.startsWith('merchant ')).length).to.be.greaterThan(0);
    for (const { path, cmd } of withRpc) {
      expect(optionOf(cmd, '--rpc')!.envVar, path).to.equal(RPC_URL_ENV);
      expect(cmd.helpInformation().replace(/\s+/g, ' '), path).to.contain('env: ONCEPAY_RPC_URL)');
    }
  });

  it('a payout command needs --rpc only when ONCEPAY_RPC_URL is unset; the flag wins over the variable', async () => {
    const args = ['payout', 'execute', '1', '--authority', KEY_FILE];
    const missing = await parse(args, 'payout execute', { [RPC_URL_ENV]: undefined });
    expect(missing.error?.code).to.equal('commander.missingMandatoryOptionValue');
    expect(missing.opts).to.equal(undefined);
    const fromEnv = await parse(args, 'payout execute', { [RPC_URL_ENV]: 'http://env.example:8899' });
    expect(fromEnv.error).to.equal(undefined);
    expect(fromEnv.opts?.rpc).to.equal('http://env.example:8899');
    const flag = await parse([...args, '--rpc', 'http://flag.example:8899'], 'payout execute', {
      [RPC_URL_ENV]: 'http://env.example:8899',
    });
    expect(flag.opts?.rpc).to.equal('http://flag.example:8899');
    const worker = await parse(['payout', 'worker', '--authority', KEY_FILE], 'payout worker', {
      [RPC_URL_ENV]: 'http://env.example:8899',
    });
    expect(worker.opts?.rpc).to.equal('http://env.example:8899');
  });

  it('the sources fall back to the variable, then to the local node', async () => {
    const env = await parse(['indexer', 'run'], 'indexer run', { [RPC_URL_ENV]: 'http://env.example:8899' });
    expect(env.opts?.rpc).to.equal('http://env.example:8899');
    const none = await parse(['indexer', 'backfill', '--from-slot', '1', '--to-slot', '2'], 'indexer backfill', {
      [RPC_URL_ENV]: undefined,
    });
    expect(none.opts?.rpc).to.equal('http://127.0.0.1:8899');
  });

  it('--cluster of ingest and of the sources comes from ONCEPAY_CLUSTER, else localnet', async () => {
    const ingest = await parse(['ingest', 'f.json'], 'ingest', { [CLUSTER_ENV]: 'devnet' });
    expect(ingest.opts?.cluster).to.equal('devnet');
    const run = await parse(['indexer', 'run'], 'indexer run', { [CLUSTER_ENV]: undefined });
    expect(run.opts?.cluster).to.equal('localnet');
    for (const path of ['ingest', 'indexer run', 'indexer backfill']) {
      const cmd = allCommands(buildCli()).find((c) => c.path === path)!.cmd;
      expect(cmd.helpInformation().replace(/\s+/g, ' '), path).to.contain('env: ONCEPAY_CLUSTER)');
    }
  });

  it('integer flags of ingest and outbox run refuse an exponent or a fraction at parse time', async () => {
    for (const [args, path] of [
      [['ingest', 'f.json', '--batch-size', '1e3'], 'ingest'],
      [['outbox', 'run', '--lease-seconds', '0.5'], 'outbox run'],
      [['outbox', 'run', '--poll-ms', '1e3'], 'outbox run'],
      [['outbox', 'run', '--metrics-port', '80.5'], 'outbox run'],
    ] as Array<[string[], string]>) {
      const r = await parse(args, path);
      expect(r.error?.code, args.join(' ')).to.equal('commander.invalidArgument');
      expect(r.opts, args.join(' ')).to.equal(undefined);
    }
    const ok = await parse(['outbox', 'run', '--lease-seconds', '0', '--batch-size', '5'], 'outbox run');
    expect(ok.opts).to.include({ leaseSeconds: 0, batchSize: 5 });
  });

  it('every integer flag of every command is parsed by intOption (was Number(): NaN for "abc", 80.5 accepted)', async () => {
    const integral = /(port|hours|-ms|seconds|size|concurrency|failures|depth|limit|count)$/;
    const unparsed = allCommands(buildCli()).flatMap(({ path, cmd }) =>
      cmd.options
        .filter((o) => o.long && integral.test(o.long) && o.required && !o.parseArg)
        .map((o) => `${path} ${o.long}`),
    );
    expect(unparsed).to.deep.equal([]);
    for (const [args, path] of [
      [['payout', 'serve', '--port', '80.5'], 'payout serve'],
      [['payout', 'prune-keys', '--hours', 'abc'], 'payout prune-keys'],
    ] as Array<[string[], string]>) {
      const r = await parse(args, path);
      expect(r.error?.code, args.join(' ')).to.equal('commander.invalidArgument');
    }
    expect((await parse(['payout', 'prune-keys'], 'payout prune-keys')).opts).to.include({ hours: 24 });
    expect((await parse(['payout', 'serve'], 'payout serve')).opts).to.include({ port: 8080 });
  });

  it('rpcOption: required, fallback and description as asked', () => {
    expect(rpcOption({ required: true }).mandatory).to.equal(true);
    expect(rpcOption({ fallback: 'http://x' }).defaultValue).to.equal('http://x');
    expect(rpcOption().description).to.equal('Solana JSON-RPC endpoint');
  });
});

describe('cli/payout-serve: --rpc with --authority, ONCEPAY_RPC_URL standing for --rpc', () => {
  it('runs a worker pool only with --authority; a typed --rpc alone or --authority with no endpoint is refused', () => {
    expect(serveWorkerRpc(undefined, undefined, undefined)).to.equal(undefined);
    expect(serveWorkerRpc('http://env', undefined, 'env')).to.equal(undefined);
    expect(serveWorkerRpc('http://env', 'k.json', 'env')).to.equal('http://env');
    expect(serveWorkerRpc('http://flag', 'k.json', 'cli')).to.equal('http://flag');
    expect(() => serveWorkerRpc('http://flag', undefined, 'cli')).to.throw('--rpc and --authority go together');
    expect(() => serveWorkerRpc(undefined, 'k.json', undefined)).to.throw('--rpc and --authority go together');
  });
});

describe('cli/options: --poll-ms and --timeout-ms of the payout and SDK commands', () => {
  it('are whole numbers of milliseconds, refused at parse time otherwise (was NaN: a busy loop or an instant abort)', async () => {
    const cases: Array<[string[], string]> = [
      [['payout', 'execute', '1', '--rpc', 'http://x', '--authority', KEY_FILE], 'payout execute'],
      [['payout', 'worker', '--rpc', 'http://x', '--authority', KEY_FILE], 'payout worker'],
      [['merchant', 'show', '--rpc', 'http://x'], 'merchant show'],
    ];
    for (const [args, path] of cases) {
      for (const bad of ['abc', '1e3', '0.5']) {
        const r = await parse([...args, '--poll-ms', bad], path);
        expect(r.error?.code, `${path} --poll-ms ${bad}`).to.equal('commander.invalidArgument');
      }
      const ok = await parse(args, path);
      expect(ok.opts?.pollMs, path).to.equal(400);
    }
    const t = await parse([...cases[0][0], '--timeout-ms', '1e3'], 'payout execute');
    expect(t.error?.code).to.equal('commander.invalidArgument');
    const good = await parse([...cases[0][0], '--timeout-ms', '2500', '--poll-ms', '20'], 'payout execute');
    expect(good.opts).to.include({ timeoutMs: 2500, pollMs: 20 });
  });
});
