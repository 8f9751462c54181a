// Flags every command line shares, defined once: the value parsers (commander's argParser: a wrong value is refused
// at parse time with the option's name, before anything runs) and the options that fall back to the environment.
// An option with an environment fallback takes the flag first, then the variable, then its default; commander adds
// "(env: NAME)" to its --help line.
import { InvalidArgumentError, Option } from 'commander';

/** A whole decimal number ≥ min (no sign, no exponent, no fraction), as a JS number: counts, ports, milliseconds. */
export function intOption(name: string, min = 0): (v: string) => number {
  return (v: string): number => {
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(v)}`);
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
  const o = new Option('--rpc <url>', opts.description ?? 'Solana JSON-RPC endpoint').env(RPC_URL_ENV);
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
