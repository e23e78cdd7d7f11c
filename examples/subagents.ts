/**
 * npx tsx examples/subagents.ts
 *
 * A tree of three levels: an editor asks a researcher, who sends two fetchers out in parallel.
 * Every subagent runs on its own budget capped by what its caller has left (parallel calls share
 * it), so the tree can never spend more than the editor's budget: here one fetcher runs out of
 * tokens, the researcher reports what it has, and the editor still answers. At the end the tree
 * of agents is printed from the final state (`toolExecution.childState()`), with each agent's
 * steps, usage and the budget it ran on. A scripted model plays every agent (offline).
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';
import {
  AgentState,
  createAgent,
  ExecutionBudget,
  type ScriptStep,
  type SubagentDefinition,
  scriptedDriver,
} from '../src/index';
import { search } from './support/travel';

const taskOf = (state: AgentState) => state.messages()[0]?.content ?? '';
const lastToolResult = (state: AgentState) => state.messages().findLast((m) => m.role === 'tool')?.content;

const fetcher: SubagentDefinition = {
  description: 'Finds one fact with the search tool',
  tools: { search },
  subagents: { agents: {} }, // a leaf: it does not inherit its caller's subagents
  budget: new ExecutionBudget({ maxSteps: 3 }),
  // The hotel fetcher is thorough: it keeps searching, 700 tokens a step, until its budget ends.
  driver: scriptedDriver([
    (state): ScriptStep => ({
      toolCalls: [{ name: 'search', args: { query: taskOf(state) } }],
      usage: taskOf(state).includes('hotel')
        ? { inputTokens: 600, outputTokens: 100 }
        : { inputTokens: 150, outputTokens: 50 },
    }),
    (state): ScriptStep =>
      taskOf(state).includes('hotel')
        ? {
            text: 'Let me check one more source.',
            toolCalls: [{ name: 'search', args: { query: 'Lisbon hotel reviews' } }],
            usage: { inputTokens: 600, outputTokens: 100 },
          }
        : { text: lastToolResult(state) ?? '', usage: { inputTokens: 220, outputTokens: 40 } },
  ]),
};

const researcher: SubagentDefinition = {
  description: 'Researches a destination by sending fetchers for each fact',
  budget: new ExecutionBudget({ maxSteps: 4, maxTokens: 10_000 }), // capped to what the editor has left
  subagents: { agents: { fetcher } },
  driver: scriptedDriver([
    {
      toolCalls: [
        { name: 'fetcher', args: { task: 'Lisbon weather May' } },
        { name: 'fetcher', args: { task: 'Lisbon hotel price' } },
      ],
      usage: { inputTokens: 200, outputTokens: 50 },
    },
    {
      text: 'Weather: highs of 22 °C in May, about 5 rainy days. Hotel prices: not found (the fetcher ran out of budget).',
      usage: { inputTokens: 160, outputTokens: 40 },
    },
  ]),
};

const editor = createAgent({
  budget: new ExecutionBudget({ maxSteps: 6, maxTokens: 3_000 }),
  subagents: { maxDepth: 2, agents: { researcher } },
  driver: scriptedDriver([
    {
      toolCalls: [{ name: 'researcher', args: { task: 'Lisbon in May: weather and hotel prices' } }],
      usage: { inputTokens: 250, outputTokens: 50 },
    },
    {
      text: 'Lisbon in May is warm (22 °C) with little rain; check hotel prices before booking.',
      usage: { inputTokens: 300, outputTokens: 50 },
    },
  ]),
});

// Each agent actor's budget is in its machine context; `inspect` hands us every actor of the tree.
const actors: AnyActorRef[] = [];
const inspect = (event: InspectionEvent) => {
  if (event.type === '@xstate.actor') actors.push(event.actorRef as AnyActorRef);
};

const state = await editor.execute(AgentState.empty().withUserMessage('Is Lisbon a good idea in May?'), {
  inspect,
});

const budgets = new Map<string, ExecutionBudget>();
for (const actor of actors) {
  const context = actor.getSnapshot().context as { state?: unknown; budget?: unknown } | undefined;
  if (context?.state instanceof AgentState && context.budget instanceof ExecutionBudget) {
    budgets.set(context.state.agentId(), context.budget);
  }
}

const n = (value: number | null | undefined) => value?.toLocaleString('en-US') ?? 'unlimited';

function printTree(name: string, agent: AgentState, indent = ''): void {
  const budget = budgets.get(agent.agentId());
  const ending =
    agent.stopReason() === 'completed' ? 'completed' : `${agent.status()}: ${agent.stopSignal()?.message}`;
  console.log(
    `${indent}${name}: ${ending}, ${agent.stepCount()} steps, ${n(agent.usage().totalTokens)} tokens` +
      ` (budget ${n(budget?.maxSteps)} steps, ${n(budget?.maxTokens)} tokens)`,
  );
  agent.steps().forEach((step, i) => {
    const own = step.inferenceResponse().usage.totalTokens;
    const bySubagents = step.usage().totalTokens - own;
    const calls = step.toolExecutions().map((call) => call.name() + (call.hasError() ? ' (failed)' : ''));
    console.log(
      `${indent}  step ${i + 1} ${step.stepType()}: ${n(own)} tokens` +
        (bySubagents ? ` + ${n(bySubagents)} by subagents` : '') +
        (calls.length ? `, called ${calls.join(', ')}` : ''),
    );
    for (const call of step.toolExecutions()) {
      const child = call.childState();
      if (child) printTree(call.name(), child, `${indent}    `);
    }
  });
}

printTree('editor', state);
console.log(`\nanswer: ${state.finalResponse()}`);
console.log(
  `usage: ${n(state.usage().totalTokens)} tokens for the whole tree, within the editor's ${n(editor.budget.maxTokens)}`,
);
if (state.status() !== 'completed') {
  console.error(`the run ended ${state.status()} (${state.stopReason()})`);
  process.exitCode = 1;
}
