/**
 * At most once inside subagents. A subagent has no session of its own: before its unsafe calls
 * start, it hands the intent of its step (`IntentSave`) to its caller, which saves it inside its
 * own step in flight (the child's state in its approval, by the subagent call's id, beside its own
 * unsafe calls) and hands that on, up to the root, whose session saves the whole tree in one save.
 * A load then finds each child where its intent left it: the subagent call resumes that child, whose
 * unsafe calls that had started wait for a person as interrupted, listed with their `callPath`.
 */
import type { AgentRef, IntentSave } from '../../machines/agentLoop';
import type { SessionStore } from '../persistence/session-store';
import type { AgentState } from '../state/agent-state';
import { AgentMachineError } from '../state/errors';

/**
 * A subagent's intent that its caller can no longer save: the caller's step has ended (it was
 * stopped, or the subagent call timed out) while the child was still running. The child's unsafe
 * calls do not start (the child's step fails), and nothing is saved over the caller's newer state.
 */
export class SubagentIntentError extends AgentMachineError {
  static override get name(): string {
    return 'SubagentIntentError';
  }

  constructor(readonly toolCallId: string) {
    super(
      'SUBAGENT_INTENT_STALE',
      `The intent of subagent call '${toolCallId}' was not saved: its caller's step had already ended (a stop, or the call's timeout), so its unsafe calls did not start. Give the subagent call a longer timeout (toolTimeoutMs) if it was cut short.`,
    );
  }
}

/** The children's intents an agent's step in flight holds, while its tools run. */
interface StepIntents {
  /** The state the tools run with: a new one (a new step, or decisions taken) starts anew. */
  readonly state: AgentState;
  readonly children: Record<string, AgentState>;
}

export class NestedIntents {
  private readonly byAgent = new WeakMap<AgentRef, StepIntents>();
  /** The root's saves in flight, by session id: its next save (a checkpoint included) waits for them. */
  private readonly inFlight = new Map<string, Promise<number>>();

  constructor(
    private readonly store: SessionStore | undefined,
    /** The agent's own unsafe calls of `state`'s step that start with it (named in its intent). */
    private readonly ownUnsafe: (state: AgentState) => Promise<readonly string[]>,
    /** The root's state as it is saved in session `sessionId` (its calls signed with an `approvalSecret`). */
    private readonly sealed: (state: AgentState, sessionId: string) => AgentState = (state) => state,
  ) {}

  /** The save a child spawned by `agent` for the subagent call `toolCallId` is given. */
  saverFor(agent: AgentRef, toolCallId: string): IntentSave {
    return (child) => this.save(agent, toolCallId, child);
  }

  /**
   * The version to save over in session `id`: `version` (the run's), or that of a child's intent
   * saved meanwhile (a save of the run waits for those in flight).
   */
  versionFor(id: string, version: number | null): number | null | Promise<number | null> {
    const saving = this.inFlight.get(id);
    // nothing in flight (every save but a subagent's): no promise turn before the save
    if (!saving) return version;
    return saving.catch(() => version);
  }

  private async save(agent: AgentRef, toolCallId: string, child: AgentState): Promise<void> {
    // the caller's step as it is now (the child saves while it runs, in the caller's step in flight)
    const { context } = agent.getSnapshot();
    let intents = this.byAgent.get(agent);
    if (intents?.state !== context.state) {
      intents = { state: context.state, children: {} };
      this.byAgent.set(agent, intents);
    }
    intents.children[toolCallId] = child;
    if (context.session && this.store)
      return this.saveToSession(agent, context.session.id, intents, toolCallId);
    // a subagent hands its own intent, with its children's, to its caller; a run without a store keeps none
    if (!context.intentSave) return;
    const intent = await this.intentOf(intents);
    checkCurrent(agent, intents, toolCallId);
    await context.intentSave(intent);
  }

  /** Saves the root's intent; saves of one session follow each other, each over the version the last made. */
  private saveToSession(
    agent: AgentRef,
    id: string,
    intents: StepIntents,
    toolCallId: string,
  ): Promise<void> {
    const store = this.store as SessionStore;
    const previous = this.inFlight.get(id);
    const saving = (async () => {
      await previous?.catch(() => undefined);
      // composed now, so that it holds every child's intent taken so far
      const state = this.sealed(await this.intentOf(intents), id);
      checkCurrent(agent, intents, toolCallId);
      const version = await store.save(id, state, agent.getSnapshot().context.session?.version ?? null);
      agent.send({ type: 'session.saved', version });
      return version;
    })();
    this.inFlight.set(id, saving);
    const forget = () => {
      if (this.inFlight.get(id) === saving) this.inFlight.delete(id);
    };
    return saving.then(forget, (error: unknown) => {
      forget();
      throw error;
    });
  }

  private async intentOf(intents: StepIntents): Promise<AgentState> {
    return intents.state.withSubagentIntents(intents.children, await this.ownUnsafe(intents.state));
  }
}

/** Refuses to save a child's intent once its caller's step has moved on (it would overwrite newer saves). */
function checkCurrent(agent: AgentRef, intents: StepIntents, toolCallId: string): void {
  const snapshot = agent.getSnapshot();
  if (snapshot.status !== 'active' || snapshot.context.state !== intents.state)
    throw new SubagentIntentError(toolCallId);
}
