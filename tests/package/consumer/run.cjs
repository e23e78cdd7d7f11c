// A CommonJS project requiring the packed library, with a model object of the specification the
// installed AI SDK uses (SPEC: v3 or v4). Prints what it saw as JSON.
const { AgentState, createAgent, AgentRuntimeError } = require('agent-machine');

const usage = { inputTokens: { total: 3 }, outputTokens: { total: 1 } };
const model = {
  specificationVersion: process.env.SPEC,
  provider: 'plain',
  modelId: 'cjs',
  supportedUrls: {},
  async doGenerate() {
    return {
      content: [{ type: 'text', text: 'hello from cjs' }],
      finishReason: { unified: 'stop' },
      usage,
      warnings: [],
    };
  },
  async doStream() {
    throw new Error('not streamed');
  },
};
createAgent({ model })
  .execute(AgentState.empty().withUserMessage('hi'))
  .then((state) => {
    console.log(
      JSON.stringify({
        status: state.status(),
        answer: state.finalResponse(),
        errorClass: AgentRuntimeError.name,
        misnamedClasses: misnamedClasses(),
        subpaths: sameAsMain(),
      }),
    );
  });

/**
 * Each subpath entry: whether every one of its names that the main entry exports too is the main
 * entry's own value (one copy of each class). Plumbing new in /internal is not on the main entry.
 */
function sameAsMain() {
  const main = require('agent-machine');
  const result = {};
  for (const name of ['stores', 'distributed', 'inspect', 'ui', 'mcp', 'telemetry', 'testing', 'internal']) {
    const entry = require(`agent-machine/${name}`);
    const names = Object.keys(entry);
    result[name] = names.length > 0 && names.every((key) => !(key in main) || entry[key] === main[key]);
  }
  return result;
}

/** Exported classes whose name is not the one they are exported under (a bundler's `_AgentStopError`). */
function misnamedClasses() {
  const entries = [require('agent-machine')];
  for (const name of ['stores', 'distributed', 'inspect', 'ui', 'mcp', 'telemetry', 'testing', 'internal'])
    entries.push(require(`agent-machine/${name}`));
  return entries.flatMap((entry) =>
    Object.entries(entry)
      .filter(
        ([key, value]) => typeof value === 'function' && /^class\b/.test(String(value)) && value.name !== key,
      )
      .map(([key, value]) => `${key} (${value.name})`),
  );
}
