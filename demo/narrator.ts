// The demo's voice: short human lines on stdout (one or two per step). The components' JSON logs go to files
// under .oncepay/demo/logs (ONCEPAY_LOG_DIR, common/log.ts), so the terminal carries only the story.
// In --json mode stdout carries only the final JSON object, so the narration goes to stderr instead.
export interface Narrator {
  act(title: string): void;
  step(text: string, detail?: string): void;
  note(text: string): void;
  raw(text: string): void;
}

export function createNarrator(opts: { json: boolean; write?: (s: string) => void }): Narrator {
  const write = opts.write ?? ((s: string) => (opts.json ? process.stderr : process.stdout).write(s));
  return {
    act(title) {
      write(`\n== ${title}\n`);
    },
    step(text, detail) {
      write(`  • ${text}\n`);
      if (detail) write(`      ${detail}\n`);
    },
    note(text) {
      write(`    ${text}\n`);
    },
    raw(text) {
      write(text.endsWith('\n') ? text : `${text}\n`);
    },
  };
}

/** Shorten a base58 key or signature for the narration (the JSON result carries the full value). */
export function short(s: string, n = 8): string {
  return s.length <= 2 * n + 1 ? s : `${s.slice(0, n)}…${s.slice(-4)}`;
}

/** Base units → a decimal string with `decimals` places ("12.500000"); exact, no float. */
export function tokens(amount: bigint, decimals: number): string {
  const neg = amount < 0n;
  const a = neg ? -amount : amount;
  const d = 10n ** BigInt(decimals);
  const frac = (a % d).toString().padStart(decimals, '0');
  return `${neg ? '-' : ''}${a / d}.${frac}`;
}
