import { OncepayError, DB_CODES } from '../common/errors';
// What `pg_autoctl show state --json` says about a pg_auto_failover formation, read into the few facts oncepay acts
// on: which node is primary, whether every node is where the monitor wants it, and the URL a service is given.
// Pure: db/ha-formation.ts runs pg_autoctl, this decides; unit-tested on recorded outputs.

export interface HaNode {
  name: string;
  host: string;
  port: number;
  /** The state the node last reported (primary, secondary, wait_primary, catchingup, …). */
  reported: string;
  /** The state the monitor assigned it. */
  assigned: string;
  /** The monitor's health check of its postgres: 1 up, 0 down, -1 not checked yet. */
  health: number;
  lsn: string;
}

export interface HaSummary {
  nodes: HaNode[];
  /** The node that reports and is assigned `primary`, if any. */
  primary?: HaNode;
  /**
   * Settled: one primary, every other node a secondary, every node where the monitor assigned it. In this state
   * each commit on the primary waits for a standby (synchronous_standby_names = 'ANY 1 (…)').
   */
  settled: boolean;
}

interface RawNode {
  nodename?: unknown;
  nodehost?: unknown;
  nodeport?: unknown;
  current_group_state?: unknown;
  assigned_group_state?: unknown;
  health?: unknown;
  reported_lsn?: unknown;
}

/** Reads `pg_autoctl show state --json` (an array of nodes). Throws on anything else. */
export function parseHaState(json: string): HaSummary {
  const raw = JSON.parse(json) as unknown;
  if (!Array.isArray(raw))
    throw new OncepayError(DB_CODES.HA_OUTPUT_MALFORMED, 'pg_autoctl show state --json did not print an array');
  const nodes = (raw as RawNode[]).map((n) => ({
    name: String(n.nodename),
    host: String(n.nodehost),
    port: Number(n.nodeport),
    reported: String(n.current_group_state),
    assigned: String(n.assigned_group_state),
    health: Number(n.health),
    lsn: String(n.reported_lsn),
  }));
  const primaries = nodes.filter((n) => n.reported === 'primary' && n.assigned === 'primary');
  const settled =
    nodes.length >= 2 &&
    primaries.length === 1 &&
    nodes.every((n) => n.reported === n.assigned && (n.reported === 'primary' || n.reported === 'secondary'));
  return { nodes, primary: primaries.length === 1 ? primaries[0] : undefined, settled };
}

/**
 * The URL services get: `pg_autoctl show uri --formation default` (every node, target_session_attrs=read-write)
 * with the database user added (the formation's nodes trust `postgres` on loopback; pg_autoctl prints no user, and
 * node-postgres would otherwise log in as the OS user).
 */
export function formationUrl(showUri: string, user: string): string {
  const uri = showUri.trim();
  const m = /^(postgres(?:ql)?:\/\/)([^/?]*)(.*)$/.exec(uri);
  if (!m)
    throw new OncepayError(DB_CODES.HA_OUTPUT_MALFORMED, `pg_autoctl show uri printed no postgres:// URL: ${uri}`);
  const authority = m[2].includes('@') ? m[2] : `${encodeURIComponent(user)}@${m[2]}`;
  return `${m[1]}${authority}${m[3]}`;
}
