/**
 * A session that went through crash recovery replays equal: the call the crash interrupted waits
 * in the replay as it waited after the load, and the person's decision on it (approve, reject,
 * complete) is taken again. Real crashes: a child process SIGKILLed inside the unsafe call, over a
 * file store and a SQLite store.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalDecision, ApprovalInput } from '../../src/state/approval';
import { ExecutionStatus } from '../../src/state/execution-status';
import { interruptedAgent } from '../support/interrupted-agent';
import { type CrashStoreKind, crashInPay, crashStore } from '../support/interrupted-crash';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Decision = 'approve' | 'reject' | 'complete';

const decision = (type: Decision): ApprovalDecision =>
  type === 'reject'
    ? { type, reason: 'paid by hand' }
    : type === 'complete'
      ? { type, result: { receipt: 'r-7' } }
      : { type };

/** A session crashed inside `pay`, decided by a person, run to its end; its stored state (and the store's path). */
async function recovered(kind: CrashStoreKind, where: 'root' | 'nested' | 'asked', type: Decision) {
  const dir = mkdtempSync(join(tmpdir(), 'replay-recovered-'));
  dirs.push(dir);
  return recoveredIn(dir, kind, where, type);
}

async function recoveredIn(
  dir: string,
  kind: CrashStoreKind,
  where: 'root' | 'nested' | 'asked',
  type: Decision,
) {
  const { path, open } = crashStore(kind, dir);
  await crashInPay(kind, path, 's1', where);
  const store = open();
  try {
    const { agent } = interruptedAgent(store, { nested: where === 'nested', asked: where === 'asked' });
    const pending = (await store.load('s1'))?.state.pendingApprovals() ?? [];
    expect(pending.map((p) => p.reason)).toEqual(['interrupted']);
    const done = await agent.decide(
      's1',
      pending.map(
        (p) =>
          ({
            ...decision(type),
            toolCallId: p.toolCallId,
            callPath: p.callPath,
            signature: p.signature,
          }) as ApprovalInput,
      ),
    );
    expect(done.status()).toBe(ExecutionStatus.Completed);
    const stored = await store.load('s1');
    if (!stored) throw new Error('the session was not saved');
    return stored.state;
  } finally {
    await store.close();
  }
}

const resolutions = { approve: 'approved', reject: 'rejected', complete: 'completed' } as const;

describe('replaying a session that went through crash recovery', () => {
  it.each([
    ['file', 'root', 'approve'],
    ['file', 'root', 'reject'],
    ['file', 'root', 'complete'],
    ['sqlite', 'nested', 'approve'],
    ['sqlite', 'nested', 'reject'],
    ['sqlite', 'nested', 'complete'],
    ['sqlite', 'root', 'reject'],
    ['file', 'nested', 'complete'],
    // asked for approval, approved, then interrupted: the replay asks once, as the recovery did
    ['sqlite', 'asked', 'approve'],
    ['file', 'asked', 'reject'],
  ] as const)(
    '%s store, call at the %s, decided %s: no divergence, the resolution replayed',
    async (kind, where, type) => {
      const recorded = await recovered(kind, where, type);
      const { agent, effects } = interruptedAgent(undefined, {
        nested: where === 'nested',
        asked: where === 'asked',
      });
      const { state, divergence } = await agent.replay(recorded);
      expect(divergence).toBeNull();
      // bit-exact, ids and timestamps included
      expect(JSON.stringify(state)).toBe(JSON.stringify(recorded));
      expect(effects).toEqual([]);
      const interruptedCall = (s: typeof state) => {
        const step = s.steps()[0];
        const own = step?.toolExecutions()[0];
        return where !== 'nested' ? own : own?.childState()?.steps()[0]?.toolExecutions()[0];
      };
      expect(interruptedCall(recorded)?.resolution()).toBe(resolutions[type]);
      expect(interruptedCall(state)?.resolution()).toBe(resolutions[type]);
      expect(state.finalResponse()).toBe('root done');
    },
    60_000,
  );
});

describe('replaying a session still waiting on its interrupted call', () => {
  it.each(['root', 'nested'] as const)(
    'the call at the %s waits in the replay as it waits in the recording: no divergence',
    async (where) => {
      const dir = mkdtempSync(join(tmpdir(), 'replay-waiting-'));
      dirs.push(dir);
      const { path, open } = crashStore('sqlite', dir);
      await crashInPay('sqlite', path, 's1', where);
      const store = open();
      const recorded = (await store.load('s1'))?.state;
      await store.close();
      if (!recorded) throw new Error('the session was not saved');
      const { agent, effects } = interruptedAgent(undefined, { nested: where === 'nested' });
      const { state, divergence } = await agent.replay(recorded);
      expect(divergence).toBeNull();
      expect(effects).toEqual([]);
      expect(state.pendingApprovals().map((p) => [p.toolCallId, p.reason])).toEqual(
        recorded.pendingApprovals().map((p) => [p.toolCallId, p.reason]),
      );
    },
    60_000,
  );
});

/** `agent-machine replay` from its sources (under tsx), as a CI step runs it. */
function cli(...args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((done) => {
    execFile(
      'npx',
      ['tsx', 'src/cli.ts', ...args],
      { cwd: resolve(import.meta.dirname, '../..') },
      (error, stdout) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout }),
    );
  });
}

describe('agent-machine replay of crash-recovered sessions', () => {
  it.each([
    ['sqlite', 'nested', 'complete'],
    ['file', 'root', 'reject'],
  ] as const)(
    '%s store, call at the %s, decided %s: ok, exit 0',
    async (kind, where, type) => {
      const dir = mkdtempSync(join(tmpdir(), 'replay-recovered-cli-'));
      dirs.push(dir);
      await recoveredIn(dir, kind, where, type);
      const { code, stdout } = await cli(
        'replay',
        '--agent',
        `tests/replay/fixtures/interrupted-agents.ts#${where}`,
        crashStore(kind, dir).path,
      );
      expect(stdout).toContain('ok       s1 (2 steps, completed)');
      expect(stdout).toContain('1 session replayed: 1 equal, 0 diverged');
      expect(code).toBe(0);
    },
    120_000,
  );
});
