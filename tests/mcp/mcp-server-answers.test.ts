import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpServerConfig } from '../../src/mcp/mcp-server-config';
import type { Agent } from '../../src/runtime/agent-actor';
import { createAgent } from '../../src/runtime/create-agent';
import { ExecutionStatus } from '../../src/state/execution-status';
import { ask, model } from './support/mock-model';

const fixture = fileURLToPath(new URL('./fixtures/raw-server.mjs', import.meta.url));

/** The hand-written fixture server in `mode`; `requests` reads its log, one `<pid> <method>` a request. */
function rawServer(mode: string) {
  const log = join(mkdtempSync(join(tmpdir(), 'mcp-raw-')), 'requests');
  const config: McpServerConfig = {
    command: process.execPath,
    args: [fixture],
    env: { FIXTURE_MODE: mode, FIXTURE_LOG: log },
    restartDelayMs: 1,
  };
  const requests = () =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((line) => line.split(' ') as [string, string])
      : [];
  return { config, requests };
}

describe('what an MCP server answers', () => {
  const agents: Agent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.close()));
  });

  it("fails only the call a malformed result answers, keeping the server's process, however often", async () => {
    const server = rawServer('bad-result');
    const agent = createAgent({
      model: model([
        { call: 'raw_bad' },
        { call: 'raw_bad' },
        { call: 'raw_bad' },
        { call: 'raw_bad' },
        { call: 'raw_bad' },
        { call: 'raw_pid' },
        { text: 'done' },
      ]),
      mcpServers: { raw: server.config },
      errorPolicy: { maxConsecutiveErrorSteps: 10 },
    });
    agents.push(agent);
    const state = await agent.execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Completed);
    const executions = state.toolExecutions();
    expect(executions.map((e) => e.error()?.code ?? 'ok')).toEqual([
      ...Array(5).fill('MCP_RESULT_INVALID'),
      'ok',
    ]);
    expect(executions[0]?.error()?.message).toMatch(
      /MCP server 'raw' answered the call to 'bad' with a result that is not a CallToolResult \(content: .*\)/,
    );
    const pids = new Set(server.requests().map(([pid]) => pid));
    expect([...pids]).toEqual([String(executions[5]?.value())]);
  });
});
