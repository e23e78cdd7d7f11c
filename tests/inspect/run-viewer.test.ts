import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { buildRunView, NotARunError } from '../../src/inspect/run-model';
import { renderRunViewer } from '../../src/inspect/run-viewer';
import { recordTrace } from '../../src/inspect/trace-recorder';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { InvalidStateError } from '../../src/state/errors';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { defineTool } from '../../src/tools/define-tool';
import { launchChromium } from '../support/chromium';
import { FINAL_ANSWER, HOSTILE, lookup, question, recordedRun, TOOL_ERROR, weatherAgent } from './support';

const OUT = resolve('test-output');
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium('the run viewer');
  await mkdir(OUT, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
});

interface Opened {
  page: Page;
  /** Console errors (CSP violations show here), page errors, and every request but the page's own. */
  problems: string[];
  requests: string[];
}

async function open(html: string, name: string): Promise<Opened> {
  const file = resolve(OUT, `${name}.html`);
  await writeFile(file, html);
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const problems: string[] = [];
  const requests: string[] = [];
  const url = pathToFileURL(file).href;
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (r.url() !== url) requests.push(r.url());
  });
  await page.goto(url);
  return { page, problems, requests };
}

/** The text as a person sees it (Playwright's innerText: layout-aware, CSS text-transform applied). */
// biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, not the DOM property
const shown = (locator: Locator) => locator.innerText();
const text = (page: Page, selector: string) => shown(page.locator(selector));

