/**
 * npm run demo        (the same as: npx tsx examples/demo.ts)
 *
 * A trip planner agent with a calculator tool and one subagent, a researcher with a search tool.
 * Every step of both agents is printed as it happens, the researcher's steps indented under the
 * planner's call to it, then the final answer and the token usage. The run is recorded as a trace
 * and written as the run viewer's page, demo-output/run.html: one HTML file that needs no network
 * (open it in a browser; demo-output/ is git-ignored).
 *
 * Offline by default: a scripted model plays both agents. The same agents run on a real model
 * (any OpenAI-compatible chat-completions API) when OPENAI_API_KEY is set:
 *
 *   OPENAI_API_KEY=sk-... npm run demo
 *   OPENAI_API_KEY=... OPENAI_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_MODEL=llama3.2 npm run demo
 *
 * (OPENAI_BASE_URL defaults to https://api.openai.com/v1, OPENAI_MODEL to gpt-4o-mini.)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import {
  type AgentEvent,
  AgentState,
  createAgent,
  ExecutionBudget,
  modelDriver,
  scriptedDriver,
  type Usage,
} from '../src/index';
import { combineInspectors, recordTrace, renderRunViewer } from '../src/inspect/index';
import { calculator, search } from './support/travel';

const apiKey = process.env.OPENAI_API_KEY;
const baseURL = process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
const modelId = process.env.OPENAI_MODEL ?? 'gpt-4o-mini';
const realModel = apiKey
  ? modelDriver(
      createOpenAICompatible({ name: 'openai', baseURL, apiKey, includeUsage: true }).chatModel(modelId),
    )
  : null;

// The scripted model: what a model answers at each step of each agent, with its token usage.
const plannerScript = scriptedDriver([
  {
    text: "I'll ask the researcher for the weather and the prices.",
    toolCalls: [
      {
        name: 'researcher',
        args: {
          task: 'Find the May weather in Lisbon, a mid-range hotel price and return flights from Paris.',
        },
      },
    ],
    usage: { inputTokens: 412, outputTokens: 61 },
  },
  {
    text: 'Now the cost of 3 nights and the flight.',
    toolCalls: [{ name: 'calculator', args: { expression: '3 x 95 + 120' } }],
    usage: { inputTokens: 548, outputTokens: 33 },
  },
  {
    text: 'Multiplication is "*", not "x".',
    toolCalls: [{ name: 'calculator', args: { expression: '3 * 95 + 120' } }],
    usage: { inputTokens: 617, outputTokens: 29 },
  },
  {
    text:
      'Lisbon is a good pick for May: highs around 22 °C and only a few rainy days. Three nights in a ' +
      'mid-range hotel (€95 a night) and a €120 return flight from Paris come to €405.',
    usage: { inputTokens: 672, outputTokens: 54 },
  },
]);
const researcherScript = scriptedDriver([
  {
    text: 'One search per fact.',
    toolCalls: [
      { name: 'search', args: { query: 'Lisbon weather May' } },
      { name: 'search', args: { query: 'Lisbon hotel price' } },
      { name: 'search', args: { query: 'flights Paris Lisbon' } },
    ],
    usage: { inputTokens: 231, outputTokens: 64 },
  },
  {
    text: 'Weather: highs of 22 °C, about 5 rainy days in May. Hotel: about €95 a night. Flights: from €120 return.',
    usage: { inputTokens: 389, outputTokens: 41 },
  },
]);

const agent = createAgent({
  driver: realModel ?? plannerScript,
  systemPrompt:
    'You plan trips. Ask the researcher for facts (weather, prices) and use the calculator for every ' +
    'sum. Answer in two or three sentences.',
  tools: { calculator },
  budget: new ExecutionBudget({ maxSteps: 8, maxTokens: 40_000, maxSeconds: 120 }),
  subagents: {
    agents: {
      researcher: {
        description: 'Looks up travel facts (weather, hotel and flight prices) and reports them briefly',
        systemPrompt:
          'You research travel facts with the search tool, one query per fact, and report them briefly.',
        driver: realModel ?? researcherScript,
        tools: { search },
        subagents: { agents: {} }, // a leaf: without this it would inherit the planner's subagents
        budget: new ExecutionBudget({ maxSteps: 4 }),
      },
    },
  },
});

// Progress: every agent actor (the planner's and, as its child, the researcher's) is announced to
// `inspect` when it is created; we listen to the events it emits. A subagent's lines are indented
// under its caller's.
const indents = new Map<string, string>();
const indentOf = (e: AgentEvent) => {
  let indent = indents.get(e.agentId);
  if (indent === undefined) {
    indent = e.parentAgentId === null ? '' : `${indents.get(e.parentAgentId) ?? ''}      `;
    indents.set(e.agentId, indent);
  }
  return indent;
};
const n = (value: number | null) => value?.toLocaleString('en-US') ?? 'unlimited';
const tokens = (u: Usage) => `${n(u.totalTokens)} tokens (${n(u.inputTokens)} in, ${n(u.outputTokens)} out)`;
const steps = (count: number) => `${count} ${count === 1 ? 'step' : 'steps'}`;
const limits = (b: ExecutionBudget) => `${n(b.maxSteps)} steps and ${n(b.maxTokens)} tokens`;
const brief = (value: unknown) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
};

function watch(actor: AnyActorRef) {
  const context = () => actor.getSnapshot().context as { state: AgentState; budget: ExecutionBudget };
  let saidInStep = 0; // the model's words are printed once per step, before its tool calls
  const say = (pad: string, stepNumber: number, text: string | undefined) => {
    if (saidInStep >= stepNumber) return;
    saidInStep = stepNumber;
    if (text) console.log(`${pad}  model: ${text}`);
  };
  actor.on('*', (event: AgentEvent) => {
    const pad = indentOf(event);
    switch (event.type) {
      case 'execution.started':
        if (event.parentAgentId)
          console.log(`${pad}subagent started on a budget of ${limits(context().budget)}`);
        break;
      case 'step.started':
        console.log(`${pad}step ${event.stepNumber}`);
        break;
      case 'tool.started':
        say(pad, event.stepNumber, context().state.currentStep()?.outputText());
        console.log(`${pad}  → ${event.toolName} ${JSON.stringify(event.args)}`);
        break;
      case 'step.finished': {
        const step = context().state.stepExecutions()[event.stepNumber - 1]?.step();
        say(pad, event.stepNumber, step?.outputText());
        for (const call of step?.toolExecutions() ?? []) {
          const error = call.error();
          console.log(
            `${pad}  ${error ? `✗ ${call.name()} failed: ${error.message}` : `← ${call.name()}: ${brief(call.value())}`}`,
          );
        }
        const bySubagents = event.usage.totalTokens - (step?.inferenceResponse().usage.totalTokens ?? 0);
        const note = bySubagents > 0 ? `, ${n(bySubagents)} of them by the subagent` : '';
        console.log(`${pad}  = ${event.stepType}, ${tokens(event.usage)}${note}`);
        break;
      }
      case 'error':
        console.log(`${pad}  ✗ ${event.error.name}: ${event.error.message}`);
        break;
      case 'execution.finished':
        console.log(
          `${pad}${event.status} (stop reason: ${event.stopReason}) after ${steps(event.stepCount)}, ${tokens(event.usage)}`,
        );
        break;
    }
  });
}
const inspect = (event: InspectionEvent) => {
  if (event.type === '@xstate.actor') watch(event.actorRef as AnyActorRef); // typed as ActorRefLike, which lacks on()
};

// The run viewer: the recorder sees every actor of the run, and its trace becomes one HTML page.
const recorder = recordTrace({ title: 'npm run demo: trip planner' });
const viewerFile = fileURLToPath(new URL('../demo-output/run.html', import.meta.url));

const question =
  'Plan a 3-night trip from Paris to Lisbon in May. Will the weather be good, and what will the hotel and flights cost?';
console.log(
  realModel
    ? `Running on ${modelId} at ${baseURL}.`
    : 'Offline: a scripted model plays the agents. Set OPENAI_API_KEY to use a real model (see examples/demo.ts).',
);
console.log(`\nuser: ${question}\n`);

try {
  const state = await agent.execute(AgentState.empty().withUserMessage(question), {
    inspect: combineInspectors(inspect, recorder.inspect),
  });
  const subagentTokens = state
    .steps()
    .flatMap((step) => step.toolExecutions())
    .reduce((sum, call) => sum + call.usage().totalTokens, 0);
  console.log(`\nfinal answer: ${state.finalResponse() || '(none)'}`);
  console.log(`usage: ${tokens(state.usage())}, ${n(subagentTokens)} of them by the researcher`);
  if (state.status() !== 'completed') {
    const last = state.errors().at(-1);
    throw new Error(
      `the run ended ${state.status()} (${state.stopReason()})${last ? `: ${last.message}` : ''}`,
    );
  }
} catch (error) {
  console.error(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}

// A failed run is worth seeing too: the page shows where it failed.
mkdirSync(dirname(viewerFile), { recursive: true });
writeFileSync(viewerFile, renderRunViewer(recorder.trace()));
console.log(
  `run viewer: ${relative(process.cwd(), viewerFile)} (one offline HTML file: open it in a browser)`,
);
