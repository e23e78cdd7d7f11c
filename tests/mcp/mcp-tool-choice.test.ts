import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { McpToolNotListedError } from '../../src/mcp/mcp-errors';
import type { McpServerConfig } from '../../src/mcp/mcp-server-config';
import { McpServers } from '../../src/mcp/mcp-servers';
import type { Agent } from '../../src/runtime/agent-actor';
import { createAgent } from '../../src/runtime/create-agent';
import { ExecutionStatus } from '../../src/state/execution-status';
import { toolEffect } from '../../src/tools/define-tool';
import { ask, model, offered } from './support/mock-model';

const fixture = fileURLToPath(new URL('./fixtures/annotated-server.mjs', import.meta.url));
/** read_file (readOnlyHint), delete_file (destructiveHint), put_file (idempotentHint), touch, stats (structuredContent). */
const files = (tools?: McpServerConfig['tools']): McpServerConfig => ({
  command: process.execPath,
  args: [fixture],
  ...(tools && { tools }),
});

describe("choosing a server's tools (mcpServers.<name>.tools)", () => {
  const agents: Agent[] = [];
  const track = (agent: Agent) => {
    agents.push(agent);
    return agent;
  };
  const closing: McpServers[] = [];
  afterEach(async () => {
    await Promise.all([...agents.splice(0), ...closing.splice(0)].map((each) => each.close()));
  });

  it('offers only the listed tools, and a tool not listed cannot be called', async () => {
    const m = model([{ call: 'files_touch', args: { path: 'a.txt' } }, { text: 'no' }]);
    const agent = track(
      createAgent({
        model: m,
        mcpServers: { files: files({ read_file: true, delete_file: { needsApproval: false } }) },
      }),
    );
    const state = await agent.execute(ask());
    expect(offered(m.doGenerateCalls[0])).toEqual(['files_read_file', 'files_delete_file']);
    expect(state.toolExecutions()[0]?.error()?.message).toMatch(/files_touch/);
  });

  it('offers every tool without `tools`; a destructive one waits for approval, the others run', async () => {
    const m = model([
      { call: 'files_read_file', args: { path: 'a.txt' } },
      { call: 'files_delete_file', args: { path: 'a.txt' } },
      { text: 'deleted' },
    ]);
    const agent = track(createAgent({ model: m, mcpServers: { files: files() } }));
    const waiting = await agent.execute(ask());
    expect(offered(m.doGenerateCalls[0])).toEqual([
      'files_read_file',
      'files_delete_file',
      'files_put_file',
      'files_touch',
      'files_stats',
    ]);
    expect(waiting.toolExecutions()[0]?.value()).toBe('contents of a.txt');
    expect(waiting.pendingApprovals()).toMatchObject([
      { toolCallId: 'c2', toolName: 'files_delete_file', args: { path: 'a.txt' } },
    ]);

    const done = await agent.decide(waiting, [{ toolCallId: 'c2', type: 'approve' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(done.toolExecutions()[1]?.value()).toBe('deleted a.txt');
  });

  it('lets the app require approval where the server says nothing, and waive it for a destructive tool', async () => {
    const agent = track(
      createAgent({
        model: model([
          { call: 'files_delete_file', args: { path: 'a.txt' } },
          { call: 'files_touch', args: { path: 'b.txt' } },
          { text: 'done' },
        ]),
        mcpServers: {
          files: files({ delete_file: { needsApproval: false }, touch: { needsApproval: true } }),
        },
      }),
    );
    const waiting = await agent.execute(ask());
    expect(waiting.toolExecutions()[0]?.value()).toBe('deleted a.txt');
    expect(waiting.pendingApprovals().map((p) => p.toolName)).toEqual(['files_touch']);
  });

  it("takes each tool's effect from its annotations, and the app's setting over them", async () => {
    const signal = new AbortController().signal;
    const byDefault = new McpServers({ files: files() });
    const overridden = new McpServers({
      files: files({
        read_file: { effect: 'unsafe' },
        delete_file: { effect: 'idempotent' },
        put_file: { needsApproval: true },
        touch: { needsApproval: true },
      }),
    });
    closing.push(byDefault, overridden);
    const effects = async (servers: McpServers) =>
      Object.fromEntries(
        Object.entries(await servers.toolSet({}, signal)).map(([name, tool]) => [name, toolEffect(tool)]),
      );
    expect(await effects(byDefault)).toEqual({
      files_read_file: 'read', // readOnlyHint
      files_delete_file: 'unsafe', // destructiveHint: needs approval, so unsafe as a defineTool's would be
      files_put_file: 'idempotent', // idempotentHint
      files_touch: 'idempotent', // no hints
      files_stats: 'read',
    });
    expect(await effects(overridden)).toEqual({
      files_read_file: 'unsafe',
      files_delete_file: 'idempotent',
      files_put_file: 'idempotent', // the hint is given: approval does not change it
      files_touch: 'unsafe', // approval without a hint: as defineTool
    });
  });

  it("gives a tool's structuredContent as its value", async () => {
    const agent = track(
      createAgent({
        model: model([{ call: 'files_stats' }, { text: 'three' }]),
        mcpServers: { files: files({ stats: true }) },
      }),
    );
    const state = await agent.execute(ask());
    expect(state.toolExecutions()[0]?.value()).toEqual({ files: 3, largest: 'a.txt' });
  });

  it('refuses a `tools` entry that is not true or { needsApproval, effect }, naming it', () => {
    const refused = (tools: unknown) => () =>
      createAgent({
        model: model([{ text: 'x' }]),
        mcpServers: { files: files(tools as McpServerConfig['tools']) },
      });
    expect(refused({ read_file: false })).toThrow(
      /mcpServers\.files tools\.read_file must be true or \{ needsApproval, effect \}, got false/,
    );
    expect(refused({ read_file: { effect: 'safe' } })).toThrow(
      /tools\.read_file\.effect must be 'read', 'idempotent' or 'unsafe', got "safe"/,
    );
    expect(refused({ read_file: { needsAproval: true } })).toThrow(
      /tools\.read_file\.needsAproval is not a setting: use needsApproval or effect/,
    );
    expect(refused(['read_file'])).toThrow(/tools must be an object keyed by the server's tool names/);
  });

  it('refuses a `tools` entry naming a tool the server does not list (a typo): the run fails with McpToolNotListedError naming both', async () => {
    const m = model([{ text: 'never asked' }]);
    const seen: unknown[] = [];
    const agent = track(
      createAgent({
        model: m,
        // `delete_fil`: a typo of delete_file, whose needsApproval would otherwise be silently lost
        mcpServers: { files: files({ read_file: true, delete_fil: { needsApproval: true } }) },
        hooks: [
          {
            onError: (state, { error }) => {
              seen.push(error);
              return state;
            },
          },
        ],
      }),
    );
    const state = await agent.execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(m.doGenerateCalls).toHaveLength(0);
    expect(seen).toEqual([
      expect.objectContaining({ name: McpToolNotListedError.name, code: 'MCP_TOOL_NOT_LISTED' }),
    ]);
    expect((seen[0] as Error).message).toMatch(/'delete_fil'.*'files'.*delete_file/);
    const thrown = new McpToolNotListedError('files', 'delete_fil', ['read_file']);
    expect([thrown.server, thrown.tool]).toEqual(['files', 'delete_fil']);
  });
});
