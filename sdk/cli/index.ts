// The merchant's commands, on the SDK's OncePay: `merchant …`, `vault …`, `exception …`.
import { Command } from 'commander';

export function register(program: Command): void {
  for (const part of [require('./merchant'), require('./vault'), require('./exception')] as Array<{
    register(p: Command): void;
  }>)
    part.register(program);
}
