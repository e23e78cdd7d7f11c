/**
 * The agents of the crash simulation (#49): seeded random scripts, the world their unsafe calls act
 * on, and the person who decides what waits. A script's root takes one to three tool steps of one to
 * three calls each, among an unsafe `pay` (reconciled in half of the scripts), a `send` that needs
 * approval, an idempotent `lookup` and `delegate`, a subagent with a script of its own (which may
 * delegate once more: depth 2). Every call is named by its path (`<delegate call id>/.../<call id>`),
 * which a child started anew keeps, so an effect repeated under a new idempotency key is counted too.
 */
import { z } from 'zod';
import type { Driver } from '../../../src/drivers/driver';
import { type ScriptEntry, scriptedDriver } from '../../../src/drivers/scripted-driver';
import type { SessionStore } from '../../../src/persistence/session-store';
import type { Agent } from '../../../src/runtime/agent-actor';
import { createAgent } from '../../../src/runtime/create-agent';
import type { AgentState } from '../../../src/state/agent-state';
import type { ApprovalInput } from '../../../src/state/approval';
import { describePending, type PendingApproval } from '../../../src/state/pending-approval';
import { defineTool } from '../../../src/tools/define-tool';

type CallKind = 'pay' | 'lookup' | 'send' | 'delegate';

/** One agent's script: the tool calls of each step (then a final answer). */
export interface AgentScript {
  readonly steps: readonly (readonly { readonly kind: CallKind; readonly id: string }[])[];
}

/** One script: the root's, its subagents' by path, and whether `pay` reconciles. */
export interface Script {
  readonly root: AgentScript;
  readonly children: ReadonlyMap<string, AgentScript>;
  readonly reconciles: boolean;
}

/** The deepest a `delegate` call goes (the root is depth 0). */
const MAX_DELEGATE_DEPTH = 2;

/** A script from the seeded generator; `subagents: false` keeps to root-only scripts. */
export function randomScript(random: () => number, options: { subagents?: boolean } = {}): Script {
  const children = new Map<string, AgentScript>();
  const agentScript = (depth: number, path: string): AgentScript => {
    const delegates = options.subagents !== false && depth < MAX_DELEGATE_DEPTH;
    const steps = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, s) =>
      Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) => {
        const roll = random();
        const kind: CallKind =
          delegates && roll < 0.2 ? 'delegate' : (['pay', 'lookup', 'send'] as const)[Math.floor(roll * 3)]!;
        const id = `c${s + 1}-${i}`;
        if (kind === 'delegate') {
          const childPath = path ? `${path}/${id}` : id;
          children.set(childPath, agentScript(depth + 1, childPath));
        }
        return { kind, id };
      }),
    );
    return { steps };
  };
  const root = agentScript(0, '');
  return { root, children, reconciles: random() < 0.5 };
}

/**
 * The world the runs act on: each unsafe effect by the call's path, the idempotency keys they ran
 * with, and how often the model was asked for each step of each agent.
 */
export class World {
  /** Reconcile answers given. */
  reconciled = 0;
  constructor(
    readonly effects = new Map<string, number>(),
    readonly keys = new Set<string>(),
    readonly asked = new Map<string, number>(),
  ) {}
  effect(call: string, key: string): void {
    this.effects.set(call, (this.effects.get(call) ?? 0) + 1);
    this.keys.add(key);
  }
  /** Counts a model call for step `step` of the agent at `path`; returns how many there were. */
  ask(path: string, step: number): number {
    const key = `${path}#${step}`;
    const n = (this.asked.get(key) ?? 0) + 1;
    this.asked.set(key, n);
    return n;
  }
  /** The world as it is now, for a run that goes on from here. */
  copy(): World {
    const world = new World(new Map(this.effects), new Set(this.keys), new Map(this.asked));
    world.reconciled = this.reconciled;
    return world;
  }
  repeated(): number {
    let n = 0;
    for (const count of this.effects.values()) if (count > 1) n++;
    return n;
  }
}

const TASK = 'job ';
/** The path of the agent a state belongs to: '' for the root, else its task's path. */
function pathOf(state: AgentState): string {
  if (state.parentAgentId() === null) return '';
  const task = state.messages().find((m) => m.role === 'user')?.content ?? '';
  return task.startsWith(TASK) ? task.slice(TASK.length) : task;
}
/** A call's id without the model call it came from (`c1-0~2` is `c1-0`). */
const baseId = (toolCallId: string) => toolCallId.replace(/~\d+$/, '');
/** A call as the world names it: its path and id, without the model call that made it. */
const callName = (path: string, toolCallId: string) =>
  path ? `${path}/${baseId(toolCallId)}` : baseId(toolCallId);

