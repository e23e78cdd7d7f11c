/**
 * The at-most-once crash matrix: trials of the payment agent (tests/once/support/once-child.ts) in
 * child processes SIGKILLed at random moments, then counted from their log. The suite runs a small
 * sample (tests/once/crash-matrix.test.ts); `npm run matrix:once` runs the long version.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A small seeded generator (mulberry32): a failing trial replays from its seed. */
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

/** The decision a trial takes on a pending call: approve asked calls; interrupted ones by the seed. */
export function decisionFor(
  pending: { readonly toolCallId: string; readonly reason: string },
  seed: number,
): { type: 'approve' } | { type: 'reject' } | { type: 'complete'; result: string } {
  if (pending.reason !== 'interrupted') return { type: 'approve' };
  let code = 0;
  for (const char of pending.toolCallId) code = (code * 31 + char.charCodeAt(0)) % 1_000_003;
  const pick = Math.floor(seeded(seed * 31 + code * 7)() * 3);
  if (pick === 0) return { type: 'approve' };
  if (pick === 1) return { type: 'reject' };
  return { type: 'complete', result: `completed by a person: ${pending.toolCallId}` };
}

export type StoreKind = 'file' | 'sqlite' | 'redis';
/** The payment agent's tools unsafe, or idempotent; or (`subagent`) unsafe, called inside subagents. */
export type EffectMode = 'unsafe' | 'idempotent' | 'subagent';

export interface Trial {
  readonly kind: StoreKind;
  /** The store's directory, SQLite file or `host:port`. */
  readonly where: string;
  readonly sessionId: string;
  readonly logPath: string;
  readonly seed: number;
  readonly mode: EffectMode;
  /** How many times the trial's children are killed before one may finish. */
  readonly kills: number;
}

export interface TrialResult {
  readonly trial: Trial;
  /** The chart state each kill landed in (the child's last reported state). */
  readonly killedIn: readonly string[];
  readonly counts: Counts;
}

export interface Counts {
  /** Calls whose effect ran more often than once plus the approvals of it as interrupted (must be 0). */
  readonly repeatedUnsafeEffects: number;
  /** The most effects of one unsafe call id without an approve of it as interrupted (must be <= 1). */
  readonly maxUnsafeEffectsWithoutApprove: number;
  /** Loads that found fewer steps or an older version than a save had acknowledged (must be 0). */
  readonly lostAcknowledgedSteps: number;
  /** Model calls for a step whose intent save had been acknowledged (must be 0). */
  readonly repeatedModelCalls: number;
  /** Pending calls shown or listed with more than one signature (must be 0). */
  readonly changedApprovalIds: number;
  /** Idempotent calls that ran more than once per kill plus once (must be 0). */
  readonly idempotentOverRuns: number;
  /** Idempotent calls that got more than one idempotencyKey (must be 0). */
  readonly changedIdempotencyKeys: number;
  /** Interrupted calls decided, by decision. */
  readonly interrupted: { readonly approve: number; readonly reject: number; readonly complete: number };
  readonly finished: boolean;
}

const CHILD = fileURLToPath(new URL('./once-child.ts', import.meta.url));
// a resumed child runs for a few hundred ms after `ready`: kills land all over its run
const MAX_KILL_DELAY_MS = 350;

/**
 * The resting states of the step cycle a kill aims at (half the kills; the others land at a random
 * time): the kill comes at the state's first report, after a random 0-3 ms.
 */
export const AIMED_STATES = [
  'inProgress.step.inference',
  'inProgress.step.intent.saving',
  'inProgress.step.tools',
  'inProgress.step.persist',
  'inProgress.step.awaitingApproval.saving',
  'inProgress.step.awaitingApproval.waiting',
  'inProgress.finalizing.saving',
] as const;

/** Where and when a child is killed: after `afterMs`, or `afterMs` after it reports `aim`. */
interface KillPlan {
  readonly afterMs: number;
  readonly aim: string | null;
}

/** Runs one trial: children killed `kills` times at random moments, then one that runs to the end. */
export async function runTrial(trial: Trial): Promise<TrialResult> {
  const random = seeded(trial.seed);
  const killedIn: string[] = [];
  let killsLeft = trial.kills;
  const plan = (): KillPlan =>
    random() < 0.5
      ? { afterMs: random() * MAX_KILL_DELAY_MS, aim: null }
      : { afterMs: random() * 3, aim: AIMED_STATES[Math.floor(random() * AIMED_STATES.length)] ?? null };
  for (let attempt = 0; attempt < trial.kills + 20; attempt++) {
    const outcome = await runChild(trial, killsLeft > 0 ? plan() : null);
    if (outcome.killedIn !== null) {
      killedIn.push(outcome.killedIn);
      killsLeft--;
      continue;
    }
    if (outcome.done) return { trial, killedIn, counts: countLog(trial) };
    throw new Error(
      `Trial ${JSON.stringify(trial)}: a child exited with ${outcome.code}: ${outcome.stderr.slice(-2000)}`,
    );
  }
  throw new Error(`Trial ${JSON.stringify(trial)} did not finish`);
}

interface ChildOutcome {
  readonly killedIn: string | null;
  readonly done: boolean;
  readonly code: number | null;
  readonly stderr: string;
}

