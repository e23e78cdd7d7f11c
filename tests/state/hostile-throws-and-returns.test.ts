/**
 * What user code hands back to the loop at its edges: values thrown by tools, hooks and drivers
 * that are not Errors (a revoked proxy, whose every inspection throws), and hooks and drivers that
 * return what they may not. Each run ends with a typed error naming what was wrong, and the session
 * saved after it loads as the state the run returned.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import type { AgentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';
import { tempDir } from '../persistence/fixtures';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups) await cleanup();
  cleanups = [];
});

/** Runs the agent in a session of a file store; returns the final state and what a fresh store loads. */
async function runSaved(definition: Omit<AgentDefinition, 'store'>) {
  const { dir, remove } = await tempDir();
  const store = new FileSessionStore(dir);
  cleanups.push(async () => {
    await store.close();
    await remove();
  });
  const done = await createAgent({ ...definition, store }).execute(AgentState.empty().withUserMessage('go'), {
    sessionId: 'edge',
  });
  const reader = new FileSessionStore(dir);
  cleanups.push(() => reader.close());
  const loaded = await reader.load('edge');
  expect(loaded?.state.toJSON()).toEqual(done.toJSON());
  return done;
}

const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
const one = defineTool({ description: 'One', inputSchema: z.object({}), execute: async () => 1 });
const callingOne = () =>
  scriptedDriver([{ toolCalls: [{ id: 't1', name: 'one', args: {} }] }, { text: 'done' }]);

describe('a revoked proxy thrown (a value that cannot be looked at)', () => {
  const cases: Array<[string, () => Omit<AgentDefinition, 'store'>]> = [
    [
      'by a beforeStep hook',
      () => ({
        driver: callingOne(),
        hooks: [
          {
            beforeStep: () => {
              throw revoked();
            },
          },
        ],
      }),
    ],
    [
      'by an afterStep hook',
      () => ({
        driver: callingOne(),
        tools: { one },
        hooks: [
          {
            afterStep: () => {
              throw revoked();
            },
          },
        ],
      }),
    ],
    [
      'by a beforeToolUse hook',
      () => ({
        driver: callingOne(),
        tools: { one },
        hooks: [
          {
            beforeToolUse: () => {
              throw revoked();
            },
          },
        ],
      }),
    ],
    [
      'by an afterToolUse hook',
      () => ({
        driver: callingOne(),
        tools: { one },
        hooks: [
          {
            afterToolUse: () => {
              throw revoked();
            },
          },
        ],
      }),
    ],
    [
      'by an onError hook',
      () => ({
        driver: scriptedDriver([{ error: new Error('model down') }]),
        hooks: [
          {
            onError: () => {
              throw revoked();
            },
          },
        ],
      }),
    ],
    [
      'by a driver',
      () => ({
        driver: {
          name: 'odd',
          infer: () => {
            throw revoked();
          },
        },
      }),
    ],
    [
      'by a driver, as a rejection',
      () => ({
        driver: {
          name: 'odd',
          infer: async () => {
            throw revoked();
          },
        },
      }),
    ],
  ];
  it.each(cases)('%s fails the run with the error recorded, and the session loads', async (_label, make) => {
    const done = await runSaved(make());
    expect(done.status()).toBe(ExecutionStatus.Failed);
    expect(done.errors().some((e) => /could not be read/.test(e.message))).toBe(true);
  });

  it('by a tool is a failed call the model is told about; the run goes on', async () => {
    const bad = defineTool({
      description: 'Bad',
      inputSchema: z.object({}),
      execute: async () => {
        throw revoked();
      },
    });
    const done = await runSaved({
      driver: scriptedDriver([{ toolCalls: [{ id: 't1', name: 'bad', args: {} }] }, { text: 'done' }]),
      tools: { bad },
    });
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(done.steps()[0]?.toolExecutions()[0]?.error()?.message).toMatch(/could not be read/);
  });
});

describe('a hook that returns what it may not fails the run with INVALID_RETURN_VALUE', () => {
  const cases: Array<[string, Hook, RegExp]> = [
    [
      'a block reason that is a number',
      { name: 'gate', beforeToolUse: () => ({ block: 42 as unknown as string }) },
      /gate.*beforeToolUse.*block.*number/,
    ],
    [
      'a block reason that is an object',
      { name: 'gate', beforeToolUse: () => ({ block: {} as unknown as string }) },
      /gate.*beforeToolUse.*block.*object/,
    ],
    [
      'a decision whose state is not an AgentState',
      { name: 'gate', beforeToolUse: () => ({ state: 'x' as unknown as AgentState }) },
      /gate.*beforeToolUse.*state.*string/,
    ],
    [
      'a decision that is a string',
      { name: 'gate', beforeToolUse: () => 'no' as unknown as undefined },
      /gate.*beforeToolUse.*returned string/,
    ],
    [
      'an afterToolUse result that is neither',
      { name: 'audit', afterToolUse: () => ({ value: 2 }) as unknown as undefined },
      /audit.*afterToolUse.*returned object/,
    ],
    [
      'an afterStep result that is a string',
      { name: 'audit', afterStep: () => 'x' as unknown as undefined },
      /audit.*afterStep.*returned string/,
    ],
  ];
  it.each(cases)('%s', async (_label, hook, message) => {
    const done = await runSaved({ driver: callingOne(), tools: { one }, hooks: [hook] });
    expect(done.status()).toBe(ExecutionStatus.Failed);
    const error = done.errors().find((e) => e.code === 'INVALID_RETURN_VALUE');
    expect(error?.message).toMatch(message);
  });

  it('an empty block reason still blocks, with the hook named', async () => {
    const done = await runSaved({
      driver: callingOne(),
      tools: { one },
      hooks: [{ name: 'gate', beforeToolUse: () => ({ block: '' }) }],
    });
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(done.steps()[0]?.toolExecutions()[0]?.error()?.message).toBe("Blocked by hook 'gate'");
  });
});

