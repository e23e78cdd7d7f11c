import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { buildRunView } from '../../src/inspect/run-model';
import { renderRunView } from '../../src/inspect/run-viewer';
import type { SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { defineTool } from '../../src/tools/define-tool';
import { launchChromium } from '../support/chromium';

const OUT = resolve('test-output');
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium('the run viewer');
  await mkdir(OUT, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

describe('the run viewer in Chromium with hostile values and built-in subagents', () => {
  it('shows an own __proto__ key as data, every subagent, and touches no prototype in the page', async () => {
    const thirdParty = defineTool({
      description: 'Returns third-party JSON',
      inputSchema: z.object({}).passthrough(),
      execute: async () => JSON.parse('{"__proto__":{"polluted":"yes"},"ok":1}'),
    });
    const helper: SubagentDefinition = {
      description: 'Helps',
      driver: scriptedDriver([{ text: 'helped', usage: { inputTokens: 5, outputTokens: 5 } }]),
    };
    const agent = createAgent({
      driver: scriptedDriver([
        {
          toolCalls: [
            { id: 't1', name: 'thirdParty', args: JSON.parse('{"__proto__":{"polluted":"yes"}}') },
            { id: 'h1', name: 'helper', args: { task: 'one' } },
            { id: 'h2', name: 'helper', args: { task: 'two' } },
          ],
          usage: { inputTokens: 10, outputTokens: 10 },
        },
        { text: 'done', usage: { inputTokens: 10, outputTokens: 10 } },
      ]),
      tools: { thirdParty },
      subagents: { agents: { helper } },
    });
    const state = await agent.execute(AgentState.empty().withUserMessage('Go'));
    const file = resolve(OUT, 'hostile-viewer.html');
    await writeFile(file, renderRunView(buildRunView(JSON.parse(JSON.stringify(state)))));

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    await page.goto(pathToFileURL(file).href);
    expect(await page.locator('[data-testid="tokens"] .value').textContent()).toBe('60');
    await page.locator('#a0-s1').click();
    const detail = (await page.locator('#detail').textContent()) ?? '';
    expect(detail).toContain('{"__proto__":{"polluted":"yes"},"ok":1}');
    expect(await page.evaluate(() => (({}) as { polluted?: string }).polluted ?? null)).toBeNull();
    expect(detail.match(/ran subagent/g)).toHaveLength(2);
    expect(problems).toEqual([]);
    await page.close();
  });
});
