// An ES module project using the packed library with the AI SDK it installed (6 or 7), against the
// OpenAI-compatible server at BASE_URL. Prints what it saw as JSON.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AgentState, AgentStopError, createAgent, InvalidDefinitionError } from 'agent-machine';
import { jsonSchema, tool } from 'ai';

const model = createOpenAICompatible({ name: 'local', baseURL: process.env.BASE_URL }).chatModel('m');
const add = tool({
  description: 'Add two numbers',
  inputSchema: jsonSchema({
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  }),
  execute: async ({ a, b }) => a + b,
});
const deltas = [];
const runs = [];
for (const stream of [false, true]) {
  const agent = createAgent({ model, tools: { add }, modelOptions: { stream } });
  const state = await agent.execute(AgentState.empty().withUserMessage('2 + 3?'), {
    onEvent: (event) => event.type === 'text.delta' && deltas.push(event.delta),
  });
  runs.push({ status: state.status(), answer: state.finalResponse(), steps: state.stepCount() });
}
console.log(
  JSON.stringify({
    specificationVersion: model.specificationVersion,
    runs,
    streamed: deltas.join(''),
    errorName: new InvalidDefinitionError('model', 'is missing').name,
    stopErrorClass: AgentStopError.name,
    misnamedClasses: await misnamedClasses(),
    subpaths: await sameAsMain(),
    testingWithoutGraph: await testingWithoutGraph(),
  }),
);

/** Each subpath entry: whether every one of its names that the main entry exports too is the main entry's own (new plumbing in /internal is not on the main entry). */
async function sameAsMain() {
  const main = await import('agent-machine');
  const result = {};
  for (const name of ['stores', 'distributed', 'inspect', 'ui', 'mcp', 'telemetry', 'testing', 'internal']) {
    const entry = await import(`agent-machine/${name}`);
    const names = Object.keys(entry);
    result[name] = names.length > 0 && names.every((key) => !(key in main) || entry[key] === main[key]);
  }
  return result;
}

/** Exported classes whose name is not the one they are exported under (a bundler's `_AgentStopError`). */
async function misnamedClasses() {
  const entries = [await import('agent-machine')];
  for (const name of ['stores', 'distributed', 'inspect', 'ui', 'mcp', 'telemetry', 'testing', 'internal'])
    entries.push(await import(`agent-machine/${name}`));
  return entries.flatMap((entry) =>
    Object.entries(entry)
      .filter(
        ([key, value]) => typeof value === 'function' && /^class\b/.test(String(value)) && value.name !== key,
      )
      .map(([key, value]) => `${key} (${value.name})`),
  );
}

/** `@xstate/graph` is an optional peer this project did not install: the test model says so when used. */
async function testingWithoutGraph() {
  const { createAgentTestModel } = await import('agent-machine/testing');
  try {
    createAgentTestModel({
      probeHooks: false,
      subagent: false,
      approvals: false,
      executions: 1,
    }).shortestPaths();
    return 'loaded';
  } catch (error) {
    return error.code;
  }
}
