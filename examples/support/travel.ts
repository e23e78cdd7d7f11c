/**
 * The tools the examples' travel agents use: `search` over a small offline index of travel facts,
 * and `calculator` for arithmetic. Both work the same with the scripted model and a real one.
 */
import { z } from 'zod';
import { defineTool } from '../../src/index';

const FACTS: ReadonlyArray<{ city: string; topic: RegExp; fact: string }> = [
  {
    city: 'lisbon',
    topic: /weather|temperature|climate|rain/,
    fact: 'Lisbon in May: highs of 22 °C, lows of 14 °C, about 5 rainy days.',
  },
  {
    city: 'lisbon',
    topic: /hotel|accommodation|stay|night/,
    fact: 'Mid-range hotels in central Lisbon cost about €95 a night in May.',
  },
  {
    city: 'lisbon',
    topic: /flight|fly|plane|airfare/,
    fact: 'Return flights Paris–Lisbon in May start at €120.',
  },
  {
    city: 'porto',
    topic: /weather|temperature|climate|rain/,
    fact: 'Porto in May: highs of 19 °C, lows of 12 °C, about 9 rainy days.',
  },
  {
    city: 'porto',
    topic: /hotel|accommodation|stay|night/,
    fact: 'Mid-range hotels in Porto cost about €80 a night in May.',
  },
  {
    city: 'porto',
    topic: /flight|fly|plane|airfare/,
    fact: 'Return flights Paris–Porto in May start at €110.',
  },
];

export const search = defineTool({
  description: 'Search travel facts (weather, hotel prices, flights) for Lisbon and Porto.',
  inputSchema: z.object({ query: z.string().min(1).describe('Keywords, e.g. "Lisbon weather May"') }),
  execute: async ({ query }) => {
    const q = query.toLowerCase();
    const found = FACTS.filter((f) => q.includes(f.city) && f.topic.test(q)).map((f) => f.fact);
    return found.length > 0 ? found.join(' ') : `No results for "${query}".`;
  },
});

/** An expression the calculator cannot evaluate; the model sees the message and can retry. */
export class CalculatorError extends Error {
  override readonly name = 'CalculatorError';
}

export const calculator = defineTool({
  description:
    'Evaluate an arithmetic expression with numbers, + - * / and parentheses, e.g. "3 * 95 + 120".',
  inputSchema: z.object({ expression: z.string().min(1) }),
  execute: async ({ expression }) => evaluate(expression),
});

/** A small recursive-descent evaluator: no eval(), so a model cannot run code through it. */
export function evaluate(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d+)?|\S/g) ?? [];
  let at = 0;
  const fail = (what: string): never => {
    throw new CalculatorError(`${what} in "${expression}": use numbers, + - * / and parentheses`);
  };
  const primary = (): number => {
    const token = tokens[at++];
    if (token === '(') {
      const value = sum();
      if (tokens[at++] !== ')') fail('Missing ")"');
      return value;
    }
    if (token === '-') return -primary();
    if (token !== undefined && /^\d/.test(token)) return Number(token);
    return fail(token === undefined ? 'Unexpected end' : `Unexpected "${token}"`);
  };
  const product = (): number => {
    let value = primary();
    while (tokens[at] === '*' || tokens[at] === '/')
      value = tokens[at++] === '*' ? value * primary() : value / primary();
    return value;
  };
  const sum = (): number => {
    let value = product();
    while (tokens[at] === '+' || tokens[at] === '-')
      value = tokens[at++] === '+' ? value + product() : value - product();
    return value;
  };
  const value = sum();
  if (at < tokens.length) fail(`Unexpected "${tokens[at]}"`);
  if (!Number.isFinite(value)) fail('The result is not a finite number');
  return value;
}
