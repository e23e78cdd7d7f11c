import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { buildRunView } from '../../src/inspect/run-model';
import { renderRunViewer } from '../../src/inspect/run-viewer';
import { recordTrace } from '../../src/inspect/trace-recorder';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import type { ApprovalInput } from '../../src/state/approval';
import { ToolExecution } from '../../src/state/tool-execution';
import { defineTool } from '../../src/tools/define-tool';
import { waitForState } from '../support/agents';
import { launchChromium } from '../support/chromium';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-interrupted-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An agent whose unsafe `pay` runs `crashAt` as it starts (the test copies the store there). */
function paymentAgent(store: SessionStore, crashAt?: () => void) {
  const pay = defineTool({
    inputSchema: z.object({ amount: z.number() }),
    effect: 'unsafe',
    execute: async ({ amount }) => {
      crashAt?.();
      return `paid ${amount}`;
    },
  });
  const driver = scriptedDriver([
    { toolCalls: [{ id: 'pay-1', name: 'pay', args: { amount: 5 } }] },
    { text: 'done' },
  ]);
  return createAgent({ driver, tools: { pay }, store });
}

/** A store as a process killed while `pay` ran leaves it: the intent saved, no result. */
async function crashedInPay(): Promise<SessionStore> {
  const dir = tempDir();
  const crashed = tempDir();
  let copied = false;
  const first = paymentAgent(new FileSessionStore(dir), () => {
    if (copied) return;
    copied = true;
    cpSync(dir, crashed, { recursive: true });
  });
  await first.execute(AgentState.empty().withUserMessage('pay 5'), { sessionId: 's1' });
  return new FileSessionStore(crashed);
}

async function decided(decision: ApprovalInput) {
  const store = await crashedInPay();
  const agent = paymentAgent(store);
  await agent.resume('s1');
  return agent.decide('s1', [decision]);
}

const text = (html: string) =>
  html
    .replace(/<script[\s\S]*?<\/script>/g, '')
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ');

describe('interrupted calls in the run viewer and the trace', () => {
  it('the page lists an interrupted call waiting for a decision, with its reason', async () => {
    const store = await crashedInPay();
    const loaded = await store.load('s1');
    const html = renderRunViewer(JSON.parse(JSON.stringify(loaded?.state)));
    const shown = text(html);
    expect(shown).toContain('Waiting for approval of 1 tool call');
    expect(shown).toMatch(/pay pay-1 interrupted by a crash: decide approve \/ reject \/ complete/);
    expect(html).toContain('data-reason="interrupted"');
  });

  it.each([
    [{ toolCallId: 'pay-1', type: 'approve' } as const, 'approved', '✓', 'approved: ran again'],
    [{ toolCallId: 'pay-1', type: 'reject' } as const, 'rejected', '✗', 'rejected: recorded as not run'],
    [
      { toolCallId: 'pay-1', type: 'complete', result: 'paid 5 (checked by hand)' } as const,
      'completed',
      '✓',
      'completed: result given by a person',
    ],
  ])('a resolved interrupted call is marked on its step: %o', async (decision, resolution, mark, words) => {
    const done = await decided(decision);
    const pay = done.steps()[0]?.toolExecutions()[0];
    expect(pay?.resolution()).toBe(resolution);
    // kept through a save and a load
    const reloaded = AgentState.fromJSON(JSON.parse(JSON.stringify(done)));
    expect(reloaded.steps()[0]?.toolExecutions()[0]?.resolution()).toBe(resolution);

    const view = buildRunView(JSON.parse(JSON.stringify(done)));
    expect(view.agents[0]?.steps[0]?.tools.map((t) => [t.callId, t.resolution])).toEqual([
      ['pay-1', resolution],
    ]);
    expect(view.agents[0]?.pendingApprovals).toEqual([]);
    expect(text(renderRunViewer(JSON.parse(JSON.stringify(done))))).toContain(
      `pay ${mark} interrupted, ${words}`,
    );
  });

  it('a call that was not interrupted has no resolution; an older state without the field loads', async () => {
    const agent = paymentAgent(new FileSessionStore(tempDir()));
    const done = await agent.execute(AgentState.empty().withUserMessage('pay 5'), { sessionId: 's' });
    const pay = done.steps()[0]?.toolExecutions()[0];
    expect(pay?.resolution()).toBeUndefined();
    expect(pay?.toJSON()).not.toHaveProperty('resolution');
    expect(
      buildRunView(JSON.parse(JSON.stringify(done))).agents[0]?.steps[0]?.tools[0]?.resolution,
    ).toBeNull();

    // a state saved before the field existed: the resolved call's record without it
    const resolved = await decided({ toolCallId: 'pay-1', type: 'approve' });
    const json = JSON.parse(JSON.stringify(resolved.steps()[0]?.toolExecutions()[0]));
    expect(json.resolution).toBe('approved');
    delete json.resolution;
    expect(ToolExecution.fromJSON(json).resolution()).toBeUndefined();
  });

  it('the trace keeps the approval events with the reason', async () => {
    const store = await crashedInPay();
    const agent = paymentAgent(store);
    const waiting = await agent.resume('s1');
    const recorder = recordTrace({ title: 'after a crash' });
    const actor = agent.createActor(waiting, { inspect: recorder.inspect });
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => JSON.stringify(s.value).includes('"waiting"'));
    actor.send({ type: 'reject', toolCallId: 'pay-1' });
    await waitForState(actor, (s) => s.value === 'completed');
    actor.stop();
    const trace = recorder.trace();
    const emitted = trace.entries.filter(
      (e) => e.kind === 'emitted' && (e.type === 'approval.requested' || e.type === 'approval.decided'),
    );
    expect(emitted.map((e) => (e as { type: string }).type)).toEqual([
      'approval.requested',
      'approval.decided',
    ]);
    expect(JSON.stringify(emitted[0])).toContain('"reason":"interrupted"');
    expect(JSON.stringify(emitted[1])).toContain('"reason":"interrupted"');
    expect(text(renderRunViewer(trace))).toContain('pay ✗ interrupted, rejected: recorded as not run');
  });

  it('in a real browser: the pending call with its reason; the step shows how the call was resolved', async () => {
    const store = await crashedInPay();
    const waiting = (await store.load('s1'))?.state;
    const agent = paymentAgent(store);
    await agent.resume('s1');
    const done = await agent.decide('s1', [{ toolCallId: 'pay-1', type: 'complete', result: 'paid 5' }]);
    const dir = tempDir();
    const browser = await launchChromium('the run viewer with interrupted calls');
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      const open = async (state: unknown, name: string) => {
        const file = join(dir, `${name}.html`);
        writeFileSync(file, renderRunViewer(JSON.parse(JSON.stringify(state))));
        await page.goto(pathToFileURL(file).href);
      };
      await open(waiting, 'waiting');
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, not the DOM property
      const pending = await page.locator('[data-testid="pending-approvals"]').innerText();
      expect(pending).toMatch(/pay\s+pay-1\s+interrupted by a crash: decide approve \/ reject \/ complete/);

      await open(done, 'resolved');
      expect(await page.locator('[data-testid="pending-approvals"]').count()).toBe(0);
      await page.locator('li.step').first().click();
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, not the DOM property
      const detail = await page.locator('#detail').innerText();
      expect(detail).toContain('interrupted by a crash, completed: result given by a person');
      expect(detail).toContain('paid 5');
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
