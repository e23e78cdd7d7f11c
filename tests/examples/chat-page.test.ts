import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chatScript, typing } from '../../examples/http-app';
import type { Driver } from '../../src/drivers/driver';
import { startApp } from '../support/chat-app';
import { gate } from '../support/chat-fixtures';
import { ask, assistant, endlessDriver, SLOW, watch } from '../support/chat-page';
import { launchChromium } from '../support/chromium';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium('the chat page');
});

afterAll(async () => {
  await browser?.close();
});

it('in Chromium: ask, see the tool call and the answer typed in, approve a payment, reload mid-answer and see it continue', async () => {
  const held = gate();
  const holding = gate();
  const script = typing(chatScript());
  // The answer to the third message is held until the test has reloaded the page.
  const driver: Driver = {
    name: 'held',
    infer: async (state, context) => {
      const lastUser = state.messages().findLast((m) => m.role === 'user')?.content;
      if (lastUser === 'Hotels in Porto?' && state.messages().at(-1)?.role === 'tool') {
        holding.open();
        await held.opened;
      }
      return script.infer(state, context);
    },
  };
  // Approvals bound to the exact call: the page sends back the signature the server gave it.
  const { url, store } = await startApp({ driver, approvalSecret: 'a secret of the chat page' });
  const page = await browser.newPage({ viewport: { width: 760, height: 600 } });
  const problems = watch(page);

  await page.goto(`${url}/?chat=browser-1`);
  await page.waitForSelector('body[data-ready="true"]');
  // Every text the answer shows while it streams in.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { seen: string[] }).seen = seen;
    new MutationObserver(() => {
      const text = document.querySelector('li.assistant:last-child p.text')?.textContent;
      if (text && seen.at(-1) !== text) seen.push(text);
    }).observe(document.querySelector('#messages') as Node, {
      childList: true,
      subtree: true,
      characterData: true,
    });
  });

  await ask(page, 'What is the weather in Lisbon in May?');
  const weather = 'Lisbon is mild in May: highs of 22 °C, lows of 14 °C and about 5 rainy days.';
  await expect.poll(() => assistant(page).locator('p.text').textContent(), SLOW).toBe(weather);
  const search = assistant(page).locator('.tool[data-tool="search"]');
  expect(await search.getAttribute('data-state')).toBe('output-available');
  expect(await search.locator('code').textContent()).toBe('search({"query":"Lisbon weather May"})');
  expect(await search.locator('pre.output').textContent()).toContain('highs of 22 °C');
  const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
  expect(seen.length).toBeGreaterThan(1); // the words came in one after another
  expect(weather.startsWith(seen[0] as string)).toBe(true);

  await ask(page, 'Pay the hotel deposit.');
  const payment = assistant(page).locator('.tool[data-tool="pay"]');
  await payment.locator('button.approve').waitFor();
  expect(await payment.getAttribute('data-state')).toBe('approval-requested');
  const [pending] = (await store.load('browser-1'))?.state.pendingApprovals() ?? [];
  expect(pending?.signature).toBeDefined();
  // docs/chat.png in the README is a copy of this screenshot.
  await mkdir(resolve('test-output'), { recursive: true });
  await page.screenshot({ path: resolve('test-output/chat-page.png') });
  await payment.locator('button.approve').click();
  await expect
    .poll(() => assistant(page).locator('p.text').last().textContent(), SLOW)
    .toBe('Paid: €95 to Hotel Lisboa. Your room is held for May.');
  expect(await payment.getAttribute('data-state')).toBe('output-available');
  expect(await payment.locator('pre.output').textContent()).toContain('"paid": 95');
  expect(await page.locator('li').count()).toBe(4); // the approval went on in the same message

  await ask(page, 'Hotels in Porto?');
  await holding.opened;
  await assistant(page).locator('.tool[data-tool="search"][data-state="output-available"]').waitFor();
  const resumed = page.waitForResponse(
    (r) => r.url().endsWith('/api/chat/browser-1/stream') && r.status() === 200,
  );
  await page.reload();
  await resumed; // the reloaded page follows the run still going on
  held.open();
  await expect
    .poll(() => assistant(page).locator('p.text').last().textContent(), SLOW)
    .toBe(
      '(scripted) Found: Mid-range hotels in Porto cost about €80 a night in May.. Set OPENAI_API_KEY for a real model.',
    );
  expect(await page.locator('li').count()).toBe(6);
  expect(await page.locator('li.user').allTextContents()).toEqual([
    'What is the weather in Lisbon in May?',
    'Pay the hotel deposit.',
    'Hotels in Porto?',
  ]);
  expect(await assistant(page).locator('.tool[data-tool="search"]').count()).toBe(1);
  expect(await page.locator('#status').getAttribute('data-status')).toBe('ready');
  expect((await store.load('browser-1'))?.state.executionCount()).toBe(3);
  expect(problems).toEqual([]);
  await page.close();
}, 90_000);

