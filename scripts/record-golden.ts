// Records the golden scenario (testkit/golden/scenario.ts) against a real solana-test-validator into
// tests/fixtures/golden/validator.json, which tests/localnet/golden.test.ts compares localnet against, and copies the
// program the node ran beside it (recorded-program.so), which that test runs localnet with.
//
//   npx ts-node scripts/record-golden.ts [--validator PATH] [--out FILE] [--rpc-port 28899]
//   npx ts-node scripts/record-golden.ts --rpc http://127.0.0.1:8899 --ws ws://127.0.0.1:8900   # a node already up
//
// Without --rpc it starts the validator itself with the oncepay program in genesis (--bpf-program, the build in
// target/deploy) on its own ports and a fresh ledger, and stops it afterwards.
import { spawn, ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireProgramSo } from '../common/program-binary';
import { ONCEPAY_PROGRAM_ID } from '../localnet/program-ids';
import { runGoldenScenario } from '../testkit/golden/scenario';

const ROOT = path.resolve(__dirname, '..');

function arg(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

async function healthy(url: string, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot', params: [{ commitment: 'finalized' }] }),
      });
      const body = (await res.json()) as { result?: number };
      // Past the first finalized slots: the faucet and the program are ready.
      if (typeof body.result === 'number' && body.result > 2) return;
    } catch {
      // not up yet
    }
    if (Date.now() > end) throw new Error(`record-golden: ${url} not healthy in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function main(): Promise<void> {
  const out = path.resolve(arg('out', path.join(ROOT, 'tests/fixtures/golden/validator.json'))!);
  const so = requireProgramSo();
  let url = arg('rpc');
  let wsUrl = arg('ws');
  let validator: ChildProcess | null = null;
  let ledger: string | null = null;
  if (!url) {
    const bin =
      arg('validator') ??
      process.env.SOLANA_TEST_VALIDATOR ??
      [path.join(os.homedir(), '.cargo/bin/solana-test-validator'), 'solana-test-validator'].find(
        (p) => !p.includes('/') || fs.existsSync(p),
      )!;
    const rpcPort = Number(arg('rpc-port', '28899'));
    ledger = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-golden-ledger-'));
    const args = [
      '--bpf-program',
      ONCEPAY_PROGRAM_ID,
      so,
      '--rpc-port',
      String(rpcPort),
      '--faucet-port',
      arg('faucet-port', '29900')!,
      '--dynamic-port-range',
      arg('dynamic-port-range', '31000-31100')!,
      '--gossip-port',
      arg('gossip-port', '31101')!,
      '--ledger',
      ledger,
      '--reset',
      '--quiet',
    ];
    console.error(`record-golden: ${bin} ${args.join(' ')}`);
    validator = spawn(bin, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    validator.on('error', (e) => {
      console.error(`record-golden: cannot start ${bin}: ${e.message} (make validator builds it)`);
      process.exit(1);
    });
    url = `http://127.0.0.1:${rpcPort}`;
    wsUrl = `ws://127.0.0.1:${rpcPort + 1}`;
  }
  try {
    await healthy(url, 120_000);
    const rec = await runGoldenScenario({
      url,
      wsUrl: wsUrl ?? url.replace(/^http/, 'ws'),
      programId: ONCEPAY_PROGRAM_ID,
      timeoutMs: 120_000,
    });
    const fixture = {
      recordedFrom: rec.node,
      programSha256: crypto.createHash('sha256').update(fs.readFileSync(so)).digest('hex'),
      ...rec,
    };
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${JSON.stringify(fixture, null, 2)}\n`);
    // The program the node ran, beside the recording: golden.test.ts runs localnet with it.
    fs.copyFileSync(so, path.join(path.dirname(out), 'recorded-program.so'));
    console.error(
      `record-golden: ${Object.keys(rec.exchanges).length} exchanges, ${Object.keys(rec.notifications).length} subscriptions → ${path.relative(ROOT, out)}`,
    );
  } finally {
    if (validator) {
      validator.kill('SIGTERM');
      await new Promise((r) => validator!.once('exit', r));
    }
    if (ledger) fs.rmSync(ledger, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
