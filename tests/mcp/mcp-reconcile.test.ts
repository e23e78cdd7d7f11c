import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import type { Agent } from '../../src/runtime/agent-actor';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import type { AgentEvent } from '../../src/state/loop-events';

const fixture = fileURLToPath(new URL('./fixtures/payments-server.mjs', import.meta.url));
const agents: Agent[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An agent whose `pay_charge` (the payments server's `charge`) is unsafe and reconciled by `find_charge`. */
function payments(store: SessionStore, ledger: string): Agent {
  const agent = createAgent({
    driver: scriptedDriver([
      { toolCalls: [{ name: 'pay_charge', args: { order: 'o-7' }, id: 'c1' }] },
      { text: 'charged' },
    ]),
    store,
    mcpServers: {
      pay: {
        command: process.execPath,
        args: [fixture],
        env: { PAYMENTS_LEDGER: ledger },
        tools: { charge: { effect: 'unsafe', needsApproval: false, reconcile: 'find_charge' } },
      },
    },
  });
  agents.push(agent);
  return agent;
}

/** A store holding the session as a crash during `pay_charge` leaves it: its step's intent. */
async function interrupted(ledger: string): Promise<InMemorySessionStore> {
  const inner = new InMemorySessionStore();
  let intent: AgentState | null = null;
  const capturing = Object.assign(Object.create(inner) as InMemorySessionStore, {
    save: async (id: string, state: AgentState, version: number | null) => {
      if (state.approval()?.started?.length) intent ??= state;
      return inner.save(id, state, version);
    },
  });
  await payments(capturing, ledger).execute(AgentState.empty().withUserMessage('charge o-7'), {
    sessionId: 's',
  });
  const crashed = new InMemorySessionStore();
  await crashed.save('s', AgentState.fromJSON((intent as unknown as AgentState).toJSON()), null);
  return crashed;
}

const lines = (ledger: string) => readFileSync(ledger, 'utf8').split('\n').filter(Boolean);

describe('an MCP tool reconciled by a tool of its server (tools.<name>.reconcile)', () => {
  it("'done': the server's find_charge settles the interrupted charge, not run again", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-machine-mcp-reconcile-'));
    dirs.push(dir);
    const ledger = join(dir, 'ledger.txt');
    const store = await interrupted(ledger);
    expect(lines(ledger)).toEqual(['o-7']);
    const events: AgentEvent[] = [];
    const state = await payments(store, ledger).resume('s', { onEvent: (e) => events.push(e) });
    expect(state.status()).toBe('completed');
    expect(lines(ledger)).toEqual(['o-7']);
    const charge = state.steps()[0]?.toolExecutions()[0];
    expect(charge?.value()).toBe('receipt for o-7');
    expect(charge?.resolution()).toBe('reconciled');
    expect(events.filter((e) => e.type === 'tool.reconciled')).toMatchObject([{ status: 'done' }]);
  }, 60_000);

  it("'not-done': the charge runs once more", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-machine-mcp-reconcile-'));
    dirs.push(dir);
    const ledger = join(dir, 'ledger.txt');
    const store = await interrupted(ledger);
    writeFileSync(ledger, ''); // the charge had not reached the payments API
    const state = await payments(store, ledger).resume('s');
    expect(state.status()).toBe('completed');
    expect(lines(ledger)).toEqual(['o-7']);
    expect(state.steps()[0]?.toolExecutions()[0]?.resolution()).toBe('reconciled');
  }, 60_000);

  it("refuses a reconcile on a tool whose effect is not 'unsafe'", () => {
    expect(() =>
      createAgent({
        driver: scriptedDriver([{ text: 'x' }]),
        mcpServers: { pay: { command: 'x', tools: { charge: { reconcile: 'find_charge' } } } },
      }),
    ).toThrow(/reconcile needs effect: 'unsafe'/);
  });
});
