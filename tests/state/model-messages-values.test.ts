import { describe, expect, it } from 'vitest';
import { fromModelMessages } from '../../src/messages/model-messages';
import type { ModelMessageInput } from '../../src/messages/shapes';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';
import { UnsavableValueError, ValueTooDeepError } from '../../src/state/json-value';
import { tempDir } from '../persistence/fixtures';

const nested = (levels: number) => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`);
const call = (input: unknown, providerOptions?: unknown) => ({
  role: 'assistant',
  content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'add', input, providerOptions }],
});

/** The error `fromModelMessages(messages)` throws. */
function refusal(messages: readonly ModelMessageInput[]): Error {
  try {
    fromModelMessages(messages);
  } catch (error) {
    return error as Error;
  }
  throw new Error('fromModelMessages accepted the value');
}

describe('fromModelMessages checks the values it takes in', () => {
  it('refuses provider options that are not objects of options, naming the path', () => {
    const error = refusal([{ role: 'user', content: 'Hi', providerOptions: { openai: null } }]);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toContain('messages[0].providerOptions.openai');
    const onPart = refusal([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Yes', providerOptions: { openai: 'x' } }] },
    ]);
    expect(onPart).toBeInstanceOf(InvalidArgumentError);
    expect(onPart.message).toContain('messages[1].content[0].providerOptions.openai');
    expect(refusal([{ role: 'user', content: 'Hi', providerOptions: [1] }]).message).toContain(
      'messages[0].providerOptions',
    );
  });

  it('refuses a tool call input nested 600 levels deep, naming the path', () => {
    const error = refusal([{ role: 'user', content: 'Go' }, call(nested(600))]);
    expect(error).toBeInstanceOf(ValueTooDeepError);
    expect((error as ValueTooDeepError).code).toBe('VALUE_TOO_DEEP');
    expect(error.message).toContain('messages[1].content[0].input');
  });

  it('refuses a BigInt anywhere (input, provider options, a JSON tool result), naming the path', () => {
    const inInput = refusal([call({ n: 10n })]);
    expect(inInput).toBeInstanceOf(UnsavableValueError);
    expect(inInput.message).toContain('messages[0].content[0].input');
    expect(inInput.message).toContain('.n');
    const inOptions = refusal([call({}, { openai: { id: 1n } })]);
    expect(inOptions).toBeInstanceOf(UnsavableValueError);
    expect(inOptions.message).toContain('messages[0].content[0].providerOptions.openai');
    const inResult = refusal([
      call({}),
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'add', output: { type: 'json', value: [2n] } },
        ],
      },
    ]);
    expect(inResult).toBeInstanceOf(UnsavableValueError);
    expect(inResult.message).toContain('messages[1].content[0].output.value');
  });

  it('keeps what JSON can hold, as JSON writes it, so the state saves and loads', async () => {
    const state = fromModelMessages([
      { role: 'user', content: 'Go', providerOptions: { openai: { when: new Date(0), skip: undefined } } },
      call({ n: Number.NaN, list: [undefined] }),
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'add',
            output: { type: 'json', value: undefined },
          },
        ],
      },
    ]);
    const [user, assistant, tool] = state.messages();
    expect(user?.providerMetadata).toEqual({ openai: { when: '1970-01-01T00:00:00.000Z' } });
    expect(assistant?.toolCalls?.[0]?.args).toEqual({ n: null, list: [null] });
    expect(tool?.content).toBe('null');
    const { dir, remove } = await tempDir();
    const store = new SqliteSessionStore(`${dir}/sessions.db`);
    try {
      await store.save('s', state, null);
      expect((await store.load('s'))?.state.toJSON()).toEqual(state.toJSON());
      expect(AgentState.fromJSON(JSON.parse(JSON.stringify(state))).toJSON()).toEqual(state.toJSON());
    } finally {
      await store.close();
      await remove();
    }
  });
});
