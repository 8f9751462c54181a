// Which host of a multi-host database URL a new connection tries next. Pure: the pool's connector reports what
// each attempt found (db/host-list.ts), this decides; unit-tested without a server.
//
// Every new connection starts at the host the last good one reached (libpq starts each connection at the first
// host; starting at the last primary spares every connection a refused or read-only attempt after a failover). A
// host that failed moves the cursor to the next one in the list's order, wrapping around, so one acquire tries each
// host once before it gives up. Reports about a host the cursor already left change nothing: twenty connections
// that all failed on the old primary move the cursor one step, not twenty.
import { DB_CODES, OncepayError } from '../common/errors';

export class HostCursor {
  private at = 0;
  /** The host the last good connection reached, once one did. */
  private good: number | undefined;
  /** Hosts that answered "no SSL" to an sslmode=prefer attempt: the next attempt there goes in plain text. */
  private readonly plain = new Set<number>();

  constructor(readonly size: number) {
    if (!Number.isSafeInteger(size) || size < 1)
      throw new OncepayError(DB_CODES.HOSTS_MISSING, 'a host list has at least one host');
  }

  /** The host the next connection tries. */
  current(): number {
    return this.at;
  }

  /**
   * A connection to host `i` is writable (or was all that was asked for): new connections start there. True when
   * the good connections moved to another host (a failover was followed), for the one log line that says so.
   */
  succeeded(i: number): boolean {
    const moved = this.good !== undefined && this.good !== i;
    this.good = i;
    this.at = i;
    return moved;
  }

  /** Host `i` refused, timed out, or is read-only: move on, unless the cursor already did. */
  failed(i: number): void {
    if (this.at === i) this.at = (i + 1) % this.size;
  }

  /** Host `i` does not speak SSL: under sslmode=prefer, try it again in plain text (the cursor stays). */
  refusedSsl(i: number): void {
    this.plain.add(i);
  }

  /** Under sslmode=prefer: is host `i` known to refuse SSL? */
  plainOnly(i: number): boolean {
    return this.plain.has(i);
  }
}
