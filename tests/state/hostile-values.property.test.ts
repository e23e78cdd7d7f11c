/**
 * Property: whatever a run takes in (tool results and throws, tool-call arguments, usage, with
 * hostile keys, deep nesting and odd numbers) is either refused where it enters, with a typed
 * error recorded on the step, or saved by every store and loaded back equal.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RedisSessionStore } from '../../src/distributed/index';
import { type ScriptStep, scriptedDriver } from '../../src/drivers/scripted-driver';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { SessionStore } from '../../src/persistence/index';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { MAX_VALUE_DEPTH } from '../../src/state/json-value';
import { defineTool, type ToolSet } from '../../src/tools/define-tool';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';

const key = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    '',
    '0',
    '-1',
    'a.b',
  ),
  fc.string({ maxLength: 4 }),
);
const leaf = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0, Number.MAX_VALUE, Number.MIN_VALUE),
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
/** Values of any depth around the limit, a cycle now and then, a BigInt now and then. */
const hostile = fc.oneof(
  { weight: 6, arbitrary: tree },
  {
    weight: 2,
    arbitrary: fc
      .tuple(tree, fc.integer({ min: MAX_VALUE_DEPTH - 3, max: MAX_VALUE_DEPTH + 3 }), fc.boolean())
      .map(([inner, depth, asArray]) => {
        let value: unknown = inner;
        for (let i = 0; i < depth; i++) value = asArray ? [value] : record([['__proto__', value]]);
        return value;
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
const count = fc.oneof(
  { weight: 8, arbitrary: fc.nat({ max: 50 }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, Number.NaN, Number.POSITIVE_INFINITY) },
);
const call = fc.record({
  id: fc.constantFrom('', 'same', '__proto__', 'c1', 'c2'),
  args: hostile,
  result: hostile,
  throws: fc.boolean(),
});
const scenario = fc.array(
  fc.record({
    calls: fc.array(call, { minLength: 1, maxLength: 3 }),
    usage: fc.record({ inputTokens: count, outputTokens: count }),
  }),
  { minLength: 1, maxLength: 2 },
);

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

/** One tool per call (`t0`, `t1`, ...), returning or throwing that call's value. */
function build(steps: Scenario): {
  script: ScriptStep[];
  tools: ToolSet;
  outcomes: Map<string, { value: unknown; throws: boolean }>;
} {
  const tools: Record<string, ReturnType<typeof defineTool>> = {};
  const outcomes = new Map<string, { value: unknown; throws: boolean }>();
  let n = 0;
  const script: ScriptStep[] = steps.map((step) => ({
    usage: step.usage,
    toolCalls: step.calls.map((c) => {
      const name = `t${n++}`;
      outcomes.set(name, { value: c.result, throws: c.throws });
      tools[name] = defineTool({
        description: name,
        inputSchema: z.unknown(),
        execute: async () => {
          if (c.throws) throw c.result;
          return c.result;
        },
      });
      return { id: c.id, name, args: c.args };
    }),
  }));
  script.push({ text: 'done' });
  return { script, tools, outcomes };
}

/** JSON.stringify's text, or null when it cannot write the value (a cycle, a BigInt, too deep). */
function jsonText(value: unknown): string | null {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return null;
  }
}

let redis: RedisServer;
let dir: string;
const stores: Array<{ name: string; open: () => SessionStore }> = [];
const opened: SessionStore[] = [];
beforeAll(async () => {
  redis = await startRedisServer();
  dir = await mkdtemp(join(tmpdir(), 'agent-machine-hostile-stores-'));
  const prefix = `hostile-${randomUUID()}:`;
  const keep = (store: SessionStore) => {
    opened.push(store);
    return store;
  };
  stores.push(
    {
      name: 'memory',
      open: (() => {
        const documents = new Map<string, string>();
        return () => keep(new InMemorySessionStore({ documents }));
      })(),
    },
    { name: 'file', open: () => keep(new FileSessionStore(join(dir, 'files'))) },
    { name: 'sqlite', open: () => keep(new SqliteSessionStore(join(dir, 'sessions.db'))) },
    { name: 'redis', open: () => keep(new RedisSessionStore({ connection: redis.connection, prefix })) },
  );
}, 20_000);
afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('hostile run-time values and every store', () => {
  it('each value is refused at entry with a typed error, or saved and loaded equal', {
    timeout: 300_000,
  }, async () => {
    let session = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (steps) => {
        const { script, tools, outcomes } = build(steps);
        for (const { name, open } of stores) {
          const store = open();
          const sessionId = `s${session++}`;
          const agent = createAgent({ driver: scriptedDriver(script), tools, store });
          const done = await agent.execute(AgentState.empty().withUserMessage('Go'), { sessionId });

          const loaded = (await open().load(sessionId))?.state;
          expect(loaded, name).toBeInstanceOf(AgentState);
          expect(JSON.stringify(loaded), name).toBe(JSON.stringify(done));
          expect(loaded?.toJSON(), name).toEqual(done.toJSON());

          for (const execution of done.steps().flatMap((s) => s.toolExecutions())) {
            const outcome = outcomes.get(execution.name());
            const error = execution.error();
            if (outcome === undefined || outcome.throws) continue;
            if (error === null) expect(JSON.stringify(execution.value())).toBe(jsonText(outcome.value));
            else expect(['VALUE_TOO_DEEP', 'VALUE_NOT_SAVABLE']).toContain(error.code);
          }
        }
      }),
      { numRuns: 40 },
    );
  });
});
