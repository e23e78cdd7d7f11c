import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import type { Agent } from '../../src/runtime/agent-actor';
import { InvalidDefinitionError } from '../../src/runtime/agent-definition';
import { AgentState } from '../../src/state/agent-state';
import type { ApprovalInput } from '../../src/state/approval';
import { paymentAgent, v1, v2, v2Options, v2Unmigrated } from './fixtures/payment-agents';

let dir: string;
const stores: SqliteSessionStore[] = [];

/** A new connection to the SQLite file at `name` (closed after the tests). */
function sqlite(name: string): SqliteSessionStore {
  const store = new SqliteSessionStore(join(dir, name));
  stores.push(store);
  return store;
}

const ROOT_IDS = Array.from({ length: 20 }, (_, i) => `root-${String(i).padStart(2, '0')}`);
const NESTED_IDS = Array.from({ length: 20 }, (_, i) => `nested-${String(i).padStart(2, '0')}`);
const DONE_IDS = Array.from({ length: 10 }, (_, i) => `done-${String(i).padStart(2, '0')}`);
const WAITING = [...ROOT_IDS, ...NESTED_IDS];

/** Parks the sessions of version 1 in the SQLite file `name`: 20 + 20 waiting, 10 completed. */
async function park(name: string, agent: (store: SqliteSessionStore) => Agent = v1): Promise<void> {
  const recording = agent(sqlite(name));
  for (const id of ROOT_IDS)
    await recording.execute(AgentState.empty().withUserMessage('pay bob 40'), { sessionId: id });
  for (const id of NESTED_IDS)
    await recording.execute(AgentState.empty().withUserMessage('nested: pay bob 40'), { sessionId: id });
  for (const id of DONE_IDS)
    await recording.execute(AgentState.empty().withUserMessage('hello'), { sessionId: id });
}

