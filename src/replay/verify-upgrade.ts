/**
 * The check before a deploy (`agent.verifyUpgrade(store)`): can this version of the agent go on
 * with each saved session? Each one is loaded, migrated as a run would migrate it, checked for
 * calls it cannot carry on (a pending or interrupted call to a tool it lacks, a waiting subagent it
 * has not), and replayed with its recorded tools to find where this version first acts otherwise.
 */

import type { Agent } from '../runtime/agent-actor';
import type { AgentDefinition, SubagentDefinition } from '../runtime/agent-definition';
import { upgradeState } from '../runtime/agent-migrations';
import type { AgentState } from '../state/agent-state';
import { InvalidArgumentError } from '../state/errors';
import { isTerminalStatus } from '../state/execution-status';
import type {
  SessionUpgradeReport,
  UpgradeReport,
  UpgradeSource,
  VerifyUpgradeOptions,
} from './upgrade-report';

export type {
  SessionUpgradeReport,
  UpgradeReport,
  UpgradeSource,
  UpgradeVerdict,
  VerifyUpgradeOptions,
} from './upgrade-report';

export async function verifyUpgrade(
  agent: Agent,
  store: UpgradeSource,
  options: VerifyUpgradeOptions = {},
): Promise<UpgradeReport> {
  if (typeof store?.load !== 'function' || typeof store?.list !== 'function')
    throw new InvalidArgumentError('verifyUpgrade(store)', 'expected a SessionStore (load and list)');
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new InvalidArgumentError(
      'verifyUpgrade options.concurrency',
      `got ${concurrency}; give a whole number >= 1`,
    );
  const ids = options.sessions ?? (await store.list());
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string'))
    throw new InvalidArgumentError('verifyUpgrade options.sessions', 'expected an array of session ids');
  const reports: SessionUpgradeReport[] = new Array(ids.length);
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const at = next++;
      reports[at] = await verifySession(agent, store, ids[at] as string);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, worker));
  return { ok: reports.every((r) => r.verdict !== 'orphaned'), sessions: reports };
}

async function verifySession(
  agent: Agent,
  store: UpgradeSource,
  sessionId: string,
): Promise<SessionUpgradeReport> {
  let saved: AgentState;
  try {
    const loaded = await store.load(sessionId);
    if (!loaded) return { sessionId, fromVersion: null, verdict: 'orphaned', reason: 'no such session' };
    saved = loaded.state;
  } catch (error) {
    return {
      sessionId,
      fromVersion: null,
      verdict: 'orphaned',
      reason: `it cannot be loaded: ${message(error)}`,
    };
  }
  const fromVersion = saved.agentVersion();
  let state: AgentState;
  try {
    state = upgradeState(agent.definition, saved);
  } catch (error) {
    return { sessionId, fromVersion, verdict: 'orphaned', reason: message(error) };
  }
  const orphans = orphanedCalls(agent, state);
  if (orphans.length > 0) return { sessionId, fromVersion, verdict: 'orphaned', reason: orphans.join('; ') };
  if (!state.execution()) return { sessionId, fromVersion, verdict: 'ok', reason: 'no execution to replay' };
  try {
    const { divergence } = await agent.replay(state);
    return divergence
      ? { sessionId, fromVersion, verdict: 'changed', divergence }
      : { sessionId, fromVersion, verdict: 'ok' };
  } catch (error) {
    return { sessionId, fromVersion, verdict: 'unreplayable', reason: message(error) };
  }
}

/**
 * The calls of a session this agent cannot carry on, described: at each level of the tree (the
 * root, then each waiting subagent), the step in flight's calls without a result must name a tool
 * or subagent of the agent there, and a waiting child must be the run of a subagent it has.
 */
function orphanedCalls(agent: Agent, state: AgentState): string[] {
  const found: string[] = [];
  const visit = (at: AgentState, path: readonly string[], level: Level | null) => {
    if (isTerminalStatus(at.status())) return;
    const step = at.currentStep();
    if (!step || !level) return;
    const finished = new Set(step.toolExecutions().map((e) => e.toolCallId()));
    const children = at.approval()?.children ?? {};
    const where = path.length ? ` inside subagent ${path.join(' > ')}` : '';
    for (const call of step.requestedToolCalls()) {
      if (finished.has(call.id)) continue;
      const child = Object.hasOwn(children, call.id) ? children[call.id] : undefined;
      if (child) {
        const next = level.child(call.name);
        if (!next)
          found.push(`a waiting subagent '${call.name}' (call ${call.id})${where}, which this agent has not`);
        else visit(child, [...path, call.name], next);
      } else if (!level.has(call.name, agent.toolsAt(path)))
        found.push(`a pending call ${call.id} to '${call.name}'${where}, a tool this agent lacks`);
    }
  };
  visit(state, [], Level.root(agent.definition));
  return found;
}

/** One agent of the tree as a session's calls see it: its subagents and MCP servers by name. */
class Level {
  private constructor(
    private readonly subagents: Readonly<Record<string, SubagentDefinition>>,
    private readonly mcpServers: readonly string[],
  ) {}

  static root(definition: AgentDefinition): Level {
    return new Level(definition.subagents?.agents ?? {}, Object.keys(definition.mcpServers ?? {}));
  }

  /** The subagent called `name` (its subagents, and tools, as subagentCalls builds them), or null. */
  child(name: string): Level | null {
    if (!Object.hasOwn(this.subagents, name)) return null;
    const definition = this.subagents[name] as SubagentDefinition;
    const ownsTools = definition.tools !== undefined || definition.mcpServers !== undefined;
    return new Level(
      definition.subagents?.agents ?? this.subagents,
      ownsTools ? Object.keys(definition.mcpServers ?? {}) : this.mcpServers,
    );
  }

  /** Whether a call of `name` runs here: a tool, a subagent, or a tool of an MCP server (`<server>_<tool>`). */
  has(name: string, tools: Readonly<Record<string, unknown>>): boolean {
    return (
      Object.hasOwn(tools, name) ||
      Object.hasOwn(this.subagents, name) ||
      this.mcpServers.some((server) => name.startsWith(`${server}_`))
    );
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
