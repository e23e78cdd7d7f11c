/**
 * Two `decide`s racing on one waiting session (#44 item 9b): one wins and runs the call; the other
 * is refused with SessionConflictError (the store's own conflict, typed), not a failed run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { SessionConflictError } from '../../src/persistence/errors';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-decide-race-'));
  dirs.push(dir);
  return dir;
};

const stores: Array<[string, () => SessionStore]> = [
  ['memory', () => new InMemorySessionStore()],
  ['file', () => new FileSessionStore(tempDir())],
  ['SQLite', () => new SqliteSessionStore(join(tempDir(), 'sessions.db'))],
];

describe('two racing decisions on one session', () => {
  it.each(stores)(
    '%s store: the loser is rejected with SessionConflictError; the call ran once',
    async (_, make) => {
      const store = make();
      const sent: unknown[] = [];
      const transfer = defineTool({
        description: 'Transfer money',
        inputSchema: z.object({ to: z.string() }),
        needsApproval: true,
        execute: async (input) => {
          sent.push(input);
          return 'sent';
        },
      });
      const agent = createAgent({
        driver: scriptedDriver([
          { toolCalls: [{ id: 't1', name: 'transfer', args: { to: 'bob' } }] },
          { text: 'ok' },
        ]),
        tools: { transfer },
        store,
      });
      await agent.execute(AgentState.empty().withUserMessage('Pay Bob'), { sessionId: 's1' });
      const outcomes = await Promise.allSettled([
        agent.decide('s1', [{ toolCallId: 't1', type: 'approve' }]),
        agent.decide('s1', [{ toolCallId: 't1', type: 'approve' }]),
      ]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o) => o.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      const error = (lost[0] as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(SessionConflictError);
      expect(error).toMatchObject({ code: 'SESSION_CONFLICT', sessionId: 's1' });
      const final = (await store.load('s1'))?.state;
      expect(final?.status()).toBe(ExecutionStatus.Completed);
      expect(final?.errors()).toEqual([]);
      expect(sent).toEqual([{ to: 'bob' }]);
    },
  );
});
