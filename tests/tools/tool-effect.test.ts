import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidArgumentError } from '../../src/state/errors';
import { defineTool, type ToolEffect, toolEffect } from '../../src/tools/define-tool';

const inputSchema = z.object({ to: z.string() });
const execute = async ({ to }: { to: string }) => `sent to ${to}`;

describe("a tool's effect (read | idempotent | unsafe)", () => {
  it("is 'idempotent' by default, readable on the defined tool", () => {
    const send = defineTool({ inputSchema, execute });
    expect(send.effect).toBe('idempotent');
    expect(toolEffect(send)).toBe('idempotent');
  });

  it("is 'unsafe' by default for a tool that needs approval (true or a function), not for needsApproval: false", () => {
    expect(defineTool({ inputSchema, execute, needsApproval: true }).effect).toBe('unsafe');
    expect(defineTool({ inputSchema, execute, needsApproval: async () => false }).effect).toBe('unsafe');
    expect(defineTool({ inputSchema, execute, needsApproval: false }).effect).toBe('idempotent');
  });

  it('is the declared one when given, approval or not', () => {
    const effects: ToolEffect[] = ['read', 'idempotent', 'unsafe'];
    for (const effect of effects) {
      expect(defineTool({ inputSchema, execute, effect }).effect).toBe(effect);
      expect(defineTool({ inputSchema, execute, effect, needsApproval: true }).effect).toBe(effect);
    }
  });

  it('refuses an effect that is not one, naming the field', () => {
    expect(() => defineTool({ inputSchema, execute, effect: 'safe' as ToolEffect })).toThrowError(
      InvalidArgumentError,
    );
    expect(() => defineTool({ inputSchema, execute, effect: 'safe' as ToolEffect })).toThrow(
      /Invalid effect: "safe" is not 'read', 'idempotent' or 'unsafe'/,
    );
  });

  it('gives an AI SDK tool() the same defaults (it declares none)', () => {
    expect(toolEffect(tool({ inputSchema, execute }))).toBe('idempotent');
    expect(toolEffect(tool({ inputSchema, execute, needsApproval: true }))).toBe('unsafe');
  });
});
