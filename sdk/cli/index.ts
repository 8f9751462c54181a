// The merchant's commands, on the SDK's OncePay: `merchant …`, `vault …`, `exception …`.
import { Command } from 'commander';
import * as exception from './exception';
import * as merchant from './merchant';
import * as vault from './vault';

export function register(program: Command): void {
  for (const part of [merchant, vault, exception]) part.register(program);
}
