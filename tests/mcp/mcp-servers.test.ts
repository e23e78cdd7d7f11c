import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { McpServerError } from '../../src/mcp/mcp-errors';
import type { McpServerConfig } from '../../src/mcp/mcp-server-config';
import { SupervisedMcpServer } from '../../src/mcp/supervised-mcp-server';
import type { Agent } from '../../src/runtime/agent-actor';
import { InvalidDefinitionError, type SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { ExecutionStatus } from '../../src/state/execution-status';
import { add } from '../support/agents';
import { startHttpMcpServer } from './support/http-mcp-server';
import { ask, isRunning, model, offered } from './support/mock-model';

const fixture = fileURLToPath(new URL('./fixtures/stdio-server.mjs', import.meta.url));

/** The fixture server; `starts` is a file that gets one line (the process id) per start. */
function stdioServer(options: { env?: Record<string, string>; maxRestarts?: number } = {}) {
  const starts = join(mkdtempSync(join(tmpdir(), 'mcp-')), 'starts');
  const config: McpServerConfig = {
    command: process.execPath,
    args: [fixture],
    env: { FIXTURE_STARTS: starts, ...options.env },
    restartDelayMs: 1,
    maxRestarts: options.maxRestarts,
  };
  return {
    config,
    starts: () => (existsSync(starts) ? readFileSync(starts, 'utf8').trim().split('\n') : []),
  };
}

describe('MCP servers as tool sources (mcpServers)', () => {
  const agents: Agent[] = [];
  const track = (agent: Agent) => {
    agents.push(agent);
    return agent;
  };
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.close()));
  });

  it("offers a stdio server's tools as <server>_<tool> with their JSON Schemas, started at first use", async () => {
    const server = stdioServer();
    const m = model([{ call: 'calc_add', args: { a: 2, b: 3 } }, { text: 'five' }]);
    const agent = track(createAgent({ model: m, tools: { add }, mcpServers: { calc: server.config } }));
    expect(server.starts()).toEqual([]);

    const state = await agent.execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.toolExecutions()[0]?.value()).toBe('5');
    expect(server.starts()).toHaveLength(1);
    const first = m.doGenerateCalls[0];
    expect(offered(first)).toEqual([
      'add',
      'calc_add',
      'calc_pid',
      'calc_crash',
      'calc_learn',
      'calc_fail',
      'calc_hang',
      'calc_files_count',
    ]);
    expect(first?.tools?.find((t) => t.name === 'calc_add')).toMatchObject({
      description: 'Add two numbers',
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
    });
  });

  it('shares one server process between executions, and agent.close() stops it', async () => {
    const server = stdioServer();
    const agent = createAgent({
      model: model([{ call: 'calc_pid' }, { text: 'ok' }]),
      mcpServers: { calc: server.config },
    });
    const first = await agent.execute(ask());
    const second = await agent.execute(ask());
    const pid = Number(first.toolExecutions()[0]?.value());
    expect(Number(second.toolExecutions()[0]?.value())).toBe(pid);
    expect(server.starts()).toEqual([String(pid)]);
    expect(isRunning(pid)).toBe(true);

    await agent.close();
    expect(isRunning(pid)).toBe(false);
    const after = await agent.execute(ask());
    expect(after.status()).toBe(ExecutionStatus.Failed);
    expect(after.lastStep()?.errors()[0]?.code).toBe('MCP_SERVER_CLOSED');
  });

  it('fails the call in flight when the server dies, naming the server; the next call restarts it', async () => {
    const server = stdioServer();
    const agent = track(
      createAgent({
        model: model([{ call: 'calc_crash' }, { call: 'calc_pid' }, { text: 'recovered' }]),
        mcpServers: { calc: server.config },
      }),
    );
    const state = await agent.execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Completed);
    const [crash, pid] = state.toolExecutions();
    expect(crash?.error()).toMatchObject({ name: 'McpServerError', code: 'MCP_SERVER_EXITED' });
    expect(crash?.error()?.message).toMatch(/MCP server 'calc' went away during a call to 'crash'/);
    expect(crash?.error()?.message).toContain('crashing on purpose');
    // the model was told
    expect(state.messages().find((msg) => msg.role === 'tool')?.content).toContain("MCP server 'calc'");
    const starts = server.starts();
    expect(starts).toHaveLength(2);
    expect(String(pid?.value())).toBe(starts[1]);
  });

  it('gives a server up after maxRestarts restarts in a row, and tells the model on each call', async () => {
    const server = stdioServer({ maxRestarts: 1 });
    const agent = track(
      createAgent({
        model: model([
          { call: 'calc_crash' },
          { call: 'calc_crash' },
          { call: 'calc_add', args: { a: 1, b: 1 } },
          { text: 'gave up' },
        ]),
        mcpServers: { calc: server.config },
        errorPolicy: { maxConsecutiveErrorSteps: 10 },
      }),
    );
    const state = await agent.execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.toolExecutions().map((e) => e.error()?.code)).toEqual([
      'MCP_SERVER_EXITED',
      'MCP_SERVER_EXITED',
      'MCP_SERVER_GAVE_UP',
    ]);
    expect(state.toolExecutions()[2]?.error()?.message).toMatch(
      /MCP server 'calc' is given up after 1 restarts in a row/,
    );
    expect(server.starts()).toHaveLength(2);
  });

  it('resets the restart count after a successful call', async () => {
    const server = stdioServer({ maxRestarts: 1 });
    const agent = track(
      createAgent({
        model: model([
          { call: 'calc_crash' },
          { call: 'calc_pid' },
          { call: 'calc_crash' },
          { call: 'calc_pid' },
          { text: 'done' },
        ]),
        mcpServers: { calc: server.config },
      }),
    );
    const state = await agent.execute(ask());
    expect(state.toolExecutions().map((e) => e.error()?.code ?? 'ok')).toEqual([
      'MCP_SERVER_EXITED',
      'ok',
      'MCP_SERVER_EXITED',
      'ok',
    ]);
    expect(server.starts()).toHaveLength(3);
  });

  it('follows a changed tool list: the next model call is offered the new tool', async () => {
    const server = stdioServer();
    const m = model([
      { call: 'calc_learn' },
      { call: 'calc_multiply', args: { a: 3, b: 4 } },
      { text: '12' },
    ]);
    const agent = track(createAgent({ model: m, mcpServers: { calc: server.config } }));
    const state = await agent.execute(ask());
    expect(offered(m.doGenerateCalls[0])).not.toContain('calc_multiply');
    expect(offered(m.doGenerateCalls[1])).toContain('calc_multiply');
    expect(state.toolExecutions()[1]?.value()).toBe('12');
  });

  it('stops a run during a call without taking the server for dead', async () => {
    const server = stdioServer();
    // the first execution's model asks for calc_hang, the second's for calc_pid
    const hangs = model([{ call: 'calc_hang' }]);
    const pid = model([{ call: 'calc_pid' }, { text: 'ok' }]);
    let execution = 0;
    const both = new MockLanguageModelV4({
      modelId: 'm',
      doGenerate: (options) => (execution === 0 ? hangs : pid).doGenerate(options),
    });
    const agent = track(createAgent({ model: both, mcpServers: { calc: server.config } }));
    const controller = new AbortController();
    const stopped = await agent.execute(ask(), {
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'tool.started') controller.abort();
      },
    });
    expect(stopped.status()).toBe(ExecutionStatus.Stopped);
    expect(stopped.toolExecutions()[0]?.error()?.code).toBe('ABORTED');

    execution = 1;
    const next = await agent.execute(ask());
    expect(next.status()).toBe(ExecutionStatus.Completed);
    expect(server.starts()).toEqual([String(next.toolExecutions()[0]?.value())]);
  });

  it('offers a tool whose name has characters providers refuse under a safe name, and calls it by its own', async () => {
    const agent = track(
      createAgent({
        model: model([{ call: 'calc_files_count' }, { text: 'three' }]),
        mcpServers: { calc: stdioServer().config },
      }),
    );
    const state = await agent.execute(ask());
    expect(state.toolExecutions()[0]?.value()).toBe('3');
  });

  it("records a tool's error result as a failed call with the tool's text", async () => {
    const agent = track(
      createAgent({
        model: model([{ call: 'calc_fail' }, { text: 'sorry' }]),
        mcpServers: { calc: stdioServer().config },
      }),
    );
    const state = await agent.execute(ask());
    expect(state.toolExecutions()[0]?.error()).toMatchObject({
      code: 'MCP_TOOL_ERROR',
      message: "MCP tool 'fail' of server 'calc' failed: no such file",
    });
  });

  it('fails the run with MCP_SERVER_START_FAILED, naming the server and its stderr, when it cannot start', async () => {
    const server = stdioServer({ env: { FIXTURE_REFUSE: '1' }, maxRestarts: 1 });
    const agent = track(
      createAgent({ model: model([{ text: 'never' }]), mcpServers: { calc: server.config } }),
    );
    const state = await agent.execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Failed);
    const error = state.lastStep()?.errors()[0];
    expect(error?.code).toBe('MCP_SERVER_START_FAILED');
    expect(error?.message).toMatch(
      /MCP server 'calc' did not start: .*refusing to start.*\(1 restarts tried\)/,
    );
    expect(server.starts()).toHaveLength(2);
  });

  it("lets a subagent without tools of its own use its caller's servers", async () => {
    const helper: SubagentDefinition = {
      description: 'Adds with the calculator server',
      driver: scriptedDriver([
        { toolCalls: [{ id: 'h1', name: 'calc_add', args: { a: 4, b: 5 } }] },
        { text: '9' },
      ]),
    };
    const agent = track(
      createAgent({
        driver: scriptedDriver([
          { toolCalls: [{ id: 'r1', name: 'helper', args: { task: 'add' } }] },
          { text: 'nine' },
        ]),
        mcpServers: { calc: stdioServer().config },
        subagents: { agents: { helper } },
      }),
    );
    const state = await agent.execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.toolExecutions()[0]?.value()).toBe('9');
  });

  it('refuses bad server names and configurations', () => {
    const base = { driver: scriptedDriver([{ text: 'x' }]) };
    expect(() => createAgent({ ...base, mcpServers: { 'my calc': { command: 'x' } } })).toThrowError(
      InvalidDefinitionError,
    );
    expect(() =>
      createAgent({
        ...base,
        mcpServers: { calc: { command: 'x', url: 'http://127.0.0.1:1' } as McpServerConfig },
      }),
    ).toThrow(/mcpServers\.calc needs exactly one of command/);
    expect(() => createAgent({ ...base, mcpServers: { calc: { url: 'file:///x' } } })).toThrow(
      /http:\/\/ or https:\/\//,
    );
  });
});

