import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { SqliteSessionStore } from '../../src/persistence/index';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { add, addCall } from '../support/agents';
import { tempDir } from './fixtures';

let remove: () => Promise<void>;
let store: SqliteSessionStore;
beforeEach(async () => {
  const made = await tempDir();
  remove = made.remove;
  store = new SqliteSessionStore(join(made.dir, 'agents.db'));
});
afterEach(async () => {
  await store.close();
  await remove();
});

it('retries a run from step k with another model: fork the checkpoint after step k, resume the fork', async () => {
  const first = createAgent({
    store,
    tools: { add },
    driver: scriptedDriver([
      { toolCalls: [addCall(1, 2)] },
      { toolCalls: [addCall(3, 4)] },
      { text: 'first answer' },
    ]),
  });
  const original = await first.execute(AgentState.empty().withUserMessage('Add things.'), {
    sessionId: 'run',
  });
  expect(original.stepCount()).toBe(3);

  const checkpoints = await store.checkpoints('run');
  expect(checkpoints.map((c) => c.stepNumber)).toEqual([0, 1, 2, 3, 3]);
  const afterStepOne = checkpoints.find((c) => c.stepNumber === 1);
  const forked = await store.fork('run', afterStepOne?.version as number, 'run-retry');
  expect(forked.state.stepCount()).toBe(1);
  expect(forked.state.status()).toBe('in_progress');

  const second = createAgent({ store, tools: { add }, driver: scriptedDriver([{ text: 'second answer' }]) });
  const retried = await second.resume('run-retry');
  expect(retried.finalResponse()).toBe('second answer');
  expect(retried.stepCount()).toBe(2);
  expect(retried.steps()[0]?.toolExecutions()[0]?.value()).toBe(3);
  // The original run is as it was.
  expect((await store.load('run'))?.state.finalResponse()).toBe('first answer');
  expect((await store.load('run-retry'))?.state.toJSON()).toEqual(retried.toJSON());
});
