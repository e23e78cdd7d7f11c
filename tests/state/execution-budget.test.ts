import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/state/errors';
import { ExecutionBudget } from '../../src/state/execution-budget';

describe('ExecutionBudget', () => {
  it('unlimited() has no limits and isEmpty()', () => {
    const budget = ExecutionBudget.unlimited();
    expect(budget.isEmpty()).toBe(true);
    expect([budget.maxSteps, budget.maxTokens, budget.maxSeconds, budget.maxCost, budget.deadline]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(budget.isExhausted({ stepsUsed: 1e9, tokensUsed: 1e9 })).toBe(false);
  });

  it('the default budget is 20 steps', () => {
    expect(ExecutionBudget.default().maxSteps).toBe(20);
    expect(ExecutionBudget.default().isEmpty()).toBe(false);
  });

  it('is exhausted when any used amount reaches its limit (used >= limit)', () => {
    const budget = new ExecutionBudget({ maxSteps: 3, maxTokens: 100, maxSeconds: 10, maxCost: 0.5 });
    expect(budget.isExhausted({ stepsUsed: 2, tokensUsed: 99, secondsUsed: 9.9, costUsed: 0.49 })).toBe(
      false,
    );
    expect(budget.exhaustedLimit({ stepsUsed: 3 })).toBe('maxSteps');
    expect(budget.exhaustedLimit({ tokensUsed: 100 })).toBe('maxTokens');
    expect(budget.exhaustedLimit({ secondsUsed: 10 })).toBe('maxSeconds');
    expect(budget.exhaustedLimit({ costUsed: 0.5 })).toBe('maxCost');
  });

  it('is exhausted at its deadline', () => {
    const budget = new ExecutionBudget({ deadline: '2026-01-01T00:00:00Z' });
    expect(budget.isExhausted({}, Date.parse('2025-12-31T23:59:59Z'))).toBe(false);
    expect(budget.exhaustedLimit({}, Date.parse('2026-01-01T00:00:00Z'))).toBe('deadline');
  });

  it('remaining() subtracts what was used, floored at zero (seed 002)', () => {
    const budget = new ExecutionBudget({ maxSteps: 20, maxTokens: 10_000, maxSeconds: 60 });
    const left = budget.remaining({ stepsUsed: 5, tokensUsed: 3000 });
    expect([left.maxSteps, left.maxTokens, left.maxSeconds, left.maxCost]).toEqual([15, 7000, 60, null]);
    expect(budget.remaining({ stepsUsed: 25 }).maxSteps).toBe(0);
    expect(budget.maxSteps).toBe(20);
  });

  it('cappedBy() takes the minimum of each limit and the earlier deadline (seed 002)', () => {
    const budget = new ExecutionBudget({ maxSteps: 20, maxTokens: 10_000, deadline: '2026-06-01T00:00:00Z' });
    const capped = budget.cappedBy(
      new ExecutionBudget({ maxSteps: 10, maxCost: 1, deadline: '2026-05-01T00:00:00Z' }),
    );
    expect(capped.toJSON()).toEqual({
      maxSteps: 10,
      maxTokens: 10_000,
      maxSeconds: null,
      maxCost: 1,
      deadline: '2026-05-01T00:00:00.000Z',
    });
  });

  it('round-trips through JSON', () => {
    const budget = new ExecutionBudget({
      maxSteps: 3,
      maxCost: 0.25,
      deadline: new Date('2026-05-01T00:00:00Z'),
    });
    expect(ExecutionBudget.fromJSON(JSON.parse(JSON.stringify(budget)))).toEqual(budget);
  });

  it('refuses negative, fractional step and non-numeric limits with a typed error naming the field', () => {
    expect(() => new ExecutionBudget({ maxSteps: -1 })).toThrow(InvalidArgumentError);
    expect(() => new ExecutionBudget({ maxSteps: 1.5 })).toThrow(/ExecutionBudget\.maxSteps/);
    expect(() => new ExecutionBudget({ maxCost: Number.NaN })).toThrow(/ExecutionBudget\.maxCost/);
    expect(() => new ExecutionBudget({ deadline: 'soon' })).toThrow(/ExecutionBudget\.deadline/);
    expect(() => ExecutionBudget.fromJSON({ maxTokens: '10' })).toThrow(/ExecutionBudget\.maxTokens/);
  });

  it.each([
    ['NaN', Number.NaN, 'got NaN'],
    ['Infinity', Number.POSITIVE_INFINITY, 'got Infinity'],
    ['a BigInt', 10n, 'got 10n'],
    ['a symbol', Symbol('s'), 'got Symbol(s)'],
    ['a string', '10', 'got "10"'],
  ])('a limit that is %s is refused with InvalidArgumentError showing the value', (_label, value, shown) => {
    for (const field of ['maxSteps', 'maxTokens', 'maxSeconds', 'maxCost']) {
      const make = () => new ExecutionBudget({ [field]: value } as never);
      expect(make).toThrow(InvalidArgumentError);
      expect(make).toThrow(shown);
    }
  });

  it.each([
    ['a BigInt', 10n, 'got 10n'],
    ['a symbol', Symbol('s'), 'got Symbol(s)'],
    ['NaN', Number.NaN, 'got NaN'],
  ])(
    'a deadline that is %s is refused with InvalidArgumentError showing the value',
    (_label, value, shown) => {
      const make = () => new ExecutionBudget({ deadline: value } as never);
      expect(make).toThrow(InvalidArgumentError);
      expect(make).toThrow(shown);
    },
  );
});