describe('MCP over Streamable HTTP (loopback)', () => {
  it("offers an HTTP server's tools and runs them", async () => {
    const http = await startHttpMcpServer();
    const agent = createAgent({
      model: model([{ call: 'web_add', args: { a: 20, b: 22 } }, { text: '42' }]),
      mcpServers: { web: { url: http.url } },
    });
    try {
      const state = await agent.execute(ask());
      expect(state.toolExecutions()[0]?.value()).toBe('42');
      expect(http.calls).toBe(1);
    } finally {
      await agent.close();
      await http.stop();
    }
  });

  it('fails a call to a server that went away with MCP_SERVER_EXITED, and reconnects on the next call', async () => {
    const http = await startHttpMcpServer();
    const server = new SupervisedMcpServer('web', { url: http.url, restartDelayMs: 1 });
    const signal = new AbortController().signal;
    try {
      expect(await server.callTool('add', { a: 1, b: 2 }, signal)).toMatchObject({
        content: [{ text: '3' }],
      });
      await http.stop();
      const failure = await server.callTool('add', { a: 1, b: 2 }, signal).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(McpServerError);
      expect(failure).toMatchObject({ code: 'MCP_SERVER_EXITED', server: 'web' });
      expect(server.status()).toBe('down');
      await http.start();
      expect(await server.callTool('add', { a: 3, b: 4 }, signal)).toMatchObject({
        content: [{ text: '7' }],
      });
      expect(server.status()).toBe('ready');
    } finally {
      await server.close();
      await http.stop();
    }
    expect(server.status()).toBe('closed');
  });
});
