/**
 * #44 item 4: a run recorded into SQLite and replayed offline gives a final state JSON-equal to the
 * recorded one: ids (the execution's, the steps', the tool executions', every subagent's agent and
 * execution ids, the messages' tags) and timestamps included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ScriptStep, scriptedDriver } from '../../src/drivers/scripted-driver';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import type { AgentDefinition, SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { defineTool } from '../../src/tools/define-tool';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

let runs = 0;
const sum = (offset = 0) =>
  defineTool({
    description: 'Add two numbers',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => {
      runs++;
      return { total: a + b + offset };
    },
  });

const researcher = (script: ScriptStep[]): SubagentDefinition => ({
  description: 'Adds numbers',
  driver: scriptedDriver(script),
});

/** A root that calls two subagents and a tool of its own side by side, then one of the subagents again. */
const definition = (offset = 0, more: Partial<AgentDefinition> = {}): AgentDefinition => ({
  driver: scriptedDriver([
    {
      toolCalls: [
        { id: 'r1', name: 'researcher', args: { task: 'Add 2 and 3' } },
        { id: 'c1', name: 'sum', args: { a: 1, b: 1 } },
        { id: 'k1', name: 'checker', args: { task: 'Check 5' } },
      ],
      usage: { inputTokens: 10, outputTokens: 4 },
    },
    {
      toolCalls: [{ id: 'r2', name: 'researcher', args: { task: 'Add 4 and 5' } }],
      usage: { inputTokens: 20, outputTokens: 4 },
    },
    { text: 'The researcher is done.', usage: { inputTokens: 30, outputTokens: 6 } },
  ]),
  tools: { sum: sum(offset) },
  systemPrompt: 'You delegate sums.',
  subagents: {
    agents: {
      researcher: {
        ...researcher([
          // each call of the researcher runs from the script's start (the cursor is its state's)
          { toolCalls: [{ id: 's1', name: 'sum', args: { a: 2, b: 3 } }] },
          { text: 'done' },
        ]),
        tools: { sum: sum(offset) },
      },
      checker: researcher([{ text: 'ok' }]),
    },
  },
  ...more,
});

async function recordIntoSqlite(): Promise<AgentState> {
  const dir = mkdtempSync(join(tmpdir(), 'replay-exact-'));
  dirs.push(dir);
  const store = new SqliteSessionStore(join(dir, 'sessions.db'));
  await createAgent(definition(0, { store })).execute(AgentState.empty().withUserMessage('2 + 3, 4 + 5?'), {
    sessionId: 'exact-1',
  });
  const loaded = await store.load('exact-1');
  await store.close();
  if (!loaded) throw new Error('the session was not saved');
  return loaded.state;
}

describe('a replay is bit-exact', () => {
  it('a run with subagents and tools recorded into SQLite replays JSON-equal, ids and timestamps included', async () => {
    const recorded = await recordIntoSqlite();
    const children = recorded.steps().flatMap((s) => s.toolExecutions().map((e) => e.childState()));
    expect(children.filter(Boolean)).toHaveLength(3);
    runs = 0;
    const result = await createAgent(definition()).replay(recorded);
    const { state, divergence } = result;
    expect(divergence).toBeNull();
    expect(runs).toBe(0);
    // made once, when read
    expect(result.state).toBe(state);
    expect(JSON.stringify(state)).toBe(JSON.stringify(recorded));
    expect(state.toJSON()).toEqual(recorded.toJSON());
  });

  it("with tools: 'live' and unchanged tools, the replayed state is JSON-equal too", async () => {
    const recorded = await recordIntoSqlite();
    runs = 0;
    const { state, divergence } = await createAgent(definition()).replay(recorded, { tools: 'live' });
    expect(divergence).toBeNull();
    expect(runs).toBe(3);
    expect(JSON.stringify(state)).toBe(JSON.stringify(recorded));
  });

  it('a changed tool still shows: a divergence, and a state that is not equal where the result changed', async () => {
    const recorded = await recordIntoSqlite();
    const { state, divergence } = await createAgent(definition(1)).replay(recorded, { tools: 'live' });
    expect(divergence).toMatchObject({ stepNumber: 1, kind: 'tool-result' });
    expect(JSON.stringify(state)).not.toBe(JSON.stringify(recorded));
    expect(state.steps()[0]?.toolExecutions()[1]?.value()).toEqual({ total: 3 });
  });

  it("a fork keeps the recording's clock and ids for the replayed steps only: the live steps draw their own", async () => {
    const recorded = await recordIntoSqlite();
    const { state } = await createAgent(definition()).replay(recorded, { fromStep: 2 });
    const first = (s: AgentState) => JSON.stringify(s.toJSON().execution?.stepExecutions?.[0]);
    expect(first(state)).toBe(first(recorded));
    const child = (s: AgentState) => s.steps()[1]?.toolExecutions()[0]?.childState();
    expect(child(state)?.agentId()).not.toBe(child(recorded)?.agentId());
  });
});
