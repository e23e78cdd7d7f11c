/**
 * Property-based runs: fast-check generates scripted models (tool calls that succeed or fail,
 * model errors, final answers, usage), budgets, error policies and stop times; every run, watched
 * at each snapshot, keeps the loop's invariants.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ScriptStep, scriptedDriver } from '../../src/drivers/scripted-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import type { AgentEvent } from '../../src/state/loop-events';
import { invariantViolations } from '../../src/testing/invariants';
import { add, failing } from '../support/agents';

const call = fc.oneof(
  fc.record({ name: fc.constant('add'), args: fc.record({ a: fc.integer(), b: fc.integer() }) }),
  fc.record({ name: fc.constant('add'), args: fc.constant({ a: 'not a number' }) }),
  fc.record({ name: fc.constant('failing'), args: fc.constant({}) }),
  fc.record({ name: fc.constant('missing'), args: fc.constant({}) }),
);
const usage = fc.record({
  inputTokens: fc.nat(300),
  outputTokens: fc.nat(300),
  cost: fc.double({ min: 0, max: 0.2, noNaN: true }),
});
const answer: fc.Arbitrary<ScriptStep> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ toolCalls: fc.array(call, { minLength: 1, maxLength: 3 }), usage }) },
  { weight: 2, arbitrary: fc.record({ text: fc.string({ minLength: 1 }), usage }) },
  { weight: 1, arbitrary: fc.constant({ error: new Error('model down') }) },
);
const scenario = fc.record({
  script: fc.array(answer, { minLength: 1, maxLength: 8 }),
  maxSteps: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }),
  maxTokens: fc.option(fc.integer({ min: 1, max: 2_000 }), { nil: null }),
  maxCost: fc.option(fc.double({ min: 0.01, max: 1, noNaN: true }), { nil: null }),
  errorSteps: fc.integer({ min: 1, max: 4 }),
  stopAfter: fc.option(fc.integer({ min: 0, max: 5 }), { nil: null }),
  concurrency: fc.integer({ min: 1, max: 3 }),
});

describe('random scripted runs keep the invariants', () => {
  it('holds for every generated run, at every snapshot', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const budget = new ExecutionBudget({
          maxSteps: s.maxSteps ?? 10,
          maxTokens: s.maxTokens,
          maxCost: s.maxCost,
        });
        const agent = createAgent({
          driver: scriptedDriver(s.script),
          tools: { add, failing },
          budget,
          errorPolicy: { maxConsecutiveErrorSteps: s.errorSteps },
          toolConcurrency: s.concurrency,
        });
        const actor = agent.createActor(AgentState.empty().withUserMessage('go'));
        const events: AgentEvent[] = [];
        const broken: string[] = [];
        let previous: AgentState | undefined;
        actor.on('*', (event) => {
          events.push(event);
          if (event.type === 'step.finished' && s.stopAfter !== null && event.stepNumber >= s.stopAfter) {
            queueMicrotask(() => actor.send({ type: 'stop' }));
          }
        });
        const done = new Promise<AgentState>((resolve, reject) => {
          actor.subscribe({
            next: (snapshot) => {
              const state = snapshot.context.state;
              broken.push(...invariantViolations({ snapshot, state, previous, budget, events }));
              previous = state;
              if (['completed', 'stopped', 'failed'].some((o) => snapshot.matches(o as never)))
                resolve(state);
            },
            error: reject,
          });
        });
        actor.start();
        actor.send({ type: 'execute' });
        const final = await done;
        actor.stop();
        expect(broken).toEqual([]);
        expect(['completed', 'stopped', 'failed']).toContain(final.status());
        const started = events.filter((e) => e.type === 'tool.started').length;
        expect(final.toolExecutions()).toHaveLength(started);
        // the final state round-trips
        expect(AgentState.fromJSON(JSON.parse(JSON.stringify(final))).toJSON()).toEqual(
          JSON.parse(JSON.stringify(final)),
        );
      }),
      { numRuns: 150 },
    );
  });
});