describe('the run viewer in a browser', () => {
  it('shows a recorded run: steps, tools, the error, the stop reason, tokens; a click shows the messages', async () => {
    const { state, recorder } = await recordedRun();
    const { page, problems, requests } = await open(renderRunViewer(recorder.trace()), 'run-viewer');
    await page.setViewportSize({ width: 1400, height: 1300 });

    expect(await page.title()).toBe('Weather comparison');
    expect(await text(page, '[data-testid="status"]')).toContain('completed');
    expect(await text(page, '[data-testid="stop-reason"]')).toContain('completed');
    expect(await text(page, '[data-testid="steps"] .value')).toBe('3');
    expect(await text(page, '[data-testid="tokens"] .value')).toBe('725');
    expect(await text(page, '[data-testid="tokens"] .hint')).toBe('630 in · 95 out');
    expect(state.usage().totalTokens).toBe(725);
    expect(await text(page, '[data-testid="errors"] .value')).toBe('1');

    const rows = page.locator('li.step');
    expect(await rows.count()).toBe(3);
    expect(await shown(rows.nth(0))).toMatch(/Step 1\s+tool execution\s+lookup ✓/);
    expect(await shown(rows.nth(0))).toContain('150 tokens');
    expect(await shown(rows.nth(1))).toMatch(/Step 2\s+error\s+lookup ✓\s*forecast ✗/);
    expect(await shown(rows.nth(1))).toContain(`forecast: ${TOOL_ERROR}`);
    expect(await shown(rows.nth(2))).toMatch(/Step 3\s+final response/);
    expect(await text(page, 'ul[data-testid="errors"]')).toContain(
      `step 2, tool forecast Error: ${TOOL_ERROR}`,
    );
    expect(await text(page, '[data-testid="final-response"]')).toBe(FINAL_ANSWER);

    const path = await text(page, '[data-testid="state-path"]');
    expect(path).toMatch(/^start\s+pending/);
    expect(path).toMatch(/step 1\s+beforeStep\.checkHooks\s*→\s*inference\s*→\s*tools\s*→\s*record\s+step 2/);
    // without afterExecution hooks, straight from the last step to finalizing
    expect(path).toMatch(/end\s+finalizing\.checkStore\s*→\s*completed$/);

    // Nothing selected yet; clicking step 2 shows its messages and tool results.
    expect(await text(page, '#detail')).toContain('Select a step');
    await rows.nth(1).click();
    expect(await rows.nth(1).getAttribute('aria-pressed')).toBe('true');
    const detail = await text(page, '#detail');
    expect(detail).toMatch(/^Step 2\s+error/);
    expect(detail.toLowerCase()).toContain('tool calls (2)'); // headings are upper-cased by CSS
    expect(detail.toLowerCase()).toContain('input messages (3)'); // headings are upper-cased by CSS
    expect(detail).toContain('1 earlier message (seen by the previous step)');
    expect(detail).toContain('Let me look up Paris first.');
    expect(detail).toContain('{"city":"Paris","celsius":18}');
    expect(detail.toLowerCase()).toContain('output messages (3)'); // headings are upper-cased by CSS
    expect(detail).toContain(`Error: ${TOOL_ERROR}`);
    // The hostile tool result is shown as text, and did nothing.
    expect(detail).toContain('<script>window.__pwned = true</script>');
    expect(await page.evaluate(() => (globalThis as { __pwned?: boolean }).__pwned)).toBeUndefined();
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(2);

    // The earlier message opens on request; the keyboard moves between steps.
    await page.locator('#detail details summary').click();
    expect(await text(page, '#detail details')).toContain('Which is warmer, Paris or Oslo?');
    await rows.nth(1).focus();
    await page.keyboard.press('ArrowDown');
    expect(await text(page, '#detail')).toMatch(/^Step 3\s+final response/);
    await page.keyboard.press('ArrowUp');
    expect(await text(page, '#detail')).toMatch(/^Step 2/);
    await page.locator('#detail details summary').click();

    await page.screenshot({ path: resolve(OUT, 'run-viewer.png'), fullPage: true });
    expect(problems).toEqual([]);
    expect(requests).toEqual([]);
    await page.close();
  });

  it('opens a step from the address (#a0-s1)', async () => {
    const { recorder } = await recordedRun();
    const { page, problems } = await open(renderRunViewer(recorder.trace()), 'run-viewer-hash');
    await page.goto(`${page.url()}#a0-s1`);
    await page.reload();
    expect(await text(page, '#detail')).toMatch(/^Step 1\s+tool execution/);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('renders a subagent tree from a trace: the child under its parent', async () => {
    const recorder = recordTrace({ title: 'Research with a subagent' });
    const child = weatherAgent();
    const research = defineTool({
      description: 'Delegate a question to a subagent',
      inputSchema: z.object({ topic: z.string() }),
      execute: async ({ topic }, { state }) => {
        const done = await child.execute(
          AgentState.empty({ parentAgentId: state.agentId() }).withUserMessage(topic),
          { inspect: recorder.inspect },
        );
        return { answer: done.finalResponse(), agentId: done.agentId() };
      },
    });
    const root = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ name: 'research', args: { topic: 'Paris or Oslo?' } }], usage: { inputTokens: 40 } },
        { text: 'Paris.', usage: { inputTokens: 60, outputTokens: 2 } },
      ]),
      tools: { research },
    });
    const done = await root.execute(AgentState.empty().withUserMessage('Research the weather'), {
      inspect: recorder.inspect,
    });
    const trace = recorder.trace();
    expect(trace.agents.map((a) => a.parentAgentId)).toEqual([null, done.agentId()]);

    const view = buildRunView(trace);
    expect(view.agents.map((a) => [a.key, a.depth, a.parentKey])).toEqual([
      ['a0', 0, null],
      ['a1', 1, 'a0'],
    ]);
    expect(view.agents[1]?.spawnedBy).toEqual({ stepNumber: 1, toolName: 'research' });

    const { page, problems } = await open(renderRunViewer(trace), 'run-viewer-subagent');
    expect(await text(page, '[data-testid="agents"] .value')).toBe('2');
    const tree = page.locator('[data-testid="agent-tree"]');
    const rootId = done.agentId().slice(0, 8);
    const childId = view.agents[1]?.agentId.slice(0, 8) as string;
    expect(await shown(tree.locator(':scope > li > .node-line'))).toContain(rootId);
    expect(await shown(tree.locator(':scope > li > ul > li'))).toMatch(
      new RegExp(`${childId}\\s+completed\\s+3 steps · 725 tokens\\s+via research in step 1`),
    );
    expect(await text(page, '#agent-a1 .agent-head')).toContain(
      `subagent of ${rootId} via research in step 1`,
    );
    expect(await page.locator('#agent-a1 li.step').count()).toBe(3);
    await page.locator('#a0-s1').click();
    await page.locator('#detail a', { hasText: `ran subagent ${childId}` }).click();
    expect(page.url()).toMatch(/#agent-a1$/);
    await page.locator('#a1-s2').click();
    expect(await text(page, '#detail')).toContain(TOOL_ERROR);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('renders a child state carried in a tool result, from the root AgentState JSON alone', async () => {
    const child = await weatherAgent().execute(question());
    const research = defineTool({
      description: 'Delegate',
      inputSchema: z.object({}),
      execute: async (_input, { state }) => ({
        answer: child.finalResponse(),
        state: child.withParentAgentId(state.agentId()).toJSON(),
      }),
    });
    const root = await createAgent({
      driver: scriptedDriver([{ toolCalls: [{ name: 'research', args: {} }] }, { text: 'Paris.' }]),
      tools: { research },
    }).execute(AgentState.empty().withUserMessage('Research the weather'));
    const json = JSON.parse(JSON.stringify(root));

    const view = buildRunView(json);
    expect(view.source).toBe('state');
    expect(view.agents).toHaveLength(2);
    expect(view.agents[1]?.parentKey).toBe('a0');
    expect(view.agents[0]?.steps[0]?.tools[0]?.childAgent).toBe('a1');

    const { page, problems } = await open(renderRunViewer(json), 'run-viewer-embedded');
    expect(await shown(page.locator('#agent-a1 .agent-head'))).toMatch(
      /^Subagent [0-9a-f]{8}\s+completed\s+subagent of [0-9a-f]{8} via research in step 1$/,
    );
    expect(await page.locator('#agent-a1 li.step').count()).toBe(3);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('renders an AgentState without a trace, and without children', async () => {
    const { state } = await recordedRun();
    const { page, problems } = await open(renderRunViewer(state), 'run-viewer-state');
    expect(await text(page, '[data-testid="agents"]')).toContain('no subagents');
    expect(await page.locator('[data-testid="agent-tree"]').count()).toBe(0);
    expect(await page.locator('li.step').count()).toBe(3);
    expect(await text(page, '#agent-a0')).toContain('Not recorded: this page was made from an AgentState');
    await page.locator('#a0-s3').click();
    expect(await text(page, '#detail')).toContain(FINAL_ANSWER);
    expect(await text(page, '#detail')).toContain('model call');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a failed run and a stopped one with their stop reasons and messages', async () => {
    const failing = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ name: 'lookup', args: { city: 'Paris' } }], usage: { inputTokens: 10 } },
        { error: new Error('model overloaded') },
      ]),
      tools: { lookup },
    });
    const recorder = recordTrace();
    const failed = await failing.execute(question(), { inspect: recorder.inspect });
    expect(failed.stopReason()).toBe('error_forbade');
    const a = await open(renderRunViewer(recorder.trace()), 'run-viewer-failed');
    expect(await text(a.page, '[data-testid="status"]')).toContain('failed');
    expect(await text(a.page, '[data-testid="stop-reason"]')).toBe(
      'STOP REASON\nerror_forbade\nmodel overloaded',
    );
    expect(await text(a.page, 'ul[data-testid="errors"]')).toContain('step 2 Error: model overloaded');
    expect(await text(a.page, '[data-testid="state-path"]')).toMatch(/failing\.checkHooks[\s\S]*failed$/);
    await a.page.locator('#a0-s2').click();
    expect(await text(a.page, '#detail')).toContain(
      'Stop signal: error_forbade: model overloaded (agent-loop)',
    );
    expect(a.problems).toEqual([]);
    await a.page.close();

    const looping = createAgent({
      driver: scriptedDriver([{ toolCalls: [{ name: 'lookup', args: { city: 'Paris' } }] }]),
      tools: { lookup },
      budget: new ExecutionBudget({ maxSteps: 2 }),
    });
    const stopped = await looping.execute(question());
    const b = await open(renderRunViewer(stopped), 'run-viewer-stopped');
    expect(await text(b.page, '[data-testid="status"]')).toContain('stopped');
    expect(await text(b.page, '[data-testid="stop-reason"]')).toContain('Step limit reached: 2/2');
    expect(await b.page.locator('li.step').count()).toBe(2);
    // The budget guard stopped the run before a third step: the signal is the execution's.
    expect(await text(b.page, '#agent-a0 .facts')).toContain(
      'steps_limit_reached — Step limit reached: 2/2 (budgetGuard)',
    );
    expect(b.problems).toEqual([]);
    await b.page.close();
  });

  it("labels each execution of a session in the state path, an agent's without hooks too", async () => {
    const recorder = recordTrace();
    const agent = createAgent({ driver: scriptedDriver([{ text: 'one' }, { text: 'two' }]) });
    const actor = agent.createActor(AgentState.empty(), { inspect: recorder.inspect }).start();
    actor.send({ type: 'user.message', text: 'first' });
    await waitFor(actor, (s) => s.hasTag('outcome'));
    actor.send({ type: 'user.message', text: 'second' });
    await waitFor(actor, (s) => s.hasTag('outcome') && s.context.state.finalResponse() === 'two');
    actor.stop();
    const { page, problems } = await open(renderRunViewer(recorder.trace()), 'run-viewer-session');
    const path = await text(page, '[data-testid="state-path"]');
    expect(path).toMatch(/^start\s+pending\s+step 1\s+beforeStep\.checkHooks[\s\S]*→\s*completed/);
    expect(path).toMatch(/completed\s+run 2\s+step 1\s+beforeStep\.checkHooks[\s\S]*→\s*completed$/);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('renders a state that never ran', async () => {
    const { page, problems } = await open(renderRunViewer(question()), 'run-viewer-empty');
    expect(await text(page, '[data-testid="status"]')).toContain('pending');
    expect(await text(page, '#agent-a0')).toContain('No steps recorded.');
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('renderRunViewer input', () => {
  it('escapes every recorded text and keeps the data inert', async () => {
    const state = await weatherAgent().execute(question().withSystemPrompt('</script><b>bold</b>'));
    const html = renderRunViewer(state, { title: '<i>title</i>' });
    expect(html).not.toContain('<b>bold</b>');
    expect(html).not.toContain('<i>title</i>');
    expect(html).not.toContain(HOSTILE);
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).toContain('script-src &#39;sha256-');
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('refuses what is neither a trace nor a state, naming the problem', () => {
    expect(() => renderRunViewer({ hello: 1 } as never)).toThrow(NotARunError);
    expect(() => renderRunViewer({ hello: 1 } as never)).toThrow(/keys "hello"/);
    expect(() => renderRunViewer([] as never)).toThrow(/got an array/);
    expect(() => renderRunViewer({ formatVersion: 1, agentId: '' } as never)).toThrow(InvalidStateError);
  });
});
