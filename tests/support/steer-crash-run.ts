/**
 * Child process of the steering crash test: a run over a SQLite store whose first step calls `add`;
 * while the tool runs, the run is steered ('and 3 + 3?'); the second step's model call takes a
 * minute, so the process is killed in it. Usage: steer-crash-run.ts <sqlite path> <session id>
 */
import type { InspectionEvent } from 'xstate';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { add, addCall } from './agents';

const [path, sessionId] = process.argv.slice(2) as [string, string];
const store = new SqliteSessionStore(path);
const driver = scriptedDriver([{ toolCalls: [addCall()] }, { text: 'never', delayMs: 60_000 }]);
const agent = createAgent({ driver, tools: { add }, store });
let root: { send: (event: { type: 'steer'; message: string }) => void } | undefined;
await agent.execute(AgentState.empty().withUserMessage('2 + 3?'), {
  sessionId,
  // the inspector is how an app reaches the run's actor
  inspect: (event: InspectionEvent) => {
    if (event.type === '@xstate.actor' && event.actorRef.sessionId === event.rootId)
      root ??= event.actorRef as unknown as typeof root;
  },
  onEvent: (event) => {
    if (event.type === 'tool.started') root?.send({ type: 'steer', message: 'and 3 + 3?' });
  },
});
console.log('finished without being killed');