describe('a driver that answers with what is not a state', () => {
  it.each([
    ['null', null],
    ['a string', 'done'],
    ['a plain object', { text: 'done' }],
  ])('%s fails the run with INVALID_RETURN_VALUE naming the driver', async (_label, answer) => {
    const driver = { name: 'mine', infer: async () => answer } as unknown as Driver;
    const done = await runSaved({ driver });
    expect(done.status()).toBe(ExecutionStatus.Failed);
    expect(done.errors()[0]?.code).toBe('INVALID_RETURN_VALUE');
    expect(done.errors()[0]?.message).toMatch(/Driver 'mine' returned/);
  });

  it('a message whose text is not a string is refused where it is made, and the failure is saved', async () => {
    const done = await runSaved({ driver: scriptedDriver([{ text: 42 as unknown as string }]) });
    expect(done.status()).toBe(ExecutionStatus.Failed);
    expect(done.errors()[0]?.code).toBe('INVALID_ARGUMENT');
    expect(done.errors()[0]?.message).toMatch(/content.*number/);
  });
});

describe('usage a driver reports that is not a count', () => {
  const hostile = {
    [Symbol.toPrimitive]() {
      throw new Error('no primitive');
    },
  };
  it.each([
    ['a string of digits', '12', /inputTokens = "12" \(a string\)/],
    ['an object whose conversion throws', hostile, /inputTokens = a value of type object/],
  ])(
    '%s fails the run with INVALID_USAGE naming the field and the kind of value',
    async (_label, tokens, message) => {
      const driver = scriptedDriver([{ text: 'done', usage: { inputTokens: tokens as unknown as number } }]);
      const done = await runSaved({ driver });
      expect(done.status()).toBe(ExecutionStatus.Failed);
      expect(done.errors()[0]?.code).toBe('INVALID_USAGE');
      expect(done.errors()[0]?.message).toMatch(message);
    },
  );
});

describe('a thrown value that is not an Error is recorded as such', () => {
  it.each([
    ['null', null, 'null was thrown, not an Error'],
    ['undefined', undefined, 'undefined was thrown, not an Error'],
    ['an empty string', '', '"" was thrown, not an Error'],
    ['an object without a message', { retry: false }, '{"retry":false} was thrown, not an Error'],
    ['a huge object', { blob: 'x'.repeat(100_000) }, /^\{"blob":"x+… was thrown, not an Error$/],
    ['a string', 'quota exceeded', 'quota exceeded'],
  ])('%s, by a tool and by a hook', async (_label, thrown, message) => {
    const bad = defineTool({
      description: 'Bad',
      inputSchema: z.object({}),
      execute: async () => {
        throw thrown;
      },
    });
    const byTool = await runSaved({
      driver: scriptedDriver([{ toolCalls: [{ id: 't1', name: 'bad', args: {} }] }, { text: 'done' }]),
      tools: { bad },
    });
    expect(byTool.steps()[0]?.toolExecutions()[0]?.error()?.message).toMatch(message);
    const byHook = await runSaved({
      driver: scriptedDriver([{ text: 'done' }]),
      hooks: [
        {
          afterStep: () => {
            throw thrown;
          },
        },
      ],
    });
    expect(byHook.errors()[0]?.message).toMatch(message);
  });
});

describe('a tool result that cannot be read fails its call with VALUE_NOT_SAVABLE, naming where', () => {
  const trap = (name: string) => () => {
    throw new Error(`${name} trap`);
  };
  it.each([
    [
      'a getter that throws',
      () => ({
        ok: 1,
        get bad() {
          return trap('getter')();
        },
      }),
      /at bad\): reading it threw: getter trap/,
    ],
    [
      'a proxy whose ownKeys trap throws',
      () => ({ inner: new Proxy({}, { ownKeys: trap('ownKeys') }) }),
      /at inner\): its keys cannot be read: ownKeys trap/,
    ],
    [
      'a proxy whose get trap throws',
      () => ({ inner: new Proxy({ a: 1 }, { get: trap('get') }) }),
      /at inner\): reading it threw: get trap/,
    ],
    ['a revoked proxy', () => ({ inner: revoked() }), /at inner\).*revoked/],
    // JSON.stringify would make these `undefined` (recorded as null): a result lost without a word
    ['a function (returned instead of called)', () => () => 1, /at \(root\)\): a function has no JSON form/],
    ['a symbol', () => Symbol('s'), /at \(root\)\): a symbol has no JSON form/],
  ])('%s', async (_label, make, message) => {
    const odd = defineTool({ description: 'Odd', inputSchema: z.object({}), execute: async () => make() });
    const done = await runSaved({
      driver: scriptedDriver([{ toolCalls: [{ id: 't1', name: 'odd', args: {} }] }, { text: 'done' }]),
      tools: { odd },
    });
    expect(done.status()).toBe(ExecutionStatus.Completed);
    const error = done.steps()[0]?.toolExecutions()[0]?.error();
    expect(error?.code).toBe('VALUE_NOT_SAVABLE');
    expect(error?.message).toMatch(/The result of tool call 't1' \(odd\)/);
    expect(error?.message).toMatch(message);
  });
});
