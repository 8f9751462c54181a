// `oncepay localnet`: the JSON-RPC localnet in the foreground. Prints one JSON line {"rpc","ws"} on stdout.
import fs from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { OncepayError } from '../common/errors';
import { logger } from '../common/log';
import { LOCALNET_CODES } from '../common/errors/codes';
import { ONCEPAY_PROGRAM_ID } from './program-ids';
import { TOKEN_PROGRAMS, type TokenProgramChoice } from './token-program';

function intArg(name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || n < min || n > max)
      throw new InvalidArgumentError(`${name} must be an integer in [${min}, ${max}]`);
    return n;
  };
}

export function register(program: Command): void {
  program
    .command('localnet')
    .description(
      'run a local Solana JSON-RPC node: the real SVM (LiteSVM) behind our RPC layer, with fault injection (POST /admin/...)',
    )
    .option('--program <path>', 'load this .so (e.g. target/deploy/oncepay.so)')
    .option('--program-id <id>', 'program id for --program', ONCEPAY_PROGRAM_ID)
    .option(
      '--port <n>',
      'RPC port on 127.0.0.1 (0 = ephemeral); websockets on the same port and on port+1',
      intArg('--port', 0, 65534),
      8899,
    )
    .option(
      '--slot-ms <n>',
      'slot duration in ms; 0 = manual (POST /admin/advance-slots)',
      intArg('--slot-ms', 0, 3_600_000),
      400,
    )
    .option(
      '--finality-depth <n>',
      'slots between the tip and the finalized block',
      intArg('--finality-depth', 0, 100_000),
      32,
    )
    .option(
      '--grpc-port <n>',
      'also serve the Yellowstone gRPC (Geyser) Subscribe service on 127.0.0.1:<n> (0 = ephemeral); x-token from env ONCEPAY_LOCALNET_X_TOKEN',
      intArg('--grpc-port', 0, 65535),
    )
    .option(
      '--token-program <which>',
      "the SPL Token program: p-token (LiteSVM's) or legacy (spl_token-3.5.0, as solana-test-validator 3.1 runs it)",
      (v: string) => {
        if (!(TOKEN_PROGRAMS as readonly string[]).includes(v))
          throw new InvalidArgumentError(`--token-program must be one of: ${TOKEN_PROGRAMS.join(', ')}`);
        return v as TokenProgramChoice;
      },
      'p-token',
    )
    .option('--ledger <dir>', 'ledger folder (kept across restarts)', '.oncepay/localnet')
    .option('--reset', 'start from genesis, wiping the ledger folder', false)
    .action(
      async (o: {
        program?: string;
        programId: string;
        port: number;
        slotMs: number;
        finalityDepth: number;
        grpcPort?: number;
        tokenProgram: TokenProgramChoice;
        ledger: string;
        reset: boolean;
      }) => {
        const log = logger('localnet.cli');
        const programs = [];
        if (o.program) {
          const p = path.resolve(o.program);
          if (!fs.existsSync(p))
            throw new OncepayError(LOCALNET_CODES.PROGRAM_LOAD_FAILED, `program file ${p} does not exist`);
          programs.push({ programId: o.programId, path: p });
        }
        // Loaded lazily so `oncepay --help` does not load the native SVM.
        const { startLocalnet } = await import('./index');
        const net = await startLocalnet({
          port: o.port,
          slotMs: o.slotMs,
          finalityDepth: o.finalityDepth,
          programs,
          ledgerDir: path.resolve(o.ledger),
          reset: o.reset,
          tokenProgram: o.tokenProgram,
          geyser:
            o.grpcPort === undefined
              ? undefined
              : { port: o.grpcPort, xToken: process.env.ONCEPAY_LOCALNET_X_TOKEN || undefined },
        });
        process.stdout.write(
          `${JSON.stringify({ rpc: net.url, ws: net.wsUrl, ...(net.grpcUrl ? { grpc: net.grpcUrl } : {}) })}\n`,
        );
        await new Promise<void>((resolve) => {
          const bye = (signal: string): void => {
            log.info({ signal }, 'stopping localnet');
            net.stop().then(resolve, (err) => {
              log.error({ err }, 'stop failed');
              resolve();
            });
          };
          process.once('SIGINT', () => bye('SIGINT'));
          process.once('SIGTERM', () => bye('SIGTERM'));
        });
      },
    );
}
