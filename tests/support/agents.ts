import { z } from 'zod';
import type { AgentState } from '../../src/state/agent-state';
import type { AgentEvent } from '../../src/state/loop-events';
import { defineTool } from '../../src/tools/define-tool';

/** A trivial tool: adds two numbers. */
export const add = defineTool({
  description: 'Add two numbers',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});

/** A tool that fails with the given message. */
export const failing = defineTool({
  description: 'Always fails',
  inputSchema: z.object({}),
  execute: async () => {
    throw new Error('tool exploded');
  },
});

export const addCall = (a = 2, b = 3, id = `call-${a}-${b}`) => ({ name: 'add', args: { a, b }, id });

/** Collects every event an actor emits. */
export function recordEvents(actor: {
  on: (type: '*', fn: (e: AgentEvent) => void) => unknown;
}): AgentEvent[] {
  const events: AgentEvent[] = [];
  actor.on('*', (event) => events.push(event));
  return events;
}

/** Resolves once `predicate` holds for the actor's snapshot. */
export function waitForState(
  actor: {
    subscribe: (fn: (s: { value: unknown; context: { state: AgentState } }) => void) => {
      unsubscribe(): void;
    };
    getSnapshot(): { value: unknown; context: { state: AgentState } };
  },
  predicate: (snapshot: { value: unknown; context: { state: AgentState } }) => boolean,
): Promise<void> {
  return new Promise((resolve) => {
    if (predicate(actor.getSnapshot())) return resolve();
    const sub = actor.subscribe((s) => {
      if (predicate(s)) {
        sub.unsubscribe();
        resolve();
      }
    });
  });
}

export const inState = (path: string) => (s: { value: unknown }) =>
  JSON.stringify(s.value).includes(`"${path}"`);
