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
  browser = await launchChromium('the React chat page');
});

afterAll(async () => {
  await browser?.close();
});

it("in Chromium, React's useChat: stored messages on load, input disabled while an approval waits, resume after a reload", async () => {
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
  const { url, store, api } = await startApp({ driver, client: 'react' });
  const page = await browser.newPage({ viewport: { width: 760, height: 600 } });
  const problems = watch(page);
  const posts: number[] = [];
  page.on('response', (response) => {
    if (response.request().method() === 'POST' && response.url() === api) posts.push(response.status());
  });

  await page.goto(`${url}/?chat=react-1`);
  await page.waitForSelector('body[data-ready="true"]');
  await ask(page, 'What is the weather in Lisbon in May?');
  const weather = 'Lisbon is mild in May: highs of 22 °C, lows of 14 °C and about 5 rainy days.';
  await expect.poll(() => assistant(page).locator('p.text').textContent(), SLOW).toBe(weather);
  expect(await assistant(page).locator('.tool[data-tool="search"]').getAttribute('data-state')).toBe(
    'output-available',
  );

  await ask(page, 'Pay the hotel deposit.');
  const payment = assistant(page).locator('.tool[data-tool="pay"]');
  await payment.locator('button.approve').waitFor(SLOW);
  // The page does not let a message through while the call waits: the server would refuse it.
  expect(await page.locator('#text').isDisabled()).toBe(true);
  expect(await page.locator('#send').isDisabled()).toBe(true);
  expect(await page.locator('#status').getAttribute('data-waiting')).toBe('true');

  // A reload while the approval waits shows the stored conversation, still waiting.
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await payment.locator('button.approve').waitFor(SLOW);
  expect(await page.locator('li.user').allTextContents()).toEqual([
    'What is the weather in Lisbon in May?',
    'Pay the hotel deposit.',
  ]);
  expect(await page.locator('#text').isDisabled()).toBe(true);

  await payment.locator('button.approve').click();
  await expect
    .poll(() => assistant(page).locator('p.text').last().textContent(), SLOW)
    .toBe('Paid: €95 to Hotel Lisboa. Your room is held for May.');
  expect(await payment.getAttribute('data-state')).toBe('output-available');
  expect(await page.locator('#text').isDisabled()).toBe(false);

  await ask(page, 'Hotels in Porto?');
  await holding.opened;
  await assistant(page).locator('.tool[data-tool="search"][data-state="output-available"]').waitFor(SLOW);
  const resumed = page.waitForResponse(
    (r) => r.url().endsWith('/api/chat/react-1/stream') && r.status() === 200,
  );
  await page.reload();
  await resumed; // useChat({ resume: true }) follows the run still going on
  held.open();
  await expect
    .poll(() => assistant(page).locator('p.text').last().textContent(), SLOW)
    .toBe(
      '(scripted) Found: Mid-range hotels in Porto cost about €80 a night in May.. Set OPENAI_API_KEY for a real model.',
    );
  expect(await page.locator('li.user').allTextContents()).toEqual([
    'What is the weather in Lisbon in May?',
    'Pay the hotel deposit.',
    'Hotels in Porto?',
  ]);
  expect(await assistant(page).locator('.tool[data-tool="search"]').count()).toBe(1);
  expect((await store.load('react-1'))?.state.executionCount()).toBe(3);
  // Every post was answered: no 409 (a message while an approval waits) ever left the page stuck.
  expect(posts.every((status) => status === 200)).toBe(true);
  expect(posts.length).toBe(4); // three messages and one approval
  expect(problems).toEqual([]);
  await page.close();
}, 120_000);

it("in Chromium, React's useChat: Stop ends an answer mid-way; the run is stopped on the server", async () => {
  const { url, store } = await startApp({ driver: endlessDriver, client: 'react' });
  const page = await browser.newPage();
  const problems = watch(page);
  await page.goto(`${url}/?chat=react-stop`);
  await page.waitForSelector('body[data-ready="true"]');
  await ask(page, 'Think hard.');
  await expect.poll(() => assistant(page).locator('p.text').textContent(), SLOW).toBe('Thinking about it');
  await page.click('#stop');
  await expect.poll(() => page.locator('#status').getAttribute('data-status'), SLOW).toBe('ready');
  expect(await page.locator('#stop').count()).toBe(0);
  expect((await store.load('react-stop'))?.state.stopReason()).toBe('user_requested');
  expect(problems).toEqual([]);
  await page.close();
}, 90_000);
