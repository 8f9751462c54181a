// What a command prints on stdout: one JSON value, pretty (2 spaces) unless --json asks for one line; bigints as
// decimal strings (money is never a JS number). Logs go to stderr (pino), never here.
export function print(x: unknown, json?: boolean): void {
  process.stdout.write(
    `${JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), json ? undefined : 2)}\n`,
  );
}
