/**
 * A run recorded through a real provider package (@ai-sdk/openai-compatible against a loopback
 * server) into a SQLite file replays with the server stopped: no request, no divergence, the
 * same final state, JSON-equal (ids and timestamps included).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach, describe, expect, it } from 'vitest';
import type { Hook } from '../../src/hooks/hook';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import type { AgentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { firstDifference } from '../../src/state/json-difference';
import { add } from '../support/agents';
import { startOpenAIServer, textReply, toolCallReply } from '../support/openai-server';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A model that counts the HTTP requests it makes. */
function countedModel(baseURL: string) {
  const counter = { requests: 0 };
  const model = createOpenAICompatible({
    name: 'local',
    baseURL,
    fetch: (input, init) => {
      counter.requests++;
      return fetch(input, init);
    },
  }).chatModel('m');
  return { model, counter };
}

const defined = (model: AgentDefinition['model'], more: Partial<AgentDefinition> = {}): AgentDefinition => ({
  model,
  tools: { add },
  systemPrompt: 'You add numbers.',
  modelOptions: { maxRetries: 0 },
  ...more,
});

async function recordThroughHttp() {
  const dir = mkdtempSync(join(tmpdir(), 'replay-'));
  dirs.push(dir);
  const file = join(dir, 'sessions.db');
  const server = await startOpenAIServer([
    toolCallReply([{ id: 'call_1', name: 'add', arguments: { a: 2, b: 3 } }], { content: 'Let me add.' }),
    textReply('The answer is 5.'),
  ]);
  const baseURL = server.baseURL;
  const store = new SqliteSessionStore(file);
  const live = countedModel(baseURL);
  await createAgent(defined(live.model, { store })).execute(
    AgentState.empty().withUserMessage('What is 2 + 3?'),
    {
      sessionId: 'chat-1',
    },
  );
  expect(live.counter.requests).toBe(2);
  await server.close();
  const loaded = await store.load('chat-1');
  await store.close();
  if (!loaded) throw new Error('the session was not saved');
  return { recorded: loaded.state, baseURL };
}

describe('replaying a run recorded over HTTP into SQLite', () => {
  it('replays with the server stopped: 0 requests, no divergence, the same final state', async () => {
    const { recorded, baseURL } = await recordThroughHttp();
    expect(recorded.steps()[0]?.request()).not.toBeNull();
    expect(recorded.steps()[0]?.inferenceResponse().rawFinishReason).toBe('tool_calls');

    const offline = countedModel(baseURL);
    const { state, divergence } = await createAgent(defined(offline.model)).replay(recorded);
    expect(offline.counter.requests).toBe(0);
    expect(divergence).toBeNull();
    // Compared: the whole state JSON, skipping only executionId, the tool executions' ids, the
    // message tags execution_id / tool_execution_id / agent_id, and every timestamp.
    expect(
      firstDifference(JSON.parse(JSON.stringify(recorded)), JSON.parse(JSON.stringify(state))),
    ).toBeNull();
    expect(state.usage()).toEqual(recorded.usage());
    expect(state.finalResponse()).toBe('The answer is 5.');
  });

  it('replays JSON-equal, ids and timestamps included: the execution id, the tool execution ids and their message tags', async () => {
    const { recorded, baseURL } = await recordThroughHttp();
    const { state } = await createAgent(defined(countedModel(baseURL).model)).replay(recorded);
    expect(JSON.stringify(state)).toBe(JSON.stringify(recorded));
    expect(state.executionId()).toBe(recorded.executionId());
    const ids = (s: AgentState) => s.toolExecutions().map((e) => e.id());
    expect(ids(state)).toEqual(ids(recorded));
  });

  it('a changed tool description, a changed setting from a hook, each diverge in the request at their step', async () => {
    const { recorded, baseURL } = await recordThroughHttp();
    const { model } = countedModel(baseURL);
    const described = { ...add, description: 'Add two integers' };
    const tools = await createAgent(defined(model, { tools: { add: described } })).replay(recorded);
    expect(tools.divergence).toMatchObject({ stepNumber: 1, kind: 'request', path: 'request.tools' });

    const cooler: Hook = {
      name: 'cooler',
      beforeStep: (state) => (state.stepCount() === 1 ? state.withLlmConfig({ temperature: 0 }) : undefined),
    };
    const settings = await createAgent(defined(model, { hooks: [cooler] })).replay(recorded);
    expect(settings.divergence).toMatchObject({ stepNumber: 2, kind: 'request', path: 'request.settings' });
  });
});
