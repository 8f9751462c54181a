// The package as a merchant gets it: `npm pack` (which builds it), the tarball installed into a fresh project
// outside the repository, and from there the README's example — compiled as written with the project's own
// tsconfig.json (CommonJS), and run as plain ESM JavaScript — migrates a database, creates and registers a merchant,
// and creates and executes a payout on the localnet, printing its on-chain proof. Run twice: paid once.
import { expect } from 'chai';
import { execFile } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { promisify } from 'util';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { TestNode } from '../../testkit/node';
import { createPool } from '../../db/pool';
import { resolveDatabaseUrl } from '../../db/local-server';
import { merchantAddress } from '../../app/merchant/instructions';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { deriveOperation } from '../../app/op-id';
import { createTokenAccount, send, tokenBalance } from '../../testkit/cluster';
import { Keys, ROOT, createMint, fundedKeypair, startNet } from './helpers';

const run = promisify(execFile);
/** A leftover of an earlier build, planted in dist/ before packing: it must not reach the tarball. */
const STALE = "'use strict';\n//# sourceMappingURL=stale-leftover.js.map\n";
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const TYPES_NODE = `@types/node@${
  (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', '@types', 'node', 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version
}`;

/** The fenced block of `lang` under the heading `heading` in app/README.md. */
function readmeExample(heading: string, lang: string): string {
  const text = fs.readFileSync(path.join(ROOT, 'app', 'README.md'), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`app/README.md has no heading ${heading}`);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(text.slice(at));
  if (!m) throw new Error(`no \`\`\`${lang} block under ${heading}`);
  return m[1];
}

