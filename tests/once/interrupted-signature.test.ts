/**
 * With `approvalSecret`, a call a crash interrupted (at the root, or inside a subagent) is listed
 * signed wherever it is listed: the stored session's `pendingApprovals()`, its UI messages, the
 * resumed run; a decision carrying the listed signature is taken.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { toUIMessages } from '../../src/messages/ui-messages';
import type { AgentState } from '../../src/state/agent-state';
import type { ApprovalInput } from '../../src/state/approval';
import { ExecutionStatus } from '../../src/state/execution-status';
import { interruptedAgent } from '../support/interrupted-agent';
import { type CrashStoreKind, crashInPay, crashStore } from '../support/interrupted-crash';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.each(['file', 'sqlite'] as const)('an interrupted call with approvalSecret (%s store)', (kind) => {
  async function crashed(kind: CrashStoreKind, where: 'root' | 'nested') {
    const dir = mkdtempSync(join(tmpdir(), 'interrupted-sig-'));
    dirs.push(dir);
    const { path, open } = crashStore(kind, dir);
    await crashInPay(kind, path, 's1', where);
    return open();
  }

  it.each(['root', 'nested'] as const)(
    'is listed signed by the stored session (%s), and a decision with that signature is taken',
    async (where) => {
      const store = await crashed(kind, where);
      try {
        const loaded = await store.load('s1');
        const pending = loaded?.state.pendingApprovals() ?? [];
        expect(pending.map((p) => [p.toolCallId, p.reason])).toEqual([
          [where === 'root' ? 'r1' : 'pay-1', 'interrupted'],
        ]);
        expect(pending[0]?.signature).toEqual(expect.any(String));
        // the UI messages of the stored session carry it too
        const parts = toUIMessages(loaded?.state as AgentState).flatMap((m) => m.parts as { type: string }[]);
        expect(JSON.stringify(parts)).toContain(pending[0]?.signature as string);

        const { agent, effects } = interruptedAgent(store, { nested: where === 'nested' });
        const decisions: ApprovalInput[] = pending.map((p) => ({
          toolCallId: p.toolCallId,
          callPath: p.callPath,
          signature: p.signature,
          type: 'approve',
        }));
        const done = await agent.decide('s1', decisions);
        expect(done.status()).toBe(ExecutionStatus.Completed);
        expect(effects).toEqual([pending[0]?.toolCallId]);
      } finally {
        await store.close();
      }
    },
    60_000,
  );

  it('keeps the signature the resumed run lists (one signature per call)', async () => {
    const store = await crashed(kind, 'nested');
    try {
      const listed = (await store.load('s1'))?.state.pendingApprovals()[0]?.signature;
      const { agent } = interruptedAgent(store, { nested: true });
      const waiting = await agent.resume('s1');
      expect(waiting.pendingApprovals()[0]?.signature).toBe(listed);
      expect(listed).toEqual(expect.any(String));
    } finally {
      await store.close();
    }
  }, 60_000);
});
