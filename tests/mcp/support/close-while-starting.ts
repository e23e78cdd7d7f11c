/**
 * A program for the test of `agent.close()` while an MCP server starts: its agent uses the
 * hand-written fixture in `mode` (argv[2]), logging to `log` (argv[3]); once the server got
 * `request` (argv[4]) `times` times (argv[5], default 1), it closes the agent and prints the run's outcome and the server's pid as
 * JSON. It does nothing after that: it should exit by itself.
 * Run: node --import tsx tests/mcp/support/close-while-starting.ts silent /tmp/log initialize
 */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createAgent } from '../../../src/runtime/create-agent';
import { ask, model } from './mock-model';

const [mode = '', log = '', request = '', times = '1'] = process.argv.slice(2);
const fixture = fileURLToPath(new URL('../fixtures/raw-server.mjs', import.meta.url));
const agent = createAgent({
  model: model([{ text: 'never asked' }]),
  mcpServers: {
    slow: { command: process.execPath, args: [fixture], env: { FIXTURE_MODE: mode, FIXTURE_LOG: log } },
  },
});
const run = agent.execute(ask());
// the line of the `times`-th such request (a tool list of many pages: the 12th page)
const requested = () =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line.endsWith(` ${request}`))[Number(times) - 1]
    : undefined;
// Polled: the server's log is the only sign that it got the request.
while (!requested()) await delay(10);
const serverPid = Number(requested()?.split(' ')[0]);
await agent.close();
const state = await run;
process.stdout.write(
  JSON.stringify({ serverPid, status: state.status(), code: state.lastStep()?.errors()[0]?.code }),
);
