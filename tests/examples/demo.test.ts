import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type OpenAIServer,
  type RecordedRequest,
  startOpenAIServer,
  textReply,
  toolCallReply,
} from '../support/openai-server';
import { runExample } from './run-example';

/** Asserts that each line occurs in `output`, in this order. */
function expectInOrder(output: string, lines: readonly string[]): void {
  let from = 0;
  for (const line of lines) {
    const at = output.indexOf(line, from);
    expect(at, `expected, after position ${from}: ${line}\n--- output ---\n${output}`).toBeGreaterThanOrEqual(
      0,
    );
    from = at + line.length;
  }
}

const repo = resolve(import.meta.dirname, '../..');
const VIEWER = 'demo-output/run.html';

describe('examples/demo.ts (npm run demo)', () => {
  it('runs offline with a scripted model: the researcher subagent indented under its call, the final answer and the usage', async () => {
    rmSync(resolve(repo, VIEWER), { force: true });
    const run = await runExample('examples/demo.ts');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Offline: a scripted model plays the agents. Set OPENAI_API_KEY');
    expectInOrder(run.stdout, [
      "step 1\n  model: I'll ask the researcher for the weather and the prices.\n",
      '  → researcher {"task":"Find the May weather in Lisbon, a mid-range hotel price and return flights from Paris."}\n',
      // the subagent runs inside the call, on a budget capped by what the planner has left
      '      subagent started on a budget of 4 steps and 39,527 tokens\n',
      '      step 1\n        model: One search per fact.\n',
      '        → search {"query":"Lisbon weather May"}\n',
      '        → search {"query":"Lisbon hotel price"}\n',
      '        → search {"query":"flights Paris Lisbon"}\n',
      '        ← search: Lisbon in May: highs of 22 °C, lows of 14 °C, about 5 rainy days.\n',
      '        ← search: Mid-range hotels in central Lisbon cost about €95 a night in May.\n',
      '        ← search: Return flights Paris–Lisbon in May start at €120.\n',
      '        = tool_execution, 295 tokens (231 in, 64 out)\n',
      '      step 2\n',
      '        = final_response, 430 tokens (389 in, 41 out)\n',
      '      completed (stop reason: completed) after 2 steps, 725 tokens (620 in, 105 out)\n',
      '  ← researcher: Weather: highs of 22 °C, about 5 rainy days in May. Hotel: about €95 a night. Flights: from €120 return.\n',
      '  = tool_execution, 1,198 tokens (1,032 in, 166 out), 725 of them by the subagent\n',
      'step 2\n',
      '  → calculator {"expression":"3 x 95 + 120"}\n',
      '  ✗ calculator failed: Unexpected "x" in "3 x 95 + 120": use numbers, + - * / and parentheses\n',
      '  = error, 581 tokens (548 in, 33 out)\n',
      'step 3\n',
      '  ← calculator: 405\n',
      'step 4\n',
      '  = final_response, 726 tokens (672 in, 54 out)\n',
      'completed (stop reason: completed) after 4 steps, 3,151 tokens (2,869 in, 282 out)\n',
      '\nfinal answer: Lisbon is a good pick for May: highs around 22 °C and only a few rainy days. Three nights in a mid-range hotel (€95 a night) and a €120 return flight from Paris come to €405.\n',
      'usage: 3,151 tokens (2,869 in, 282 out), 725 of them by the researcher\n',
      `run viewer: ${VIEWER} (one offline HTML file: open it in a browser)\n`,
    ]);
    // the page of this run: both agents, the steps and the answer
    const page = readFileSync(resolve(repo, VIEWER), 'utf8');
    expect(page).toMatch(/^<!doctype html>/i);
    expect(page).toContain('trip planner');
    expect(page).toContain('researcher');
    expect(page).toContain('come to €405');
    expect(page).not.toMatch(/<(script|link|img)[^>]+(src|href)=["']?https?:/i);
  });

  it('writes the run viewer page where git and the linter ignore it', () => {
    // exits 1 (throws) when the path is not ignored
    expect(() => execFileSync('git', ['check-ignore', '-q', VIEWER], { cwd: repo })).not.toThrow();
    // `npm run lint` after `npm run demo` must not lint the generated page
    const biome = JSON.parse(readFileSync(resolve(repo, 'biome.json'), 'utf8'));
    expect(biome.files.includes).toContain('!**/demo-output');
  });

  describe('with OPENAI_API_KEY (a loopback OpenAI-compatible server)', () => {
    let server: OpenAIServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });
    const env = (s: OpenAIServer) => ({
      OPENAI_API_KEY: 'test-key',
      OPENAI_BASE_URL: s.baseURL,
      OPENAI_MODEL: 'test-model',
    });
    // biome-ignore lint/suspicious/noExplicitAny: the recorded request body is the provider's JSON
    const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((t: any) => t.function.name);

    it('runs the same agents on the model: planner and researcher each get their own tools', async () => {
      server = await startOpenAIServer((request) => {
        const messages: Array<{ role: string; content: unknown }> = request.body.messages;
        const results = messages.filter((m) => m.role === 'tool').length;
        if (String(messages[0]?.content).startsWith('You research')) {
          return results === 0
            ? toolCallReply([{ id: 's1', name: 'search', arguments: { query: 'Lisbon weather May' } }])
            : textReply('Lisbon in May: highs of 22 °C.', { prompt: 50, completion: 10 });
        }
        if (results === 0)
          return toolCallReply([
            { id: 'r1', name: 'researcher', arguments: { task: 'Lisbon weather in May' } },
          ]);
        if (results === 1)
          return toolCallReply([{ id: 'c1', name: 'calculator', arguments: { expression: '3 * 95 + 120' } }]);
        return textReply('Go to Lisbon: 22 °C, and €405 in all.', { prompt: 100, completion: 12 });
      });
      const run = await runExample('examples/demo.ts', env(server));
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expectInOrder(run.stdout, [
        `Running on test-model at ${server.baseURL}.`,
        '  → researcher {"task":"Lisbon weather in May"}\n',
        '        → search {"query":"Lisbon weather May"}\n',
        '        ← search: Lisbon in May: highs of 22 °C, lows of 14 °C, about 5 rainy days.\n',
        '      completed (stop reason: completed) after 2 steps, 75 tokens (60 in, 15 out)\n',
        '  ← researcher: Lisbon in May: highs of 22 °C.\n',
        '  ← calculator: 405\n',
        'final answer: Go to Lisbon: 22 °C, and €405 in all.\n',
        'usage: 217 tokens (180 in, 37 out), 75 of them by the researcher\n',
      ]);
      expect(server.requests).toHaveLength(5);
      for (const request of server.requests) {
        expect(request.headers.authorization).toBe('Bearer test-key');
        expect(request.body.model).toBe('test-model');
      }
      expect(toolNames(server.requests[0] as RecordedRequest).sort()).toEqual(['calculator', 'researcher']);
      expect(toolNames(server.requests[1] as RecordedRequest)).toEqual(['search']); // a leaf subagent
    });

    it('exits 1 with the provider error when the model refuses the key', async () => {
      server = await startOpenAIServer([
        { type: 'error', status: 401, message: 'Incorrect API key provided' },
      ]);
      const run = await runExample('examples/demo.ts', env(server));
      expect(run.code).toBe(1);
      expectInOrder(run.stdout, [
        'step 1\n',
        '  ✗ AI_APICallError: Incorrect API key provided\n',
        'failed (stop reason: error_forbade) after 1 step, 0 tokens (0 in, 0 out)\n',
        'final answer: (none)\n',
      ]);
      expect(run.stderr).toBe(
        '\ndemo failed: the run ended failed (error_forbade): Incorrect API key provided\n',
      );
    });
  });
});