it('in Chromium: hostile text in a message and in a tool result is shown as text, never run', async () => {
  const { url } = await startApp({ driver: chatScript() });
  const page = await browser.newPage();
  const problems = watch(page);
  let dialogs = 0;
  page.on('dialog', (dialog) => {
    dialogs++;
    void dialog.dismiss();
  });
  await page.goto(`${url}/?chat=hostile-1`);
  await page.waitForSelector('body[data-ready="true"]');
  await ask(page, 'Weather?');
  await assistant(page).locator('p.text').waitFor();
  await ask(page, 'Pay the hotel deposit.');
  await assistant(page).locator('button.deny').click();
  await expect
    .poll(() => assistant(page).locator('p.text').last().textContent(), SLOW)
    .toBe('The deposit was not paid.');
  expect(await assistant(page).locator('.tool[data-tool="pay"]').getAttribute('data-state')).toBe(
    'output-denied',
  );
  const hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
  await ask(page, hostile);
  await expect.poll(() => page.locator('li.user').last().textContent(), SLOW).toBe(hostile);
  await expect
    .poll(() => assistant(page).locator('.tool pre.output').textContent(), SLOW)
    .toBe(`No results for "${hostile}".`);
  expect(await page.locator('img').count()).toBe(0);
  expect(dialogs).toBe(0);
  expect(problems).toEqual([]);
  await page.close();
}, 90_000);

it('in Chromium: a chat id the server refuses starts a new chat under an id of the page', async () => {
  const { url } = await startApp({ driver: chatScript() });
  const page = await browser.newPage();
  const problems = watch(page);
  await page.goto(`${url}/?chat=..%2Fetc`);
  await page.waitForSelector('body[data-ready="true"]');
  const id = new URL(page.url()).searchParams.get('chat');
  expect(id).toMatch(/^[A-Za-z0-9]+$/);
  await ask(page, 'Weather?');
  await assistant(page).locator('p.text').waitFor(SLOW);
  expect(problems).toEqual([
    'console: Failed to load resource: the server responded with a status of 400 (Bad Request)',
  ]);
  await page.close();
}, 90_000);

it('in Chromium: Stop ends an answer mid-way; the run is stopped on the server', async () => {
  const { url, store } = await startApp({ driver: endlessDriver });
  const page = await browser.newPage();
  const problems = watch(page);
  await page.goto(`${url}/?chat=stop-1`);
  await page.waitForSelector('body[data-ready="true"]');
  await ask(page, 'Think hard.');
  await expect.poll(() => assistant(page).locator('p.text').textContent(), SLOW).toBe('Thinking about it');
  expect(await page.locator('#stop').isVisible()).toBe(true);
  await page.click('#stop');
  await expect.poll(() => page.locator('#status').getAttribute('data-status'), SLOW).toBe('ready');
  expect(await page.locator('#stop').isVisible()).toBe(false);
  const saved = await store.load('stop-1');
  expect(saved?.state.status()).toBe('stopped');
  expect(saved?.state.stopReason()).toBe('user_requested');
  expect(problems).toEqual([]);
  await page.close();
}, 90_000);
