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
      }),
    );
  });
