import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { buildRunView } from '../../src/inspect/run-model';
import { renderRunViewer } from '../../src/inspect/run-viewer';
import { summarizeAgentState } from '../../src/inspect/stately';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { defineTool } from '../../src/tools/define-tool';
import { launchChromium } from '../support/chromium';

const OUT = resolve('test-output');
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium('the run viewer');
  await mkdir(OUT, { recursive: true });
}, 30_000);

afterAll(async () => {
  await browser?.close();
});

/** root -> manager -> clerk, whose transfer waits for approval; the root also reads the balance. */
async function waitingTree() {
  const transfer = defineTool({
    description: 'Transfer money',
    inputSchema: z.object({ to: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async () => 'sent',
  });
  const balance = defineTool({
    description: 'Read the balance',
    inputSchema: z.object({}),
    execute: async () => 100,
  });
  const agent = createAgent({
    driver: scriptedDriver([
      {
        toolCalls: [
          { name: 'balance', args: {}, id: 'b1' },
          { name: 'manager', args: { task: 'pay bob' }, id: 'm1' },
        ],
      },
    ]),
    tools: { balance },
    subagents: {
      agents: {
        manager: {
          description: 'Manages',
          driver: scriptedDriver([{ toolCalls: [{ name: 'clerk', args: { task: 'pay' }, id: 'c1' }] }]),
          subagents: {
            agents: {
              clerk: {
                description: 'Pays',
                driver: scriptedDriver([
                  { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] },
                ]),
                tools: { transfer },
              },
            },
          },
        },
      },
    },
  });
  return agent.execute(AgentState.empty().withUserMessage('Pay Bob'));
}

describe('the run viewer shows a waiting subagent', () => {
  it('lists the waiting children as agents, the waiting call on the step, and the pending calls with their path', async () => {
    const waiting = await waitingTree();
    const view = buildRunView(JSON.parse(JSON.stringify(waiting)));
    expect(view.agents.map((a) => [a.depth, a.status, a.spawnedBy?.toolName ?? null])).toEqual([
      [0, 'in_progress', null],
      [1, 'in_progress', 'manager'],
      [2, 'in_progress', 'clerk'],
    ]);
    const [root, manager, clerk] = view.agents;
    expect(root?.pendingApprovals).toEqual([
      {
        toolCallId: 't1',
        toolName: 'transfer',
        args: expect.stringContaining('"amount": 40'),
        path: ['manager', 'clerk'],
        reason: 'approval',
      },
    ]);
    expect(clerk?.pendingApprovals.map((p) => [p.toolCallId, p.path])).toEqual([['t1', []]]);
    const step = root?.steps[0];
    expect(step?.inFlight).toBe(true);
    expect(step?.tools.map((t) => [t.callId, t.waiting, t.result])).toEqual([
      ['b1', false, '100'],
      ['m1', true, null],
    ]);
    expect(step?.tools[1]?.childAgent).toBe(manager?.key);
    expect(manager?.steps[0]?.tools[0]).toMatchObject({
      callId: 'c1',
      waiting: true,
      childAgent: clerk?.key,
    });

    const html = renderRunViewer(waiting);
    expect(html).toContain('data-testid="pending-approvals"');
    expect(html).toContain('Waiting for approval');
    expect(html).toMatch(/<code>manager<\/code> › <code>clerk<\/code>/);
  });

  it('the inspector summary names the waiting calls with their path, from the state and from its JSON', async () => {
    const waiting = await waitingTree();
    expect(summarizeAgentState(waiting).pendingApprovals).toEqual(['manager/clerk/transfer t1']);
    expect(summarizeAgentState(JSON.parse(JSON.stringify(waiting)))).toEqual(summarizeAgentState(waiting));
  });

  it('in a real browser: the page shows the pending call with its path, and the waiting call of the step', async () => {
    const file = resolve(OUT, 'nested-approval-viewer.html');
    await writeFile(file, renderRunViewer(await waitingTree()));
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    await page.goto(pathToFileURL(file).href);
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, not the DOM property
    const pending = await page.locator('[data-testid="pending-approvals"]').first().innerText();
    expect(pending).toContain('Waiting for approval of 1 tool call');
    expect(pending).toMatch(/transfer\s+t1\s+in manager › clerk/);
    await page.locator('li.step').first().click();
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, not the DOM property
    const detail = await page.locator('#detail').innerText();
    expect(detail).toContain('waiting for approval');
    expect(detail).toContain('none yet: its subagent waits for decisions on its tool calls');
    expect(problems).toEqual([]);
    await page.close();
  });
});
