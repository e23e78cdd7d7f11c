import { describe, expect, it } from 'vitest';
import { runExample } from './run-example';

describe('examples/subagents.ts', () => {
  it('prints the three-level tree: budgets capped by the caller, one fetcher out of tokens, usage rolled up', async () => {
    const run = await runExample('examples/subagents.ts');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        'editor: completed, 2 steps, 2,960 tokens (budget 6 steps, 3,000 tokens)',
        '  step 1 tool_execution: 300 tokens + 2,310 by subagents, called researcher',
        // asked for 10,000 tokens, got what the editor had left
        '    researcher: completed, 2 steps, 2,310 tokens (budget 4 steps, 2,700 tokens)',
        '      step 1 error: 250 tokens + 1,860 by subagents, called fetcher, fetcher (failed)',
        // two parallel calls share the researcher's remainder, each keeping one step (250) in reserve
        '        fetcher: completed, 2 steps, 460 tokens (budget 3 steps, 975 tokens)',
        '          step 1 tool_execution: 200 tokens, called search',
        '          step 2 final_response: 260 tokens',
        '        fetcher: stopped: Token limit reached: 1400/975, 2 steps, 1,400 tokens (budget 3 steps, 975 tokens)',
        '          step 1 tool_execution: 700 tokens, called search',
        '          step 2 tool_execution: 700 tokens, called search',
        '      step 2 final_response: 200 tokens',
        '  step 2 final_response: 350 tokens',
        '',
        'answer: Lisbon in May is warm (22 °C) with little rain; check hotel prices before booking.',
        "usage: 2,960 tokens for the whole tree, within the editor's 3,000",
        '',
      ].join('\n'),
    );
  });
});
