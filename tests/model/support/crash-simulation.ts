/**
 * The deterministic crash simulation (#49): seeded random agent scripts, each run once per store
 * write it makes, crashing at that write (the store stops mid-write: the write lands or not, by
 * the seed), the runtime dropped, a new agent resuming from what was written, and the run finished
 * by a person deciding what waits (`complete` for an interrupted call whose effect happened,
 * `approve` for the others). Counts what must never happen: unsafe effects repeated, acknowledged
 * steps lost, approval ids changed, runs left unfinished.
 */
import { z } from 'zod';
import { type ScriptEntry, scriptedDriver } from '../../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../../src/persistence/in-memory-session-store';
import type { LoadedSession, SessionStore } from '../../../src/persistence/session-store';
import type { Agent } from '../../../src/runtime/agent-actor';
import { createAgent } from '../../../src/runtime/create-agent';
import { AgentState } from '../../../src/state/agent-state';
import type { ApprovalInput } from '../../../src/state/approval';
import { defineTool } from '../../../src/tools/define-tool';
import { idempotencyKey } from '../../../src/tools/run-tool';

/** The counts of a simulation; all but `crashes` must be 0. */
export interface SimulationCounts {
  crashes: number;
  repeatedUnsafeEffects: number;
  lostAcknowledgedSteps: number;
  changedApprovalIds: number;
  unfinishedRuns: number;
}

/** The line `npm run matrix:sim` ends with. */
export function countsLine(c: SimulationCounts): string {
  return `${c.crashes} simulated crashes, ${c.repeatedUnsafeEffects} repeated unsafe effects, ${c.lostAcknowledgedSteps} lost acknowledged steps, ${c.changedApprovalIds} changed approval ids, ${c.unfinishedRuns} unfinished runs`;
}

/** A small deterministic generator (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type CallKind = 'pay' | 'lookup' | 'send';
/** One script: its tool steps (the calls of each), and whether `pay` reconciles. */
interface Script {
  readonly steps: readonly (readonly CallKind[])[];
  readonly reconciles: boolean;
}

function randomScript(random: () => number): Script {
  const kinds: CallKind[] = ['pay', 'lookup', 'send'];
  const steps = Array.from({ length: 1 + Math.floor(random() * 3) }, () =>
    Array.from({ length: 1 + Math.floor(random() * 3) }, () => kinds[Math.floor(random() * 3)] as CallKind),
  );
  return { steps, reconciles: random() < 0.5 };
}

class Crash extends Error {}

/** The world the runs act on: the unsafe effects by idempotency key, and which generation is alive. */
class World {
  readonly effects = new Map<string, number>();
  generation = 0;
  /** Throws once the generation that runs this is dead (its process crashed). */
  alive(generation: number): void {
    if (generation !== this.generation) throw new Crash('this runtime crashed');
  }
}

/** The store as the disk holds it: crashes at write `crashAt` (1-based), landing it or not. */
class CrashingStore implements SessionStore {
  writes = 0;
  crashed = false;
  /** The last state a save acknowledged. */
  acknowledged: AgentState | null = null;
  constructor(
    readonly disk: InMemorySessionStore,
    private readonly crashAt: number,
    private readonly lands: boolean,
  ) {}
  load(id: string): Promise<LoadedSession | null> {
    if (this.crashed) return Promise.reject(new Crash('store gone'));
    return this.disk.load(id);
  }
  async save(id: string, state: AgentState, version: number | null): Promise<number> {
    if (this.crashed) throw new Crash('store gone');
    this.writes++;
    if (this.writes === this.crashAt) {
      this.crashed = true;
      if (this.lands) await this.disk.save(id, state, version).catch(() => undefined);
      throw new Crash(`crashed at write ${this.writes}`);
    }
    const next = await this.disk.save(id, state, version);
    this.acknowledged = state;
    return next;
  }
  delete(id: string): Promise<void> {
    return this.disk.delete(id);
  }
  list(): Promise<string[]> {
    return this.disk.list();
  }
  async close(): Promise<void> {}
}

function scriptedAgent(script: Script, store: SessionStore, world: World, generation: number): Agent {
  const effect =
    (kind: string) =>
    (_input: unknown, { idempotencyKey }: { idempotencyKey: string }) => {
      world.alive(generation);
      const key = `${kind}:${idempotencyKey}`;
      world.effects.set(key, (world.effects.get(key) ?? 0) + 1);
      return `${kind} done`;
    };
  const inputSchema = z.object({ n: z.number() });
  const pay = defineTool({
    inputSchema,
    effect: 'unsafe',
    execute: effect('pay'),
    ...(script.reconciles && {
      reconcile: ({ idempotencyKey }: { idempotencyKey: string }) =>
        world.effects.has(`pay:${idempotencyKey}`)
          ? { status: 'done' as const, result: 'pay done' }
          : { status: 'not-done' as const },
    }),
  });
  const send = defineTool({ inputSchema, needsApproval: true, execute: effect('send') });
  const lookup = defineTool({
    inputSchema,
    execute: (_input) => {
      world.alive(generation);
      return 'found';
    },
  });
  const entries: ScriptEntry[] = [
    ...script.steps.map((calls, s) => () => {
      world.alive(generation);
      return { toolCalls: calls.map((name, i) => ({ name, args: { n: i }, id: `c${s + 1}-${i}` })) };
    }),
    () => {
      world.alive(generation);
      return { text: 'finished' };
    },
  ];
  return createAgent({ driver: scriptedDriver(entries), tools: { pay, send, lookup }, store });
}