function runChild(trial: Trial, kill: KillPlan | null): Promise<ChildOutcome> {
  const args = [trial.kind, trial.where, trial.sessionId, trial.logPath, String(trial.seed), trial.mode];
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let state = 'starting';
  let done = false;
  let killedIn: string | null = null;
  let stderr = '';
  let buffered = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const killLater = (afterMs: number) => {
    timer = setTimeout(() => {
      if (child.exitCode !== null || done) return;
      killedIn = state;
      child.kill('SIGKILL');
    }, afterMs);
  };
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  child.stdout.on('data', (chunk) => {
    buffered += String(chunk);
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('state ')) {
        state = flatten(JSON.parse(line.slice(6)));
        if (kill?.aim === state && timer === undefined) killLater(kill.afterMs);
      } else if (line === 'done') done = true;
      else if (line === 'ready') {
        state = 'loading';
        if (kill && kill.aim === null) killLater(kill.afterMs);
      }
    }
  });
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      if (timer) clearTimeout(timer);
      resolve({ killedIn, done: done && killedIn === null, code, stderr });
    });
  });
}

/** A state value as a dotted path: `inProgress.step.intent.saving`. */
function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  const [key, inner] = Object.entries(value as Record<string, unknown>)[0] ?? ['?', ''];
  return `${key}.${flatten(inner)}`;
}

const payerCalls = (job: string) => ['p1', 'p2', 'p3', 'a1'].map((id) => `${job}/${id}`);
/** The unsafe and idempotent calls of each mode's run, as the log names them. */
const CALLS: Record<EffectMode, { unsafeIds: string[]; idempotentIds: string[] }> = {
  unsafe: { unsafeIds: ['p1', 'p2', 'p3', 'a1'], idempotentIds: ['s1'] },
  idempotent: { unsafeIds: [], idempotentIds: ['p1', 'p2', 'p3', 'a1', 's1'] },
  subagent: {
    unsafeIds: ['r1', ...payerCalls('j1'), ...payerCalls('j2')],
    idempotentIds: ['j1/s1', 'j2/s1'],
  },
};

/** Counts what the trial's log shows (its lines are written with fsync, in order). */
export function countLog(trial: Trial): Counts {
  const lines = existsSync(trial.logPath) ? readFileSync(trial.logPath, 'utf8').split('\n') : [];
  const effects = new Map<string, number>();
  const keys = new Map<string, Set<string>>();
  const approvedInterrupted = new Map<string, number>();
  const signatures = new Map<string, Set<string>>();
  const intents = new Set<string>();
  const interrupted = { approve: 0, reject: 0, complete: 0 };
  let maxAckSteps = 0;
  let maxAckVersion = 0;
  let lost = 0;
  let repeatedModelCalls = 0;
  let finished = false;
  for (const line of lines) {
    const [what, a = '', b = '', c = ''] = line.split(' ');
    if (what === 'effect') {
      effects.set(a, (effects.get(a) ?? 0) + 1);
      keys.set(a, (keys.get(a) ?? new Set()).add(b));
    } else if (what === 'intent') intents.add(a);
    else if (what === 'model' && intents.has(a)) repeatedModelCalls++;
    else if (what === 'ack') {
      maxAckSteps = Math.max(maxAckSteps, Number(a));
      maxAckVersion = Math.max(maxAckVersion, Number(b));
    } else if (what === 'loaded') {
      if (Number(a) < maxAckSteps || Number(b) < maxAckVersion) lost++;
    } else if (what === 'shown' || what === 'pending') {
      signatures.set(a, (signatures.get(a) ?? new Set()).add(b));
    } else if (what === 'decide' && c === 'interrupted') {
      interrupted[b as keyof typeof interrupted]++;
      if (b === 'approve') approvedInterrupted.set(a, (approvedInterrupted.get(a) ?? 0) + 1);
    } else if (what === 'end') finished = a === 'completed';
  }
  const { unsafeIds, idempotentIds } = CALLS[trial.mode];
  let repeatedUnsafeEffects = 0;
  let maxUnsafeEffectsWithoutApprove = 0;
  for (const id of unsafeIds) {
    const ran = effects.get(id) ?? 0;
    const approved = approvedInterrupted.get(id) ?? 0;
    if (ran > 1 + approved) repeatedUnsafeEffects++;
    if (approved === 0) maxUnsafeEffectsWithoutApprove = Math.max(maxUnsafeEffectsWithoutApprove, ran);
  }
  let idempotentOverRuns = 0;
  let changedIdempotencyKeys = 0;
  for (const id of idempotentIds) {
    if ((effects.get(id) ?? 0) > 1 + trial.kills) idempotentOverRuns++;
    if ((keys.get(id)?.size ?? 0) > 1) changedIdempotencyKeys++;
  }
  return {
    repeatedUnsafeEffects,
    maxUnsafeEffectsWithoutApprove,
    lostAcknowledgedSteps: lost,
    repeatedModelCalls,
    changedApprovalIds: [...signatures.values()].filter((s) => s.size > 1).length,
    idempotentOverRuns,
    changedIdempotencyKeys,
    interrupted,
    finished,
  };
}
