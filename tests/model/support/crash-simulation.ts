/**
 * The deterministic crash simulation (#49): seeded random agent scripts (tests/model/support/
 * sim-script.ts, root calls and subagents), each crashed at every store write it makes, in turn,
 * twice: the write lost, and the write landed (the store stops mid-write). Per script, one run goes
 * to its end without a crash and records, at each of its writes, what a crash there leaves: the
 * session's records as the store holds them, the world's effects as they are at that instant, the
 * last save acknowledged and the approvals a person was shown. Each crash then starts from that
 * (so the run up to the crash is not played again): a new runtime (a new agent, a new store opened
 * on the records) resumes, and a person finishes the run deciding what waits (`complete` for an
 * interrupted call whose effect happened, `approve` for the others). Counts what must never happen:
 * unsafe effects repeated, acknowledged steps lost, approval ids changed, runs left unfinished.
 */
import { InMemorySessionStore, type StoredSession } from '../../../src/persistence/in-memory-session-store';
import type { LoadedSession, SessionStore } from '../../../src/persistence/session-store';
import type { Agent } from '../../../src/runtime/agent-actor';
import { AgentState } from '../../../src/state/agent-state';
import { approvalsShown, decisionsFor, randomScript, type Script, simAgent, World } from './sim-script';

/** The counts of a simulation; all but `crashes` must be 0. */
export interface SimulationCounts {
  crashes: number;
  repeatedUnsafeEffects: number;
  lostAcknowledgedSteps: number;
  changedApprovalIds: number;
  unfinishedRuns: number;
  /**
   * Interrupted calls of a tool with a reconcile that still reached a person (the simulation's
   * reconcile always knows: none should). Not in the counts line; printed before it.
   */
  reconcilableAskedOfAPerson: number;
  /** What the crashes took in: reconcile answers given, crashes of scripts with subagents. */
  reconcileAnswers: number;
  subagentCrashes: number;
}

export const noCounts = (): SimulationCounts => ({
  crashes: 0,
  repeatedUnsafeEffects: 0,
  lostAcknowledgedSteps: 0,
  changedApprovalIds: 0,
  unfinishedRuns: 0,
  reconcilableAskedOfAPerson: 0,
  reconcileAnswers: 0,
  subagentCrashes: 0,
});

export function addCounts(to: SimulationCounts, from: SimulationCounts): SimulationCounts {
  to.crashes += from.crashes;
  to.repeatedUnsafeEffects += from.repeatedUnsafeEffects;
  to.lostAcknowledgedSteps += from.lostAcknowledgedSteps;
  to.changedApprovalIds += from.changedApprovalIds;
  to.unfinishedRuns += from.unfinishedRuns;
  to.reconcilableAskedOfAPerson += from.reconcilableAskedOfAPerson;
  to.reconcileAnswers += from.reconcileAnswers;
  to.subagentCrashes += from.subagentCrashes;
  return to;
}

export const failures = (c: SimulationCounts) =>
  c.repeatedUnsafeEffects +
  c.lostAcknowledgedSteps +
  c.changedApprovalIds +
  c.unfinishedRuns +
  c.reconcilableAskedOfAPerson;

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

const SESSION = 'sim';
/** Runs (execute, resume, decide) a run may take to finish before it counts as unfinished. */
const MAX_ROUNDS = 30;

/** What the person was shown: each waiting call's name to its id and signature. */
type Shown = Map<string, string>;

/** What a crash at one write leaves. */
interface CrashPoint {
  /** The session's records before the write, and after it (null: the save failed). */
  readonly before: StoredSession | undefined;
  after: StoredSession | undefined | null;
  readonly world: World;
  readonly acknowledged: AgentState | null;
  readonly shown: Shown;
}

const copyRecords = (stored: StoredSession | undefined) => (Array.isArray(stored) ? [...stored] : stored);

/** The store of the run that does not crash: records what a crash at each of its writes leaves. */
class RecordingStore implements SessionStore {
  readonly points: CrashPoint[] = [];
  private readonly documents = new Map<string, StoredSession>();
  private readonly disk = new InMemorySessionStore({ documents: this.documents });
  private acknowledged: AgentState | null = null;
  constructor(private readonly run: { readonly world: World; readonly shown: Shown }) {}

