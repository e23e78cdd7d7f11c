/**
 * Values a user sets on a state (`withSystemPrompt`, `withUserMessage`, `withMetadata`,
 * `withLlmConfig`) are checked where they are set: what JSON cannot hold is refused with a typed
 * error naming it, what it holds differently is kept in its JSON form, so a session saved from the
 * state loads as it was. A `null` system prompt made a run whose every checkpoint was corrupt.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';
import { MAX_VALUE_DEPTH, UnsavableValueError, ValueTooDeepError } from '../../src/state/json-value';
import { tempDir } from '../persistence/fixtures';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups) await cleanup();
  cleanups = [];
});

const nested = (levels: number) => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`);
const cyclic = () => {
  const value: Record<string, unknown> = {};
  value.self = value;
  return value;
};

describe('values set on a state', () => {
  it.each([
    ['null', null],
    ['a number', 42],
    ['an object', { text: 'hi' }],
  ])('a system prompt that is %s is refused with InvalidArgumentError', (_label, prompt) => {
    expect(() => AgentState.empty().withSystemPrompt(prompt as unknown as string)).toThrow(
      InvalidArgumentError,
    );
    expect(() => AgentState.empty().withSystemPrompt(prompt as unknown as string)).toThrow(/systemPrompt/);
  });

  it.each([
    ['null', null],
    ['a number', 42],
  ])('a user message that is %s is refused with InvalidArgumentError', (_label, content) => {
    expect(() => AgentState.empty().withUserMessage(content as unknown as string)).toThrow(
      InvalidArgumentError,
    );
  });

  it.each([
    ['a BigInt', 1n, UnsavableValueError, /Metadata 'k'.*BigInt/],
    ['a cycle', cyclic(), UnsavableValueError, /Metadata 'k'.*cycle/],
    ['too deep', nested(MAX_VALUE_DEPTH + 1), ValueTooDeepError, /Metadata 'k'/],
  ])('metadata that is %s is refused, naming the key', (_label, value, type, message) => {
    expect(() => AgentState.empty().withMetadata('k', value)).toThrow(type);
    expect(() => AgentState.empty().withMetadata('k', value)).toThrow(message);
  });

  it('a metadata key that is not a string is refused (an object would be stored as "[object Object]")', () => {
    const state = AgentState.empty() as unknown as { withMetadata(key: unknown, value?: unknown): unknown };
    expect(() => state.withMetadata({ a: 1 })).toThrow(InvalidArgumentError);
    expect(() => state.withMetadata(7, 'x')).toThrow(/expected a string, got number/);
  });

  it('llmConfig that JSON cannot hold is refused', () => {
    expect(() => AgentState.empty().withLlmConfig({ seed: 1n })).toThrow(UnsavableValueError);
  });

  it('metadata and llmConfig are kept in their JSON form, and a session saved from them loads as it was', async () => {
    const state = AgentState.empty()
      .withMetadata('when', new Date(0))
      .withMetadata('n', Number.NaN)
      .withMetadata('list', [1, undefined, () => 1])
      .withLlmConfig({ temperature: 0.2, at: new Date(0) })
      .withUserMessage('go');
    expect(state.metadata()).toMatchObject({
      when: '1970-01-01T00:00:00.000Z',
      n: null,
      list: [1, null, null],
    });
    expect(state.llmConfig()).toEqual({ temperature: 0.2, at: '1970-01-01T00:00:00.000Z' });
    const { dir, remove } = await tempDir();
    const store = new FileSessionStore(dir);
    cleanups.push(async () => {
      await store.close();
      await remove();
    });
    const done = await createAgent({ driver: scriptedDriver([{ text: 'ok' }]), store }).execute(state, {
      sessionId: 's',
    });
    expect((await new FileSessionStore(dir).load('s'))?.state.toJSON()).toEqual(done.toJSON());
    expect(done.metadata()).toMatchObject({ when: '1970-01-01T00:00:00.000Z', n: null });
  });
});
