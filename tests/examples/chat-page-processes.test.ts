/**
 * Issue #35 in a real browser: the example chat page served by two processes over one
 * redis-server (RedisStreamStore) and one SQLite file. The page asks process A, which holds its
 * answer mid-way; the page is reloaded from process B, follows the run still going on in A through
 * Redis, and ends showing the whole answer once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import { ask, assistant, SLOW, watch } from '../support/chat-page';
import { chatProcesses } from '../support/chat-processes';
import { launchChromium } from '../support/chromium';

const PREFIX = 'chat-page-test:';
const ANSWER = 'Lisbon is mild in May: highs of 22 °C, lows of 14 °C and about 5 rainy days.';
let browser: Browser;
let redis: RedisServer;
let dir: string;
const processes = chatProcesses(join(import.meta.dirname, 'support/chat-app-process.ts'));

beforeAll(async () => {
  [browser, redis] = await Promise.all([launchChromium('the chat page'), startRedisServer()]);
  dir = mkdtempSync(join(tmpdir(), 'chat-page-processes-'));
}, 60_000);

afterAll(async () => {
  processes.killAll();
  await browser?.close();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('in Chromium: a page reloaded mid-answer against another process follows the run and shows the whole answer once', async () => {
  const env = {
    REDIS_PORT: String(redis.port),
    STREAM_PREFIX: PREFIX,
    CHAT_DB: join(dir, 'chats.db'),
    HOLD_AFTER_WORDS: '4',
  };
  const [a, b] = await Promise.all([processes.start(env), processes.start(env)]);
  const page = await browser.newPage({ viewport: { width: 760, height: 600 } });
  const problems = watch(page);
  // Every text the answer shows, in this page and the reloaded one.
  await page.addInitScript(() => {
    const seen: string[] = JSON.parse(sessionStorage.getItem('seen') ?? '[]');
    addEventListener('DOMContentLoaded', () => {
      new MutationObserver(() => {
        const text = document.querySelector('li.assistant:last-child p.text')?.textContent;
        if (text && seen.at(-1) !== text) {
          seen.push(text);
          sessionStorage.setItem('seen', JSON.stringify(seen));
        }
      }).observe(document.querySelector('#messages') as Node, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
  });

  await page.goto(`${a.url}/?chat=reloaded-1`);
  await page.waitForSelector('body[data-ready="true"]');
  await ask(page, 'What is the weather in Lisbon in May?');
  // A has typed four words and holds the rest.
  await expect.poll(() => assistant(page).locator('p.text').textContent(), SLOW).toBe('Lisbon is mild in ');

  const resumed = page.waitForResponse((r) => r.url() === `${b.api}/reloaded-1/stream` && r.status() === 200);
  await page.goto(`${b.url}/?chat=reloaded-1`); // the reload, served by B
  await resumed; // B relays the run going on in A
  await expect.poll(() => assistant(page).locator('p.text').textContent(), SLOW).toBe('Lisbon is mild in ');
  const gate = new Redis(redis.connection);
  await gate.rpush(`${PREFIX}gate`, 'go');
  gate.disconnect();

  await expect.poll(() => assistant(page).locator('p.text').textContent(), SLOW).toBe(ANSWER);
  await expect.poll(() => page.locator('#status').getAttribute('data-status'), SLOW).toBe('ready');
  expect(await page.locator('li').count()).toBe(2);
  expect(await page.locator('li.user').allTextContents()).toEqual(['What is the weather in Lisbon in May?']);
  expect(await assistant(page).locator('p.text').count()).toBe(1);
  expect(await assistant(page).locator('.tool[data-tool="search"]').count()).toBe(1);
  // never a word twice nor out of order: every text shown was the start of the answer
  const seen = await page.evaluate(() => JSON.parse(sessionStorage.getItem('seen') ?? '[]') as string[]);
  expect(seen.length).toBeGreaterThan(1);
  for (const text of seen) expect(ANSWER.startsWith(text), text).toBe(true);
  expect(problems).toEqual([]);

  const store = new SqliteSessionStore(env.CHAT_DB);
  const saved = (await store.load('reloaded-1'))?.state;
  await store.close();
  expect(saved?.finalResponse()).toBe(ANSWER);
  expect(saved?.executionCount()).toBe(1);
  await page.close();
}, 120_000);
