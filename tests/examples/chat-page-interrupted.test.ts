/**
 * Issue #44 item 6, in Chromium: both example chat pages (plain and React) show a call a crash
 * interrupted as possibly done already ("this may already have happened: check before running it
 * again") beside Approve and Deny, and a new approval as before.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pay } from '../../examples/http-app';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { startApp } from '../support/chat-app';
import { SLOW, watch } from '../support/chat-page';
import { launchChromium } from '../support/chromium';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium('the chat pages');
});

afterAll(async () => {
  await browser?.close();
});

/** Saves chat `chatId` as a process killed while the approved payment ran leaves it (or, not `crashed`, waiting for approval). */
async function paymentChat(store: SessionStore, chatId: string, crashed: boolean) {
  const driver = scriptedDriver([
    { toolCalls: [{ id: 'pay-1', name: 'pay', args: { to: 'Hotel Lisboa', amount: 120 } }] },
  ]);
  const agent = createAgent({ driver, tools: { pay }, store });
  const waiting = await agent.execute(AgentState.empty().withUserMessage('Pay the hotel deposit.'), {
    sessionId: chatId,
  });
  if (!crashed) return;
  const stored = await store.load(chatId);
  const started = waiting.withApprovalDecision('pay-1', { type: 'approve' }).withToolsStarting(['pay-1']);
  await store.save(chatId, started, stored?.version ?? null);
}

describe.each(['plain', 'react'] as const)('the %s chat page', (client) => {
  it('tells an interrupted payment from a new approval', async () => {
    const { url, store } = await startApp({ client });
    await paymentChat(store, 'crashed', true);
    await paymentChat(store, 'asked', false);
    const page = await browser.newPage({ viewport: { width: 760, height: 600 } });
    const problems = watch(page);
    try {
      await page.goto(`${url}/?chat=crashed`);
      await page.waitForSelector('body[data-ready="true"]');
      const interrupted = page.locator('.tool[data-tool="pay"] .approval');
      await interrupted.locator('button.approve').waitFor(SLOW);
      expect(await interrupted.getAttribute('class')).toBe('approval interrupted');
      expect(await interrupted.textContent()).toContain(
        'this may already have happened: check before running it again',
      );

      await page.goto(`${url}/?chat=asked`);
      await page.waitForSelector('body[data-ready="true"]');
      const asked = page.locator('.tool[data-tool="pay"] .approval');
      await asked.locator('button.approve').waitFor(SLOW);
      expect(await asked.getAttribute('class')).toBe('approval');
      expect(await asked.textContent()).toContain('needs your approval');
      expect(await asked.textContent()).not.toContain('may already have happened');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