  load(id: string): Promise<LoadedSession | null> {
    return this.disk.load(id);
  }
  async save(id: string, state: AgentState, version: number | null): Promise<number> {
    const point: CrashPoint = {
      before: copyRecords(this.documents.get(id)),
      after: null,
      world: this.run.world.copy(),
      acknowledged: this.acknowledged,
      shown: new Map(this.run.shown),
    };
    this.points.push(point);
    // the memory store writes before its first await: the records after the write, as they land
    const saving = this.disk.save(id, state, version);
    point.after = copyRecords(this.documents.get(id));
    try {
      const next = await saving;
      this.acknowledged = state;
      return next;
    } catch (error) {
      point.after = null;
      throw error;
    }
  }
  delete(id: string): Promise<void> {
    return this.disk.delete(id);
  }
  list(): Promise<string[]> {
    return this.disk.list();
  }
  async close(): Promise<void> {}
}

interface Finished {
  changedIds: number;
  unfinished: number;
  lost: number;
  /** Interrupted calls of a tool that reconciles which a person was asked about (its reconcile answers always). */
  askedOfAPerson: number;
  error?: unknown;
}

/**
 * Takes the session to its end with `agent`, from what the store holds: a run that did not end is
 * resumed first (as a restarted process or a worker taking the job over does: reconciles are asked),
 * then a person decides what waits, until it completes. `run.shown` holds the approvals a person has
 * been shown, each of which must keep its id and signature; `acknowledged`, the last state a save
 * acknowledged, whose steps the store must hold.
 */
async function finish(
  agent: Agent,
  store: SessionStore,
  run: { world: World; shown: Shown; reconciles: boolean },
  acknowledged: AgentState | null,
): Promise<Finished> {
  const found: Finished = { changedIds: 0, unfinished: 0, lost: 0, askedOfAPerson: 0 };
  try {
    let state = (await store.load(SESSION))?.state ?? null;
    if (acknowledged && !keeps(state, acknowledged)) found.lost++;
    if (state) shownKept(state, run.shown, found);
    if (state && state.status() !== 'completed') {
      state = await agent.resume(SESSION);
      shownKept(state, run.shown, found);
    }
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (!state)
        state = await agent.execute(AgentState.empty().withUserMessage('go'), { sessionId: SESSION });
      else if (state.pendingApprovals().length > 0) {
        if (run.reconciles)
          for (const p of state.pendingApprovals())
            if (p.reason === 'interrupted' && p.toolName === 'pay') found.askedOfAPerson++;
        state = await agent.decide(SESSION, decisionsFor(state, run.world));
      } else if (state.status() !== 'completed') state = await agent.resume(SESSION);
      if (state.status() === 'completed' && state.pendingApprovals().length === 0) return found;
      shownKept(state, run.shown, found);
      for (const [name, id] of approvalsShown(state)) run.shown.set(name, id);
    }
    found.unfinished++;
    return found;
  } catch (error) {
    found.unfinished++;
    return { ...found, error };
  }
}

/** Counts the approvals a person was shown that `state` shows with another id or signature. */
function shownKept(state: AgentState, shown: Shown, found: Finished): void {
  for (const [name, id] of approvalsShown(state))
    if (shown.has(name) && shown.get(name) !== id) found.changedIds++;
}

/** Whether `reloaded` holds every step `acknowledged` had recorded, with the same ids. */
function keeps(reloaded: AgentState | null, acknowledged: AgentState): boolean {
  if (!reloaded) return false;
  const before = acknowledged.steps().map((s) => s.id());
  const after = reloaded.steps().map((s) => s.id());
  return before.every((id, i) => after[i] === id);
}

/** A crash a count was found in: the script's number, the write, whether it landed, and what. */
export interface Failure {
  readonly script: number;
  readonly write: number;
  readonly landed: boolean;
  readonly counts: SimulationCounts;
  readonly error?: string;
}

