// A CommonJS TypeScript file (nodenext): the require condition's types (.d.cts) resolve.
import agentMachine = require('agent-machine');

const state: agentMachine.AgentState = agentMachine.AgentState.empty().withUserMessage('hi');
// The CommonJS types register a subagent's state too: a tool call's child is an AgentState.
const child = state.stepExecutions()[0]?.step().toolExecutions()[0]?.childState();
child?.status() satisfies string | undefined;
// @ts-expect-error a child state is no number (it would be accepted if it were any)
child satisfies number | null | undefined;
// @ts-expect-error createAgent is typed (not any)
agentMachine.createAgent({ model: 42 });

// The subpath entries resolve for CommonJS too, to the main entry's declarations.
import stores = require('agent-machine/stores');
import ui = require('agent-machine/ui');
import internal = require('agent-machine/internal');
import distributed = require('agent-machine/distributed');
import inspect = require('agent-machine/inspect');
import mcp = require('agent-machine/mcp');
import telemetry = require('agent-machine/telemetry');
import testing = require('agent-machine/testing');
const store: agentMachine.SessionStore = new stores.SqliteSessionStore(':memory:');
ui.createChatHandler satisfies typeof agentMachine.createChatHandler;
internal.agentLoop satisfies typeof agentMachine.agentLoop;
distributed.RedisStreamStore satisfies typeof agentMachine.RedisStreamStore;
inspect.renderRunViewer satisfies typeof agentMachine.renderRunViewer;
mcp.McpServers satisfies typeof agentMachine.McpServers;
telemetry.AgentTracing satisfies typeof agentMachine.AgentTracing;
testing.expectReplay satisfies typeof agentMachine.expectReplay;
void store;

export = state;