const SESSION = 'sim';

/** A person who knows the world: an interrupted call whose effect happened is completed, the rest approved. */
function decisionsFor(state: AgentState, world: World): ApprovalInput[] {
  return state.pendingApprovals().map((p) => {
    const key = `${p.toolName}:${keyOf(state, p.toolCallId)}`;
    if (p.reason === 'interrupted' && world.effects.has(key))
      return { toolCallId: p.toolCallId, type: 'complete', result: `${p.toolName} done` };
    return { toolCallId: p.toolCallId, type: 'approve' };
  });
}

/** The idempotency key a root call of the step in flight got (as the tool executor makes it). */
const keyOf = (state: AgentState, toolCallId: string) => idempotencyKey(SESSION, state, toolCallId);

/** Runs `script`, crashing at write `crashAt` (0: no crash), and finishes it; returns what it found. */
async function simulate(script: Script, crashAt: number, lands: boolean) {
  const world = new World();
  const disk = new InMemorySessionStore();
  let store = new CrashingStore(disk, crashAt, lands);
  const found = { lost: 0, changedIds: 0, unfinished: 0, writes: 0 };
  let waiting: { step: number; ids: string[] } | null = null;
  for (let round = 0; round < 30; round++) {
    const agent = scriptedAgent(script, store, world, world.generation);
    const controller = new AbortController();
    let outcome: AgentState | null = null;
    try {
      const loaded = await store.load(SESSION);
      // the calls a person was shown (the last run rested waiting on them) keep their ids: a
      // crash may show no other ids for the same step
      if (loaded && waiting && loaded.state.stepCount() === waiting.step) {
        const shown = waiting.ids;
        if (approvalIds(loaded.state).some((id) => !shown.includes(id))) found.changedIds++;
      }
      if (!loaded)
        outcome = await agent.execute(AgentState.empty().withUserMessage('go'), {
          sessionId: SESSION,
          signal: controller.signal,
        });
      else if (loaded.state.pendingApprovals().length > 0)
        outcome = await agent.decide(SESSION, decisionsFor(loaded.state, world), {
          signal: controller.signal,
        });
      else if (loaded.state.status() === 'completed') {
        outcome = loaded.state;
      } else outcome = await agent.resume(SESSION, { signal: controller.signal });
    } catch (error) {
      if (!(error instanceof Crash) && !store.crashed) throw error;
    }
    if (store.crashed) {
      // the process is gone: its runtime is dropped, a new one starts from the disk
      controller.abort();
      const acknowledged = store.acknowledged;
      found.writes += store.writes;
      world.generation++;
      store = new CrashingStore(disk, 0, false);
      const reloaded = (await disk.load(SESSION))?.state ?? null;
      if (acknowledged && !keeps(reloaded, acknowledged)) found.lost++;
      continue;
    }
    if (!outcome) break;
    if (outcome.status() === 'completed' && outcome.pendingApprovals().length === 0) {
      found.writes += store.writes;
      return { ...found, repeated: [...world.effects.values()].filter((n) => n > 1).length };
    }
    waiting = { step: outcome.stepCount(), ids: approvalIds(outcome) };
  }
  found.unfinished++;
  return { ...found, repeated: [...world.effects.values()].filter((n) => n > 1).length };
}

/** The ids (and signatures) of the calls waiting for an approval (not those a crash interrupted). */
function approvalIds(state: AgentState): string[] {
  return state
    .pendingApprovals()
    .filter((p) => p.reason === 'approval')
    .map((p) => `${p.toolCallId}${p.signature ? `#${p.signature}` : ''}`);
}

/** Whether `reloaded` holds every step `acknowledged` had recorded, with the same ids. */
function keeps(reloaded: AgentState | null, acknowledged: AgentState): boolean {
  if (!reloaded) return false;
  const before = acknowledged.steps().map((s) => s.id());
  const after = reloaded.steps().map((s) => s.id());
  return before.every((id, i) => after[i] === id);
}

/**
 * Runs `scripts` seeded scripts (from `seed`), each crashed at every write it makes in turn (the
 * write landing on odd ones), and adds up the counts.
 */
export async function runCrashSimulation(seed: number, scripts: number): Promise<SimulationCounts> {
  const random = seeded(seed);
  const counts: SimulationCounts = {
    crashes: 0,
    repeatedUnsafeEffects: 0,
    lostAcknowledgedSteps: 0,
    changedApprovalIds: 0,
    unfinishedRuns: 0,
  };
  for (let i = 0; i < scripts; i++) {
    const script = randomScript(random);
    const clean = await simulate(script, 0, false);
    counts.repeatedUnsafeEffects += clean.repeated;
    counts.unfinishedRuns += clean.unfinished;
    for (let k = 1; k <= clean.writes; k++) {
      const run = await simulate(script, k, k % 2 === 1);
      counts.crashes++;
      counts.repeatedUnsafeEffects += run.repeated;
      counts.lostAcknowledgedSteps += run.lost;
      counts.changedApprovalIds += run.changedIds;
      counts.unfinishedRuns += run.unfinished;
    }
  }
  return counts;
}
