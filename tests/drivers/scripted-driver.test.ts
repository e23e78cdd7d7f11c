/**
 * scriptedDriver: refuses what it cannot play with a typed error naming the argument, and records
 * as each step's input what a model would have been sent, so its runs replay.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';
import { defineTool } from '../../src/tools/define-tool';

describe('scriptedDriver', () => {
  it('refuses an empty script with InvalidArgumentError (INVALID_ARGUMENT), not a bare TypeError', () => {
    const error = (() => {
      try {
        scriptedDriver([]);
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((error as Error).message).toMatch(/^Invalid scriptedDriver\(script\): .*at least one/);
  });

  it("records the model's input without earlier executions' tool traces, so a second turn replays", async () => {
    const add = defineTool({
      description: 'Add',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => a + b,
    });
    const agent = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }] },
        { text: '5' },
        { text: 'again' },
      ]),
      tools: { add },
    });
    const first = await agent.execute(AgentState.empty().withUserMessage('2 + 3?'));
    const second = await agent.execute(first.withUserMessage('And tomorrow?'));
    const input = second.steps()[0]?.inputMessages().map((m) => [m.role, m.content]);
    expect(input).toEqual([
      ['user', '2 + 3?'],
      ['assistant', '5'],
      ['user', 'And tomorrow?'],
    ]);
    expect((await agent.replay(second)).divergence).toBeNull();
  });
});
