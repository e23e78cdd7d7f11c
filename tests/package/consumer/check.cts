// A CommonJS TypeScript file (nodenext): the require condition's types (.d.cts) resolve.
import agentMachine = require('agent-machine');

const state: agentMachine.AgentState = agentMachine.AgentState.empty().withUserMessage('hi');
// @ts-expect-error createAgent is typed (not any)
agentMachine.createAgent({ model: 42 });

export = state;
