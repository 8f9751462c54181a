// Flags every command line shares, defined once: the value parsers (commander's argParser: a wrong value is refused
// at parse time with the option's name, before anything runs) and the options that fall back to the environment.
// An option with an environment fallback takes the flag first, then the variable, then its default; commander adds
// "(env: NAME)" to its --help line.
import bs58 from 'bs58';
import { InvalidArgumentError, Option } from 'commander';
import { OncepayError, type OncepayErrorCode } from '../common/errors';
import { AMOUNT_CODES, CLI_CODES, PAYOUT_CODES } from '../common/errors/codes';
import { readKeypairFile } from '../app/payout/keypair';

/** A whole decimal number ≥ min (no sign, no exponent, no fraction), as a JS number: counts, ports, milliseconds. */
export function intOption(name: string, min = 0): (v: string) => number {
  return (v: string): number => {
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(n) || n < min)
      throw invalidFlag(CLI_CODES.VALUE_INVALID, `${name} must be an integer ≥ ${min}, got ${JSON.stringify(v)}`);
    return n;
  };
}

/** The environment variable behind every command's --rpc. */
export const RPC_URL_ENV = 'ONCEPAY_RPC_URL';
/** The environment variable behind every command's --cluster (the cluster name in each receipt's key). */
export const CLUSTER_ENV = 'ONCEPAY_CLUSTER';

/**
 * --rpc <url>, the Solana JSON-RPC endpoint, from ONCEPAY_RPC_URL when the flag is absent. `required`: a command
 * that cannot run without it says so when neither is given; `fallback`: the URL used when neither is given.
 */
export function rpcOption(opts: { required?: boolean; fallback?: string; description?: string } = {}): Option {
  const o = new Option('--rpc <url>', opts.description ?? 'Solana JSON-RPC endpoint')
    .env(RPC_URL_ENV)
    .argParser(urlArg('--rpc', ['http:', 'https:']));
  if (opts.fallback !== undefined) o.default(opts.fallback);
  if (opts.required) o.makeOptionMandatory();
  return o;
}

/** --cluster <name>, from ONCEPAY_CLUSTER when the flag is absent, else `fallback`. */
export function clusterOption(description: string, fallback = 'localnet'): Option {
  return new Option('--cluster <name>', description).env(CLUSTER_ENV).default(fallback);
}

/** --poll-ms <ms>: the pause between two looks at the chain (payout and SDK commands), 400 unless given. */
export function pollMsOption(): Option {
  return new Option('--poll-ms <ms>', 'pause between two looks at the chain')
    .argParser(intOption('--poll-ms'))
    .default(400);
}

/** --timeout-ms <ms>: how long a command waits before it gives up (no limit unless given). */
export function timeoutMsOption(description: string): Option {
  return new Option('--timeout-ms <ms>', description).argParser(intOption('--timeout-ms', 1));
}

/** Base58 of exactly 32 bytes (a Solana address), as app/types.ts isAddress checks it. */
function isBase58Address(v: string): boolean {
  if (v.length < 32 || v.length > 44) return false;
  try {
    return bs58.decode(v).length === 32;
  } catch {
    return false;
  }
}

/**
 * A flag's value refused at parse time: commander prints `error: option '<flags>' argument '<value>' is invalid.`
 * and this message, which starts with the stable code and names the flag; nothing has run yet (exit 1).
 */
export function invalidFlag(code: OncepayErrorCode, message: string): InvalidArgumentError {
  return new InvalidArgumentError(`${code}: ${message}`);
}

/** A value parser for an address flag: refused at parse time, naming the flag, before anything runs. */
export function addressArg(name: string): (v: string) => string {
  return (v: string): string => {
    if (!isBase58Address(v))
      throw invalidFlag(
        PAYOUT_CODES.ADDRESS_MALFORMED,
        `${name} must be a base58 32-byte address, got ${JSON.stringify(v)}`,
      );
    return v;
  };
}

/** `<flags>` taking an address (`--mint <address>`), checked at parse time. */
export function addressOption(flags: string, description: string): Option {
  const name = flags.split(/[ ,]/)[0];
  return new Option(flags, description).argParser(addressArg(name));
}

/** A merchant named by its api_merchants id (digits) or its merchant config address, checked at parse time. */
export function merchantRefArg(name: string): (v: string) => string {
  return (v: string): string => {
    if (/^[0-9]{1,18}$/.test(v) || isBase58Address(v)) return v;
    throw invalidFlag(
      PAYOUT_CODES.ADDRESS_MALFORMED,
      `${name} must be a registered merchant's id (digits) or its merchant config address (base58), got ${JSON.stringify(v)}`,
    );
  };
}

/** A row id argument (`<id>`: a payout's or an exception's), digits only, checked at parse time. */
export function rowIdArg(name: string): (v: string) => string {
  return (v: string): string => {
    if (!/^[0-9]{1,18}$/.test(v))
      throw invalidFlag(CLI_CODES.VALUE_INVALID, `${name} must be a row id (digits), got ${JSON.stringify(v)}`);
    return v;
  };
}

/** An amount of base units (a decimal string, 0..u64::MAX), checked at parse time; the string is kept. */
export function amountArg(name: string): (v: string) => string {
  return (v: string): string => {
    if (!/^(0|[1-9][0-9]*)$/.test(v))
      throw invalidFlag(
        AMOUNT_CODES.MALFORMED,
        `${name} must be a decimal string of base units, got ${JSON.stringify(v)}`,
      );
    if (BigInt(v) > (1n << 64n) - 1n)
      throw invalidFlag(AMOUNT_CODES.OUT_OF_RANGE, `${name} must be at most u64::MAX, got ${v}`);
    return v;
  };
}

/** A URL with one of `protocols` (e.g. ['http:', 'https:']), checked at parse time; the value is never echoed. */
export function urlArg(name: string, protocols: readonly string[]): (v: string) => string {
  return (v: string): string => {
    let ok: boolean;
    try {
      ok = protocols.includes(new URL(v).protocol);
    } catch {
      ok = false;
    }
    // Not echoed: a URL may carry an API key or a password.
    if (!ok) throw invalidFlag(CLI_CODES.VALUE_INVALID, `${name} must be a ${protocols.join(' or ')} URL`);
    return v;
  };
}

/** A repeatable flag (`--provider a --provider b`, or `--provider a,b`): its values in order. */
export function collect(v: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...v.split(',').filter((x) => x !== '')];
}

/**
 * A keypair file flag (`--authority <path>`): the file is read and checked at parse time (mode 600, a JSON array of
 * 64 bytes), so a wrong path or file is refused naming the flag; the path is kept (the command reads it again).
 */
export function keypairFileArg(name: string): (v: string) => string {
  return (v: string): string => {
    try {
      readKeypairFile(v);
    } catch (e) {
      if (e instanceof OncepayError) throw invalidFlag(e.code, `${name}: ${e.message.replace(/^[A-Z_]+: /, '')}`);
      throw e;
    }
    return v;
  };
}

/** A repeatable keypair file flag: each file checked as keypairFileArg, the paths in order. */
export function keypairFilesArg(name: string): (v: string, previous: string[] | undefined) => string[] {
  const one = keypairFileArg(name);
  return (v, previous) => [...(previous ?? []), one(v)];
}

/** A mint flag: a base58 address, or 'SOL' for native transfers. */
export function mintArg(name: string): (v: string) => string {
  const address = addressArg(name);
  return (v) => (v === 'SOL' ? v : address(v));
}
