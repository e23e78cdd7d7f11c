import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { buildRunView } from '../../src/inspect/run-model';
import { renderRunView } from '../../src/inspect/run-viewer';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { defineTool } from '../../src/tools/define-tool';

const sum = (offset: number) =>
  defineTool({
    description: 'Add two numbers',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => ({ total: a + b + offset, note: offset ? '<b>changed</b>' : 'same' }),
  });
const agentWith = (offset: number) =>
  createAgent({
    driver: scriptedDriver([{ toolCalls: [{ id: 'c1', name: 'sum', args: { a: 2, b: 3 } }] }, { text: '5' }]),
    tools: { sum: sum(offset) },
  });

describe('the run viewer with a replay divergence', () => {
  it('shows the divergence beside the recorded step it names, escaped', async () => {
    const recorded = await agentWith(0).execute(AgentState.empty().withUserMessage('2 + 3?'));
    const { divergence } = await agentWith(1).replay(recorded, { tools: 'live' });
    expect(divergence).toMatchObject({ stepNumber: 1, path: 'toolExecutions[0].value.total' });

    const view = buildRunView(recorded, { divergence });
    expect(view.agents[0]?.steps[0]?.divergence).toEqual({
      kind: 'tool-result',
      path: 'toolExecutions[0].value.total',
      recorded: '5',
      replayed: '6',
    });
    expect(view.agents[0]?.steps[1]?.divergence).toBeUndefined();
    const html = renderRunView(view);
    const note = html.match(/<div class="step-divergence" data-testid="divergence">.*?<\/div>/s)?.[0] ?? '';
    expect(note).toContain('<code>toolExecutions[0].value.total</code>');
    expect(note).toContain('- recorded: <code>5</code>');
    expect(html.indexOf('data-step="1"')).toBeLessThan(html.indexOf('data-testid="divergence"'));
    expect(html.indexOf('data-testid="divergence"')).toBeLessThan(html.indexOf('data-step="2"'));

    const escaped = buildRunView(recorded, {
      divergence: { stepNumber: 1, kind: 'tool-result', path: 'x', recorded: '<b>', replayed: 1 },
    });
    expect(renderRunView(escaped)).toContain('&quot;&lt;b&gt;&quot;');
  });

  it('puts a divergence after the last recorded step in the notes', async () => {
    const recorded = await agentWith(0).execute(AgentState.empty().withUserMessage('2 + 3?'));
    const view = buildRunView(recorded, {
      divergence: { stepNumber: 3, kind: 'outcome', path: 'stepCount', recorded: 2, replayed: 3 },
    });
    expect(view.notes).toContain('Replay diverged at step 3 (outcome) at stepCount: recorded 2, replayed 3');
  });
});