describe('sdk: the packed package, installed into a fresh project (README example, TypeScript and ESM)', function () {
  this.timeout(900_000); // npm pack builds the package; npm install runs from the npm cache
  let net: TestNode;
  let connection: Connection;
  let tmp: string;
  let app: string;
  let files: string[];
  let unpacked: string;
  const keys = new Keys();
  const databases: string[] = [];
  let admin: ReturnType<typeof createPool>; // made in before(): loading the file (mocha --dry-run) starts nothing

  before(async () => {
    admin = createPool({ url: resolveDatabaseUrl(), max: 1 });
    ({ net, connection } = await startNet());
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-pkg-'));
    // Whatever was built before must not matter: a leftover of an earlier build (a module since deleted, with a
    // source map comment) and an incremental build-info in dist/ — as `make build` and an old prepack left them.
    fs.mkdirSync(path.join(ROOT, 'dist', 'app'), { recursive: true });
    fs.writeFileSync(path.join(ROOT, 'dist', 'app', 'stale-leftover.js'), STALE);
    fs.writeFileSync(path.join(ROOT, 'dist', '.tsbuildinfo.build'), '{"program":{}}');
    const packed = await run('npm', ['pack', '--json', '--pack-destination', tmp, '--loglevel=error'], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    });
    const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    files = info[0].files.map((f) => f.path);
    unpacked = path.join(tmp, 'unpacked');
    fs.mkdirSync(unpacked);
    await run('tar', ['-xzf', path.join(tmp, info[0].filename), '-C', unpacked]);
    app = path.join(tmp, 'merchant-app');
    fs.mkdirSync(app);
    fs.writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'merchant-app', version: '1.0.0', private: true }),
    );
    await run(
      'npm',
      [
        'install',
        path.join(tmp, info[0].filename),
        TYPES_NODE,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ],
      { cwd: app, maxBuffer: 64 << 20 },
    );
  });
  after(async () => {
    for (const d of databases) await admin?.query(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`);
    await admin?.end();
    await net?.stop();
    keys.remove();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the tarball holds only what a merchant runs: compiled code, declarations, migrations, the CLI, docs', () => {
    expect(files).to.include.members([
      'package.json',
      'README.md',
      'CHANGELOG.md',
      'LICENSE',
      'bin/oncepay',
      'dist/sdk/index.js',
      'dist/sdk/index.d.ts',
      'sdk/index.mjs',
      'migrations/0140_exception_resolutions.sql',
      'dist/cli/main.js',
    ]);
    const stray = files.filter(
      (f) =>
        /^(dist\/)?(tests|testkit|bench|toolchain|programs|demo|scripts)\//.test(f) ||
        /^localnet\//.test(f) ||
        /\.map$|tsbuildinfo/.test(f) ||
        (f.endsWith('.ts') && !f.endsWith('.d.ts')),
    );
    expect(stray).to.deep.equal([]);
    const pkg = JSON.parse(fs.readFileSync(path.join(app, 'node_modules', 'oncepay', 'package.json'), 'utf8'));
    for (const dev of ['mocha', 'chai', 'litesvm', 'solana-bankrun', 'ts-node', 'typescript'])
      expect(pkg.dependencies).to.not.have.property(dev);
    // The program interface is read from the IDL at run time by Anchor's coder (app/program/idl.ts).
    expect(pkg.dependencies).to.include({ '@coral-xyz/anchor': '0.32.1' });
  });

  it('packed from a clean build whatever was built before: no leftover, no build-info, no source-map comment without its map', () => {
    expect(files).to.not.include('dist/app/stale-leftover.js');
    expect(files.filter((f) => /tsbuildinfo/.test(f))).to.deep.equal([]);
    const js = files.filter((f) => f.endsWith('.js'));
    expect(js.length).to.be.greaterThan(50);
    const dangling = js.filter((f) => {
      const m = /\/\/# sourceMappingURL=(\S+)/.exec(fs.readFileSync(path.join(unpacked, 'package', f), 'utf8'));
      return m !== null && !files.includes(path.posix.join(path.posix.dirname(f), m[1]));
    });
    expect(dangling, 'a sourceMappingURL to a map the package does not ship').to.deep.equal([]);
  });

  it('every command `oncepay --help` lists works from the installed package; localnet and demo are left out, and --help says so', async () => {
    // In one process: the installed CLI's whole command tree, each command's --help text, and every compiled module
    // of the package loaded (a command whose module, or a module it loads on use, is not shipped fails here).
    const probe = `
      const path = require('path');
      const fs = require('fs');
      const root = path.join(process.cwd(), 'node_modules', 'oncepay', 'dist');
      const { buildCli } = require(path.join(root, 'cli', 'main.js'));
      const program = buildCli();
      const commands = [];
      const walk = (c, prefix) => {
        for (const sub of c.commands) {
          const name = [...prefix, sub.name()].join(' ');
          if (!sub.helpInformation().includes('--help')) throw new Error('no --help: ' + name);
          commands.push(name);
          walk(sub, [...prefix, sub.name()]);
        }
      };
      walk(program, []);
      const failed = [];
      const each = (dir) => {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
          const p = path.join(dir, e.name);
          if (e.isDirectory()) each(p);
          else if (e.name.endsWith('.js')) {
            try { require(p); } catch (err) { failed.push(path.relative(root, p) + ': ' + err.message.split('\\n')[0]); }
          }
        }
      };
      each(root);
      console.log(JSON.stringify({ commands, failed, help: program.helpInformation() }));`;
    const out = JSON.parse((await run(process.execPath, ['-e', probe], { cwd: app, maxBuffer: 16 << 20 })).stdout);
    expect(out.failed).to.deep.equal([]);
    expect(out.commands).to.include.members([
      'migrate',
      'indexer run',
      'indexer webhook',
      'indexer stream',
      'payout worker',
      'payout retry',
      'merchant init',
      'exception refund',
    ]);
    expect(out.commands.filter((c: string) => /^(localnet|demo)\b/.test(c))).to.deep.equal([]);
    // The installed binary itself: its --help leaves them out and says where they are.
    const bin = path.join(app, 'node_modules', '.bin', 'oncepay');
    const help = (await run(bin, ['--help'], { cwd: app })).stdout;
    expect(help).to.not.match(/^\s+(localnet|demo)\b/m);
    expect(help.replace(/\s+/g, ' ')).to.contain('Not in the installed package: localnet, demo');
    for (const c of ['payout worker', 'indexer webhook', 'vault check']) {
      const r = await run(bin, [...c.split(' '), '--help'], { cwd: app });
      expect(r.stdout, c).to.contain('Usage: oncepay');
    }
  });

  it('one public entry: require and import give the same names and the same class; internal files are not importable', async () => {
    const probe = `
      const cjs = require('oncepay');
      import('oncepay').then((esm) => {
        const names = (o) => Object.keys(o).filter((k) => k !== 'default' && k !== '__esModule').sort();
        let internal = 'importable';
        try { require('oncepay/dist/app/payout/run-payout'); } catch (e) { internal = e.code; }
        console.log(JSON.stringify({ cjs: names(cjs), esm: names(esm), same: esm.OncePay === cjs.OncePay, internal }));
      });`;
    const out = JSON.parse((await run(process.execPath, ['-e', probe], { cwd: app })).stdout);
    expect(out.esm).to.deep.equal(out.cjs);
    expect(out.cjs).to.include.members(['OncePay', 'readKeypairFile', 'OncepayError', 'refundPayoutId']);
    expect(out.same).to.equal(true);
    expect(out.internal).to.equal('ERR_PACKAGE_PATH_NOT_EXPORTED');
    const help = await run(path.join(app, 'node_modules', '.bin', 'oncepay'), ['exception', '--help'], { cwd: app });
    expect(help.stdout).to.contain('refund');
  });

  /** A fresh database, a funded merchant authority, a mint, the merchant PDA's vault funded, and a recipient. */
  async function world(
    name: string,
  ): Promise<{ env: Record<string, string>; authority: Keypair; recipient: PublicKey }> {
    const db = `oncepay_pkg_${name}_${crypto.randomBytes(3).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${db}`);
    databases.push(db);
    const url = new URL(resolveDatabaseUrl());
    url.pathname = `/${db}`;
    const authority = await fundedKeypair(connection);
    const mint = await createMint(connection, authority);
    const merchant = merchantAddress(new PublicKey(ONCEPAY_PROGRAM_ID), authority.publicKey).merchant;
    const vault = getAssociatedTokenAddressSync(mint, merchant, true);
    await send(
      connection,
      [
        createAssociatedTokenAccountIdempotentInstruction(authority.publicKey, vault, merchant, mint),
        createMintToInstruction(mint, vault, authority.publicKey, 10_000_000n),
      ],
      [authority],
    );
    const recipient = await createTokenAccount(connection, authority, mint, Keypair.generate().publicKey);
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ONCEPAY_LOG_LEVEL: 'warn',
      DATABASE_URL: url.toString(),
      SOLANA_RPC_URL: net.url,
      MERCHANT_KEYPAIR: keys.file(authority, `merchant-${name}`),
      MINT: mint.toBase58(),
      RECIPIENT: recipient.toBase58(),
    };
    return { env, authority, recipient };
  }

  /** Run the example twice: the same payout and proof both times, and the recipient paid once. */
  async function expectPaidOnce(cmd: string[], w: Awaited<ReturnType<typeof world>>): Promise<void> {
    const outputs: string[][] = [];
    for (let i = 0; i < 2; i++) {
      const r = await run(process.execPath, cmd, { cwd: app, env: w.env });
      outputs.push(r.stdout.trim().split(' '));
    }
    const [state, signature, slot, opPda] = outputs[0];
    expect(state).to.equal('succeeded');
    expect(outputs[1]).to.deep.equal(outputs[0]);
    expect(await tokenBalance(connection, w.recipient)).to.equal(2_500_000n);
    const merchant = merchantAddress(new PublicKey(ONCEPAY_PROGRAM_ID), w.authority.publicKey).merchant;
    expect(opPda).to.equal(
      deriveOperation({ programId: ONCEPAY_PROGRAM_ID, merchant: merchant.toBase58(), payoutId: 'payout-99118' }).opPda,
    );
    const op = await connection.getAccountInfo(new PublicKey(opPda));
    expect(op!.owner.toBase58()).to.equal(ONCEPAY_PROGRAM_ID);
    const status = (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0];
    expect(status?.err).to.equal(null);
    expect(slot).to.equal(`${status!.slot}n`); // console.log prints a bigint with its suffix
  }

  it("TypeScript: the README's example compiles as written with the project's own tsconfig.json, and pays once", async () => {
    fs.writeFileSync(path.join(app, 'main.ts'), readmeExample('### In TypeScript', 'ts'));
    fs.writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'node16',
          moduleResolution: 'node16',
          strict: true,
          outDir: 'out',
          types: ['node'],
        },
        files: ['main.ts'],
      }),
    );
    const tsc = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: app }).catch(
      (e: { stdout: string }) => ({ stdout: e.stdout, failed: true }),
    );
    expect(tsc.stdout, tsc.stdout).to.equal('');
    await expectPaidOnce([path.join('out', 'main.js')], await world('ts'));
  });

  it("ESM JavaScript: the README's example runs as written, and pays once", async () => {
    fs.writeFileSync(path.join(app, 'main.mjs'), readmeExample('### In JavaScript (ESM)', 'js'));
    await expectPaidOnce(['main.mjs'], await world('esm'));
  });
});
