/**
 * The upgrade check (`agent.verifyUpgrade`, `agent-machine verify-upgrade`): N saved sessions of 20
 * steps in a SQLite file, recorded by version 1 of an agent, checked by version 2, which renames
 * the agent's tool with a migration (each session is loaded, migrated, checked and replayed), beside
 * the same check by version 1 itself (no migration) and a plain load of every session.
 * `UPGRADE_SESSIONS=10000 npm run bench upgrade` for the figure (default 500). Beside the
 * wall time, the process's CPU time: on a shared machine that is what the check itself costs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AgentMigration,
  AgentState,
  createAgent,
  ExecutionBudget,
  SqliteSessionStore,
  scriptedDriver,
} from '../src/index';
import { collectGarbage, now, printTable } from './harness';
import { echo, usagePerStep } from './workload';

const STEPS = 20;

function versioned(version: string, tool: string, migrations?: readonly AgentMigration[]) {
  return createAgent({
    version,
    ...(migrations && { migrations }),
    driver: scriptedDriver([
      (state) =>
        state.stepCount() < STEPS - 1
          ? {
              toolCalls: [{ name: tool, args: { n: state.stepCount() }, id: `call-${state.stepCount()}` }],
              usage: usagePerStep,
            }
          : { text: 'done', usage: usagePerStep },
    ]),
    tools: { [tool]: echo },
    budget: ExecutionBudget.unlimited(),
  });
}

export default async function run(): Promise<void> {
  const sessions = Number(process.env.UPGRADE_SESSIONS ?? 500);
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-bench-upgrade-'));
  const file = join(dir, 'sessions.db');
  try {
    const recorded = await versioned('1', 'echo').execute(AgentState.empty().withUserMessage('go'));
    const writer = new SqliteSessionStore(file, { durability: 'process' });
    for (let i = 0; i < sessions; i++) await writer.save(`s-${String(i).padStart(6, '0')}`, recorded, null);
    await writer.close();

    const v1 = versioned('1', 'echo');
    const v2 = versioned('2', 'echo_number', [{ from: '1', tools: { echo: 'echo_number' } }]);
    const rows: Record<string, string | number>[] = [];
    const time = async (name: string, check: (store: SqliteSessionStore) => Promise<string>) => {
      const store = new SqliteSessionStore(file);
      collectGarbage();
      const load = loadavg()[0] as number;
      const start = now();
      const cpu = process.cpuUsage();
      const verdicts = await check(store);
      const ms = now() - start;
      const used = process.cpuUsage(cpu);
      // CPU time of this process: what the check costs, whatever else the machine runs
      const cpuMs = (used.user + used.system) / 1000;
      await store.close();
      rows.push({
        check: name,
        sessions,
        'total ms': ms,
        'ms per session': ms / sessions,
        '10,000 sessions, s (extrapolated)': (ms / sessions) * 10,
        'CPU ms per session': cpuMs / sessions,
        '10,000 sessions, CPU s': (cpuMs / sessions) * 10,
        verdicts,
        'load avg (1 min)': load.toFixed(2),
      });
    };
    const verdictsOf = async (agent: typeof v1, store: SqliteSessionStore) => {
      const report = await agent.verifyUpgrade(store);
      const counts = new Map<string, number>();
      for (const s of report.sessions) counts.set(s.verdict, (counts.get(s.verdict) ?? 0) + 1);
      return [...counts].map(([verdict, n]) => `${n} ${verdict}`).join(', ');
    };
    await time('load only', async (store) => {
      for (const id of await store.list()) await store.load(id);
      return '-';
    });
    await time('verifyUpgrade, version 1 (no migration)', (store) => verdictsOf(v1, store));
    await time('verifyUpgrade, version 2 (tool renamed)', (store) => verdictsOf(v2, store));
    printTable(
      `verifyUpgrade of ${sessions} saved ${STEPS}-step sessions (SQLite), ${cpus().length} cores`,
      rows,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
