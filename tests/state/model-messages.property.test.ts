/**
 * Property: whatever `fromModelMessages` accepts (AI SDK messages of every role and part, with
 * hostile values in their inputs, results and provider options) round-trips through
 * toJSON/fromJSON and through a real SQLite store's save and load; what it refuses, it refuses
 * with a typed error of this library.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromModelMessages } from '../../src/messages/model-messages';
import type { ModelMessageInput } from '../../src/messages/shapes';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { AgentState } from '../../src/state/agent-state';
import { AgentMachineError } from '../../src/state/errors';
import { MAX_VALUE_DEPTH } from '../../src/state/json-value';
import { tempDir } from '../persistence/fixtures';

const key = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', '', '0', 'a.b'),
  fc.string({ maxLength: 4 }),
);
const leaf = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constantFrom(Number.NaN, Number.NEGATIVE_INFINITY, -0),
  fc.date(),
);
/** An object built with own properties only: `__proto__` stays a key, as `JSON.parse` makes it. */
const record = (entries: ReadonlyArray<readonly [string, unknown]>) => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries)
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
};
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('tree'), { maxLength: 3 }),
  object: fc.array(fc.tuple(key, tie('tree')), { maxLength: 3 }).map(record),
}));
/** Values around the depth limit, a cycle, a BigInt, now and then. */
const value = fc.oneof(
  { weight: 8, arbitrary: tree },
  {
    weight: 2,
    arbitrary: fc
      .tuple(tree, fc.integer({ min: MAX_VALUE_DEPTH - 3, max: 600 }), fc.boolean())
      .map(([inner, depth, asArray]) => {
        let nested: unknown = inner;
        for (let i = 0; i < depth; i++) nested = asArray ? [nested] : record([['__proto__', nested]]);
        return nested;
      }),
  },
  {
    weight: 1,
    arbitrary: tree.map((inner) => {
      const cyclic: Record<string, unknown> = { inner };
      cyclic.self = cyclic;
      return cyclic;
    }),
  },
  { weight: 1, arbitrary: fc.bigInt().map((n) => ({ n })) },
);
/** Provider options: absent, well formed, or anything at all in their place. */
const providerOptions = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.record({ openai: fc.dictionary(key, value, { maxKeys: 2 }) }) },
  { weight: 2, arbitrary: fc.dictionary(key, value, { maxKeys: 2 }) },
  { weight: 1, arbitrary: value },
);
const withOptions = <T extends object>(part: fc.Arbitrary<T>) =>
  fc.tuple(part, providerOptions).map(([p, o]) => (o === undefined ? p : { ...p, providerOptions: o }));
const ids = { toolCallId: fc.constantFrom('c1', 'c2', '__proto__'), toolName: fc.constantFrom('add', '') };
const output = fc.oneof(
  fc.record({ type: fc.constantFrom('text', 'error-text'), value: fc.string({ maxLength: 6 }) }),
  fc.record({ type: fc.constantFrom('json', 'error-json'), value }),
  fc.record({ type: fc.constant('execution-denied'), reason: fc.option(fc.string({ maxLength: 6 })) }),
  fc.record({
    type: fc.constant('content'),
    value: fc.array(fc.oneof(fc.record({ type: fc.constant('text'), text: fc.string() }), value), {
      maxLength: 2,
    }),
  }),
);
const text = withOptions(fc.record({ type: fc.constant('text'), text: fc.string({ maxLength: 8 }) }));
const reasoning = withOptions(
  fc.record({ type: fc.constant('reasoning'), text: fc.string({ maxLength: 8 }) }),
);
const file = withOptions(
  fc.record({
    type: fc.constant('file'),
    data: fc.oneof(
      fc.base64String({ maxLength: 8 }),
      fc.constant('https://example.com/a.png'),
      fc.uint8Array({ maxLength: 4 }),
    ),
    mediaType: fc.constantFrom('image/png', 'application/pdf'),
  }),
);
const toolCall = withOptions(
  fc.record({
    type: fc.constant('tool-call'),
    ...ids,
    input: value,
    providerExecuted: fc.option(fc.boolean(), { nil: undefined }),
  }),
);
const toolResult = withOptions(fc.record({ type: fc.constant('tool-result'), ...ids, output }));
const message: fc.Arbitrary<ModelMessageInput> = fc.oneof(
  withOptions(fc.record({ role: fc.constant('system'), content: fc.string({ maxLength: 8 }) })),
  withOptions(
    fc.record({
      role: fc.constant('user'),
      content: fc.oneof(fc.string({ maxLength: 8 }), fc.array(fc.oneof(text, file), { maxLength: 3 })),
    }),
  ),
  withOptions(
    fc.record({
      role: fc.constant('assistant'),
      content: fc.oneof(
        fc.string({ maxLength: 8 }),
        fc.array(fc.oneof(text, reasoning, file, toolCall, toolResult), { maxLength: 4 }),
      ),
    }),
  ),
  withOptions(
    fc.record({ role: fc.constant('tool'), content: fc.array(toolResult, { minLength: 1, maxLength: 2 }) }),
  ),
);

let store: SqliteSessionStore;
let remove: () => Promise<void>;
beforeAll(async () => {
  const temp = await tempDir();
  remove = temp.remove;
  store = new SqliteSessionStore(join(temp.dir, 'sessions.db'));
});
afterAll(async () => {
  await store?.close();
  await remove?.();
});

describe('fromModelMessages and the state format', () => {
  it('what it accepts saves and loads equal; what it refuses gets a typed error', {
    timeout: 120_000,
  }, async () => {
    let session = 0;
    let accepted = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 4 }), async (messages) => {
        let state: AgentState;
        try {
          state = fromModelMessages(messages);
        } catch (error) {
          expect(error).toBeInstanceOf(AgentMachineError);
          expect((error as AgentMachineError).message).toMatch(/messages\[\d+\]/);
          refused++;
          return;
        }
        accepted++;
        const json = state.toJSON();
        expect(AgentState.fromJSON(JSON.parse(JSON.stringify(state))).toJSON()).toEqual(json);
        const sessionId = `s${session++}`;
        await store.save(sessionId, state, null);
        const loaded = await store.load(sessionId);
        expect(loaded?.state.toJSON()).toEqual(json);
      }),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(30);
    expect(refused).toBeGreaterThan(30);
  });
});
