/** What the Chromium tests of the example chat pages (plain and React) share. */
import type { Page } from 'playwright-core';
import type { Driver } from '../../src/drivers/driver';

// Generous limits: the machine may be loaded; the page answers in well under a second when it is not.
export const SLOW = { timeout: 30_000 };

/** Page errors, console errors and requests off this server: the page must have none. */
export function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => {
    if (!request.url().startsWith('http://127.0.0.1:')) problems.push(`request: ${request.url()}`);
  });
  return problems;
}

export async function ask(page: Page, text: string): Promise<void> {
  await page.fill('#text', text);
  await page.click('#send');
}

export const assistant = (page: Page) => page.locator('li.assistant').last();

/** A model that starts typing ("Thinking about it") and then waits until the run is stopped. */
export const endlessDriver: Driver = {
  name: 'endless',
  infer: async (state, context) => {
    context.report({
      type: 'text.delta',
      agentId: state.agentId(),
      parentAgentId: state.parentAgentId(),
      executionId: state.executionId() ?? '',
      stepNumber: state.stepCount() + 1,
      delta: 'Thinking about it',
    });
    return new Promise((_resolve, reject) => {
      context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
    });
  },
};
