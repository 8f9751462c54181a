// db/ha-state.ts on outputs of pg_autoctl 2.0 (Debian bookworm), recorded from a formation on this machine. Pure.
import { expect } from 'chai';
import { formationUrl, parseHaState } from '../../db/ha-state';

function node(name: string, port: number, reported: string, assigned: string, health = 1) {
  return {
    health,
    node_id: port - 6000,
    group_id: 0,
    nodehost: '127.0.0.1',
    nodename: name,
    nodeport: port,
    nodecluster: 'default',
    reported_lsn: '0/3000110',
    reported_tli: 1,
    formation_kind: 'pgsql',
    candidate_priority: 50,
    replication_quorum: true,
    current_group_state: reported,
    assigned_group_state: assigned,
  };
}

describe('db/ha-state: the monitor’s view of a formation', () => {
  it('a primary and a secondary where the monitor wants them: settled, the primary named', () => {
    const s = parseHaState(
      JSON.stringify([node('node_1', 6001, 'primary', 'primary'), node('node_2', 6002, 'secondary', 'secondary')]),
    );
    expect(s.settled).to.equal(true);
    expect(s.primary?.name).to.equal('node_1');
    expect(s.primary?.port).to.equal(6001);
    expect(s.nodes[1]).to.include({ reported: 'secondary', health: 1, lsn: '0/3000110' });
  });

  it('mid-failover and while the standby catches up: not settled', () => {
    for (const nodes of [
      [node('node_1', 6001, 'wait_primary', 'wait_primary'), node('node_2', 6002, 'catchingup', 'catchingup')],
      [node('node_1', 6001, 'primary', 'draining'), node('node_2', 6002, 'secondary', 'prepare_promotion')],
      [node('node_1', 6001, 'demoted', 'catchingup', 0), node('node_2', 6002, 'primary', 'primary')],
      [node('node_1', 6001, 'single', 'single')],
      [node('node_1', 6001, 'primary', 'primary'), node('node_2', 6002, 'primary', 'primary')],
    ]) {
      const s = parseHaState(JSON.stringify(nodes));
      expect(s.settled, JSON.stringify(nodes.map((n) => n.current_group_state))).to.equal(false);
    }
  });

  it('refuses output that is not the node array', () => {
    expect(() => parseHaState('{}')).to.throw(/array/);
  });

  it("the services' URL: pg_autoctl's, with the user added (and kept when it has one)", () => {
    expect(
      formationUrl(
        'postgres://127.0.0.1:6001,127.0.0.1:6002/app?target_session_attrs=read-write&sslmode=prefer\n',
        'postgres',
      ),
    ).to.equal('postgres://postgres@127.0.0.1:6001,127.0.0.1:6002/app?target_session_attrs=read-write&sslmode=prefer');
    expect(formationUrl('postgres://me@h:1,h:2/app', 'postgres')).to.equal('postgres://me@h:1,h:2/app');
    expect(() => formationUrl('nothing', 'postgres')).to.throw(/no postgres:\/\/ URL/);
  });
});
