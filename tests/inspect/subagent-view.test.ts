import { describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { buildRunView } from '../../src/inspect/run-model';
import { renderRunView } from '../../src/inspect/run-viewer';
import { readTrace } from '../../src/inspect/trace-reader';
import { recordTrace } from '../../src/inspect/trace-recorder';
import type { SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';

const call = (name: string, task: string, id: string) => ({ name, args: { task }, id });

/** A root that asks two built-in subagents (one of which asks a third) and answers; tokens per agent are known. */
async function treeRun(inspect?: ReturnType<typeof recordTrace>['inspect']) {
  const fetcher: SubagentDefinition = {
    description: 'Fetches a page',
    driver: scriptedDriver([{ text: 'page text', usage: { inputTokens: 5, outputTokens: 5 } }]),
  };
  const researcher: SubagentDefinition = {
    description: 'Researches a topic',
    driver: scriptedDriver([
      { toolCalls: [call('fetcher', 'fetch the page', 'f1')], usage: { inputTokens: 20, outputTokens: 10 } },
      { text: 'summary', usage: { inputTokens: 30, outputTokens: 10 } },
    ]),
    subagents: { agents: { fetcher } },
  };
  const root = createAgent({
    driver: scriptedDriver([
      {
        toolCalls: [call('researcher', 'research X', 'r1'), call('fetcher', 'fetch Y', 'f2')],
        usage: { inputTokens: 100, outputTokens: 50 },
      },
      { text: 'X is explained', usage: { inputTokens: 200, outputTokens: 20 } },
    ]),
    subagents: { maxDepth: 2, agents: { researcher, fetcher } },
  });
  return root.execute(AgentState.empty().withUserMessage('Explain X'), inspect ? { inspect } : {});
}

// root 370 + researcher 70 + its fetcher 10 + the root's fetcher 10
const EVERY_TOKEN_ONCE = 460;

const headerTokens = (html: string) =>
  Number(
    /data-testid="tokens"><div class="label">Tokens<\/div><div class="value">([\d,]+)/
      .exec(html)?.[1]
      ?.replace(/,/g, ''),
  );

describe('the run viewer with the built-in subagents', () => {
  it('shows every subagent of a state, its JSON and the CLI input alike, and counts each token once', async () => {
    const state = await treeRun();
    expect(state.usage().totalTokens).toBe(EVERY_TOKEN_ONCE);
    for (const input of [state, JSON.parse(JSON.stringify(state))]) {
      const view = buildRunView(input);
      expect(view.agents).toHaveLength(4);
      const [root, ...children] = view.agents;
      expect(root?.childKeys).toHaveLength(2);
      expect(children.map((a) => a.spawnedBy?.toolName).sort()).toEqual(['fetcher', 'fetcher', 'researcher']);
      expect(view.agents.reduce((n, a) => n + a.ownUsage.totalTokens, 0)).toBe(EVERY_TOKEN_ONCE);
      expect(headerTokens(renderRunView(view))).toBe(EVERY_TOKEN_ONCE);
    }
  });

  it('counts each token once for a recorded trace too', async () => {
    const recorder = recordTrace();
    await treeRun(recorder.inspect);
    const view = buildRunView(readTrace(JSON.stringify(recorder.toJSON())));
    expect(view.agents).toHaveLength(4);
    expect(headerTokens(renderRunView(view))).toBe(EVERY_TOKEN_ONCE);
  });
});
