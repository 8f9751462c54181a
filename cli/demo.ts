import { Command } from 'commander';

export function register(_program: Command): void {
  // `oncepay demo` is registered here.
}
