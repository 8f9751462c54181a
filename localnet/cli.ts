import { Command } from 'commander';

export function register(_program: Command): void {
  // Commands of this part are registered here.
}
