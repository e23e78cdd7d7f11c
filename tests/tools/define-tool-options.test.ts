import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidArgumentError } from '../../src/state/errors';
import { defineTool } from '../../src/tools/define-tool';

describe('defineTool options', () => {
  it.each([
    ['0', 0],
    ['negative', -1],
    ['NaN', Number.NaN],
    ['a string', '100'],
  ])(
    'a timeoutMs that is %s is refused with InvalidArgumentError (it timed calls out at once)',
    (_label, timeoutMs) => {
      const define = () =>
        defineTool({
          description: 'x',
          inputSchema: z.object({}),
          execute: async () => 1,
          timeoutMs: timeoutMs as number,
        });
      expect(define).toThrow(InvalidArgumentError);
      expect(define).toThrow(/timeoutMs/);
    },
  );

  it('a positive timeoutMs is kept', () => {
    expect(defineTool({ inputSchema: z.object({}), execute: () => 1, timeoutMs: 50 }).timeoutMs).toBe(50);
  });
});