/** Approves every call a session waits for, with the ids, routes and signatures `agent` lists. */
async function approveAll(agent: Agent, id: string): Promise<AgentState> {
  const loaded = await agent.load(id);
  const decisions: ApprovalInput[] = (loaded?.state.pendingApprovals() ?? []).map((p) => ({
    toolCallId: p.toolCallId,
    type: 'approve',
    ...(p.callPath && { callPath: p.callPath }),
    ...(p.signature !== undefined && { signature: p.signature }),
  }));
  expect(decisions).toHaveLength(1);
  return agent.decide(id, decisions);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-machine-upgrade-'));
  await park('v1.db');
}, 120_000);

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('upgrading an agent under waiting sessions', { timeout: 120_000 }, () => {
  it('version 1 saves its version with each session', async () => {
    const store = sqlite('v1.db');
    expect((await store.list()).length).toBe(50);
    for (const id of [...WAITING, ...DONE_IDS])
      expect((await store.load(id))?.state.agentVersion()).toBe('1');
    expect((await store.load('nested-00'))?.state.pendingApprovals()[0]).toMatchObject({
      toolName: 'send_payment',
      path: ['payer'],
      callPath: ['p1'],
    });
  });

  it('version 2 with its migration: no orphan, every waiting session decided once, saved as version 2', async () => {
    await park('decide.db');
    const store = sqlite('decide.db');
    const paid: string[] = [];
    const agent = paymentAgent({ ...v2Options(store), paid: (id) => paid.push(id) });
    const report = await agent.verifyUpgrade(store, { concurrency: 3 });
    expect(report.ok).toBe(true);
    expect(report.sessions).toHaveLength(50);
    for (const session of report.sessions) {
      expect(session.fromVersion).toBe('1');
      // the new system prompt: new behaviour from the first step
      expect(session).toMatchObject({
        verdict: 'changed',
        divergence: {
          stepNumber: 1,
          kind: 'request',
          path: 'request.system',
          replayed: 'You pay people, carefully.',
        },
      });
    }
    for (const id of WAITING) {
      const pending = (await agent.load(id))?.state.pendingApprovals() ?? [];
      expect(pending.map((p) => p.toolName)).toEqual(['pay']);
      const before = (await store.load(id))?.state.pendingApprovals() ?? [];
      // the same ids and signatures as version 1 listed
      expect(pending.map((p) => [p.toolCallId, p.signature])).toEqual(
        before.map((p) => [p.toolCallId, p.signature]),
      );
      const done = await approveAll(agent, id);
      expect(done.status()).toBe('completed');
      expect(done.pendingApprovals()).toEqual([]);
      expect(done.finalResponse()).toBe('done');
    }
    expect(paid).toHaveLength(40);
    const reread = sqlite('decide.db');
    for (const id of WAITING) {
      const saved = (await reread.load(id))?.state as AgentState;
      expect(saved.agentVersion()).toBe('2');
      expect(saved.status()).toBe('completed');
      const calls = saved.steps().flatMap((s) => s.toolExecutions().map((e) => e.toolCall().name));
      expect(calls).toEqual([id.startsWith('nested') ? 'payer' : 'pay']);
    }
    expect((await reread.load('done-00'))?.state.agentVersion()).toBe('1');
  });

  it('version 1 itself: every session ok (replays as recorded)', async () => {
    const report = await v1().verifyUpgrade(sqlite('v1.db'));
    expect(report.ok).toBe(true);
    expect(report.sessions.map((s) => s.verdict)).toEqual(Array(50).fill('ok'));
  });

  it('version 2 without the migration: the 40 waiting sessions are orphaned, naming send_payment', async () => {
    const report = await v2Unmigrated().verifyUpgrade(sqlite('v1.db'));
    expect(report.ok).toBe(false);
    const orphaned = report.sessions.filter((s) => s.verdict === 'orphaned');
    expect(orphaned.map((s) => s.sessionId).sort()).toEqual([...WAITING].sort());
    for (const session of orphaned) expect(session.reason).toContain("'send_payment'");
    expect(orphaned.find((s) => s.sessionId === 'nested-03')?.reason).toContain('inside subagent payer');
    expect(report.sessions.filter((s) => s.verdict !== 'orphaned')).toHaveLength(10);
  });

  it('checks only the sessions named: one that is not there is orphaned', async () => {
    const report = await v2().verifyUpgrade(sqlite('v1.db'), { sessions: ['root-00', 'missing'] });
    expect(report.sessions.map((s) => [s.sessionId, s.verdict])).toEqual([
      ['root-00', expect.stringMatching(/^(ok|changed)$/)],
      ['missing', 'orphaned'],
    ]);
    expect(report.ok).toBe(false);
  });

  it('resume under version 2 waits again on the renamed call, with the same id and signature', async () => {
    await park('resume.db');
    const store = sqlite('resume.db');
    const before = (await store.load('nested-02'))?.state.pendingApprovals() ?? [];
    const waiting = await v2(store).resume('nested-02');
    expect(waiting.agentVersion()).toBe('2');
    expect(waiting.pendingApprovals().map((p) => [p.toolName, p.toolCallId, p.signature])).toEqual(
      before.map((p) => ['pay', p.toolCallId, p.signature]),
    );
  });

  it('a renamed subagent with a waiting child: orphaned without a subagents migration, decided with one', async () => {
    await park('subagent.db');
    const renamed = { version: '2', subagent: 'treasurer' };
    const without = await paymentAgent(renamed).verifyUpgrade(sqlite('subagent.db'), {
      sessions: NESTED_IDS,
    });
    expect(without.ok).toBe(false);
    for (const session of without.sessions) {
      expect(session.verdict).toBe('orphaned');
      expect(session.reason).toContain("a waiting subagent 'payer'");
    }
    const store = sqlite('subagent.db');
    const agent = paymentAgent({
      ...renamed,
      store,
      migrations: [{ from: '1', subagents: { payer: 'treasurer' } }],
    });
    const report = await agent.verifyUpgrade(store, { sessions: NESTED_IDS });
    expect(report.ok).toBe(true);
    expect((await agent.load('nested-00'))?.state.pendingApprovals()[0]).toMatchObject({
      toolName: 'send_payment',
      path: ['treasurer'],
      callPath: ['p1'],
    });
    const done = await approveAll(agent, 'nested-00');
    expect(done.status()).toBe('completed');
    expect(done.steps()[0]?.toolExecutions()[0]?.toolCall().name).toBe('treasurer');
  });

  it('a state migration adds a metadata key, once, to the sessions of the older version', async () => {
    await park('state.db');
    const store = sqlite('state.db');
    let calls = 0;
    const agent = paymentAgent({
      ...v2Options(store),
      migrations: [
        {
          from: '1',
          tools: { send_payment: 'pay' },
          state: (state) => {
            calls++;
            return state.withMetadata('plan', 'gold');
          },
        },
      ],
    });
    expect((await agent.load('root-01'))?.state.metadata().plan).toBe('gold');
    const done = await approveAll(agent, 'root-01');
    expect(done.metadata().plan).toBe('gold');
    const saved = (await sqlite('state.db').load('root-01'))?.state as AgentState;
    expect(saved.metadata().plan).toBe('gold');
    expect(saved.agentVersion()).toBe('2');
    const before = calls;
    // saved by version 2: not migrated again
    await agent.chat('root-01', 'thanks');
    expect(calls).toBe(before);
    // a new session is not migrated
    await agent.execute(AgentState.empty().withUserMessage('hello'), { sessionId: 'new-one' });
    expect((await store.load('new-one'))?.state.metadata().plan).toBeUndefined();
  });

  it('a chat turn on a completed session of version 1 takes it migrated and saves it as version 2', async () => {
    await park('chat.db');
    const store = sqlite('chat.db');
    let calls = 0;
    const agent = paymentAgent({
      ...v2Options(store),
      migrations: [
        {
          from: '1',
          tools: { send_payment: 'pay' },
          state: (state) => {
            calls++;
            return state.withMetadata('plan', 'gold');
          },
        },
      ],
    });
    expect((await store.load('done-03'))?.state.agentVersion()).toBe('1');
    const answered = await agent.chat('done-03', 'hello again');
    expect(answered.metadata().plan).toBe('gold');
    expect(calls).toBe(1);
    const saved = (await sqlite('chat.db').load('done-03'))?.state as AgentState;
    expect(saved.agentVersion()).toBe('2');
    expect(saved.metadata().plan).toBe('gold');
  });

  it('a failing state migration makes the session orphaned, naming the migration', async () => {
    const agent = paymentAgent({
      ...v2Options(),
      migrations: [
        {
          from: '1',
          state: () => {
            throw new Error('no plan for this account');
          },
        },
      ],
    });
    const report = await agent.verifyUpgrade(sqlite('v1.db'), { sessions: ['done-00'] });
    expect(report.sessions[0]).toMatchObject({
      verdict: 'orphaned',
      reason: expect.stringContaining(
        "migration from agent version '1' failed: its state function threw: no plan",
      ),
    });
  });

  it('a chain 1 -> 2 -> 3 migrates sessions of version 1 and of version 2', async () => {
    await park('chain.db');
    const store = sqlite('chain.db');
    // a session parked by version 2 (waiting for its call to `pay`)
    await v2(store).execute(AgentState.empty().withUserMessage('pay bob 40'), { sessionId: 'v2-root' });
    expect((await store.load('v2-root'))?.state.agentVersion()).toBe('2');
    const paid: string[] = [];
    const third = paymentAgent({
      version: '3',
      tool: 'remit',
      store,
      paid: (id) => paid.push(id),
      migrations: [
        { from: '1', tools: { send_payment: 'pay' } },
        { from: '2', tools: { pay: 'remit' } },
      ],
    });
    const report = await third.verifyUpgrade(store, { sessions: ['root-04', 'v2-root', 'nested-04'] });
    expect(report.ok).toBe(true);
    expect(report.sessions.map((s) => s.fromVersion)).toEqual(['1', '2', '1']);
    for (const id of ['root-04', 'v2-root', 'nested-04']) {
      expect((await third.load(id))?.state.pendingApprovals().map((p) => p.toolName)).toEqual(['remit']);
      expect((await approveAll(third, id)).status()).toBe('completed');
    }
    expect(paid).toHaveLength(3);
  });
});

describe('createAgent({ version, migrations })', () => {
  it('refuses migrations without a version, a bad from, a bad rename', () => {
    const base = v2Options();
    expect(() => paymentAgent({ ...base, version: undefined })).toThrow(InvalidDefinitionError);
    expect(() => paymentAgent({ ...base, migrations: [{ from: '2' }] })).toThrow(/migrations\[0\]\.from/);
    expect(() => paymentAgent({ ...base, migrations: [{ from: '1' }, { from: '1' }] })).toThrow(/repeats/);
    expect(() => paymentAgent({ ...base, migrations: [{ from: '1', tools: { a: '' } }] })).toThrow(
      /migrations\[0\]\.tools\.a/,
    );
    expect(() => paymentAgent({ ...base, version: '' })).toThrow(/version/);
  });
});
