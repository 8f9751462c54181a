// Parsers for command-line option values (commander's argParser): a wrong value is refused at parse time with
// the option's name, before anything runs.
import { InvalidArgumentError } from 'commander';

/** A whole decimal number ≥ min (no sign, no exponent, no fraction), as a JS number: counts, ports, milliseconds. */
export function intOption(name: string, min = 0): (v: string) => number {
  return (v: string): number => {
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(v)}`);
    return n;
  };
}