/** The crash at one write, landed or not: a new runtime resumes from what was written and finishes. */
async function crashAt(
  script: Script,
  point: CrashPoint,
  landed: boolean,
): Promise<[SimulationCounts, Finished]> {
  const records = copyRecords(landed ? (point.after ?? undefined) : point.before);
  const documents = new Map<string, StoredSession>(records === undefined ? [] : [[SESSION, records]]);
  const store = new InMemorySessionStore({ documents });
  const world = point.world.copy();
  const run = { world, shown: new Map(point.shown), reconciles: script.reconciles };
  const found = await finish(simAgent(script, store, world), store, run, point.acknowledged);
  const counts = {
    ...noCounts(),
    crashes: 1,
    lostAcknowledgedSteps: found.lost,
    reconcilableAskedOfAPerson: found.askedOfAPerson,
    reconcileAnswers: world.reconciled - point.world.reconciled,
    subagentCrashes: script.children.size > 0 ? 1 : 0,
  };
  counts.changedApprovalIds += found.changedIds;
  counts.unfinishedRuns += found.unfinished;
  counts.repeatedUnsafeEffects += world.repeated();
  return [counts, found];
}

/** One script: its run without a crash, then a crash at each of its writes, lost and landed. */
export async function simulateScript(
  script: Script,
  number: number,
  onFailure: (failure: Failure) => void = () => undefined,
): Promise<SimulationCounts> {
  const run = { world: new World(), shown: new Map<string, string>(), reconciles: script.reconciles };
  const store = new RecordingStore(run);
  const clean = await finish(simAgent(script, store, run.world), store, run, null);
  const counts = noCounts();
  counts.repeatedUnsafeEffects += run.world.repeated();
  counts.changedApprovalIds += clean.changedIds;
  counts.unfinishedRuns += clean.unfinished;
  counts.reconcilableAskedOfAPerson += clean.askedOfAPerson;
  if (failures(counts) > 0)
    onFailure({
      script: number,
      write: 0,
      landed: false,
      counts: { ...counts },
      error: describe(clean.error),
    });
  for (const [i, point] of store.points.entries())
    for (const landed of point.after === null ? [false] : [false, true]) {
      const [crash, found] = await crashAt(script, point, landed);
      if (failures(crash) > 0)
        onFailure({ script: number, write: i + 1, landed, counts: crash, error: describe(found.error) });
      addCounts(counts, crash);
    }
  return counts;
}

const describe = (error: unknown) =>
  error === undefined
    ? undefined
    : error instanceof Error
      ? `${error.name}: ${error.message}`
      : String(error);

export interface SimulationOptions {
  readonly seed: number;
  /** Scripts to run; left out, as many as make `crashes` crashes. */
  readonly scripts?: number;
  /** The crashes to reach when `scripts` is left out (default 100,000). */
  readonly crashes?: number;
  /** Run only the scripts `i` with `i % shards === shard` (and `crashes / shards` of the crashes). */
  readonly shard?: number;
  readonly shards?: number;
  /** Root-only scripts (no subagents). */
  readonly rootOnly?: boolean;
  readonly onFailure?: (failure: Failure) => void;
  readonly onProgress?: (counts: SimulationCounts, scripts: number) => void;
}

/**
 * Runs seeded scripts from `seed` (the same scripts whatever the sharding), each crashed at every
 * write it makes in turn, and adds up the counts.
 */
export async function runCrashSimulation(options: SimulationOptions): Promise<SimulationCounts> {
  const random = seeded(options.seed);
  const shards = options.shards ?? 1;
  const shard = options.shard ?? 0;
  const target = Math.ceil((options.crashes ?? 100_000) / shards);
  const counts = noCounts();
  let ran = 0;
  for (let i = 0; options.scripts === undefined ? counts.crashes < target : i < options.scripts; i++) {
    const script = randomScript(random, { subagents: !options.rootOnly });
    if (i % shards !== shard) continue;
    addCounts(counts, await simulateScript(script, i, options.onFailure));
    ran++;
    options.onProgress?.(counts, ran);
  }
  return counts;
}