/**
 * The model's answers for one agent's script. A `send` call (it needs approval) gets an id of the
 * model call that made it (`c1-0~2` the second time the step is asked), as a real model's ids are:
 * an answer asked again after a person was shown its calls shows other ids. Other calls keep their
 * ids, so that an effect repeated by a model asked again is counted as repeated.
 */
function answers(script: AgentScript, path: string, world: World): ScriptEntry[] {
  return [
    ...script.steps.map((calls, s) => () => {
      const asked = world.ask(path, s);
      return {
        toolCalls: calls.map(({ kind, id }) => ({
          name: kind,
          id: kind === 'send' ? `${id}~${asked}` : id,
          args: kind === 'delegate' ? { task: `${TASK}${callName(path, id)}` } : { n: 1 },
        })),
      };
    }),
    { text: path ? `done ${path}` : 'finished' },
  ];
}

/** The subagents' model: each plays the script of its path. */
function childDriver(script: Script, world: World): Driver {
  const drivers = new Map(
    [...script.children].map(([path, s]) => [path, scriptedDriver(answers(s, path, world))]),
  );
  return {
    name: 'sim-child',
    infer(state, context) {
      const driver = drivers.get(pathOf(state));
      if (!driver) throw new Error(`no script for subagent '${pathOf(state)}'`);
      return driver.infer(state, context);
    },
  };
}

export const APPROVAL_SECRET = 'sim-secret';

/** A new runtime of `script`'s agent (as a new process builds it) on `store`, acting on `world`. */
export function simAgent(script: Script, store: SessionStore, world: World): Agent {
  const inputSchema = z.object({ n: z.number() });
  const effect =
    (kind: string) =>
    (_input: unknown, { toolCallId, idempotencyKey, state }: EffectOptions) => {
      world.effect(callName(pathOf(state), toolCallId), idempotencyKey);
      return `${kind} done`;
    };
  const pay = defineTool({
    inputSchema,
    effect: 'unsafe',
    execute: effect('pay'),
    ...(script.reconciles && {
      // a payment API looked up by idempotency key
      reconcile: ({ idempotencyKey }: { idempotencyKey: string }) => {
        world.reconciled++;
        return world.keys.has(idempotencyKey)
          ? { status: 'done' as const, result: 'pay done' }
          : { status: 'not-done' as const };
      },
    }),
  });
  const send = defineTool({ inputSchema, needsApproval: true, execute: effect('send') });
  const lookup = defineTool({ inputSchema, execute: () => 'found' });
  const tools = { pay, send, lookup };
  return createAgent({
    driver: scriptedDriver(answers(script.root, '', world)),
    tools,
    store,
    approvalSecret: APPROVAL_SECRET,
    subagents: {
      agents: { delegate: { description: 'Does a job', driver: childDriver(script, world), tools } },
    },
  });
}

interface EffectOptions {
  readonly toolCallId: string;
  readonly idempotencyKey: string;
  readonly state: AgentState;
}

/** A pending call as the world names it (its path, without the model call that made it). */
export const pendingName = (p: PendingApproval) => baseId(describePending(p));

/** A person who knows the world: an interrupted call whose effect happened is completed, the rest approved. */
export function decisionsFor(state: AgentState, world: World): ApprovalInput[] {
  return state.pendingApprovals().map((p) => {
    // a root call's callPath is [] (pendingApprovals() leaves it out): without it, a decision on a
    // root call is ambiguous when a subagent waits on a call with the same id
    const where = { toolCallId: p.toolCallId, callPath: p.callPath ?? [], signature: p.signature };
    if (p.reason === 'interrupted' && world.effects.has(pendingName(p)))
      return { ...where, type: 'complete', result: `${p.toolName} done` } as ApprovalInput;
    return { ...where, type: 'approve' } as ApprovalInput;
  });
}

/** The calls waiting for an approval (not those a crash interrupted): name to id and signature. */
export function approvalsShown(state: AgentState): Map<string, string> {
  return new Map(
    state
      .pendingApprovals()
      .filter((p) => p.reason === 'approval')
      .map((p) => [pendingName(p), `${describePending(p)}#${p.signature ?? ''}`]),
  );
}
