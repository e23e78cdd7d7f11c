/**
 * Agent versions and migrations: a session saved by an older version of an agent is brought to
 * this one's when the agent loads it for a run (`createAgent({ version, migrations })`).
 */
import { AgentState } from '../state/agent-state';
import { AgentMachineError, kindOf } from '../state/errors';
import { renameToolsInDocument } from '../state/tool-renames';

/**
 * What changed from the agent version `from` to the next one: tools renamed (old name to new),
 * subagents renamed, and a change of the state of your own (run last, on the root's state).
 *
 * @example
 * createAgent({ version: '2', migrations: [{ from: '1', tools: { send_payment: 'pay' } }], ... });
 */
export interface AgentMigration {
  readonly from: string;
  /** Tool names, old to new: every call of the tool in the tree of agents is renamed. */
  readonly tools?: Readonly<Record<string, string>>;
  /** Subagent names, old to new (a subagent is a tool of its caller's: its calls are renamed). */
  readonly subagents?: Readonly<Record<string, string>>;
  /** Any other change: given the renamed state, returns the state of the new version. */
  readonly state?: (state: AgentState) => AgentState;
}

/** A migration failed on a saved state (its `state` function threw or returned no AgentState). */
export class AgentMigrationError extends AgentMachineError {
  static override get name(): string {
    return 'AgentMigrationError';
  }

  constructor(
    /** The version the failed migration starts from. */
    readonly from: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super('AGENT_MIGRATION_FAILED', `The migration from agent version '${from}' failed: ${detail}`, options);
  }
}

/** What a definition says of its version (read from the root definition only). */
export interface Versioned {
  readonly version?: string;
  readonly migrations?: readonly AgentMigration[];
}

/**
 * The migrations a state saved by `saved` needs, in order: those from the migration that starts at
 * `saved` on. A state with no version that has run (saved before versions) needs them all; one
 * that never ran is new. A version no migration starts from (one that changed nothing, or a newer
 * one after a rollback) needs none.
 */
function migrationsFor(definition: Versioned, state: AgentState): readonly AgentMigration[] {
  const migrations = definition.migrations ?? [];
  const saved = state.agentVersion();
  if (saved === (definition.version ?? null) || migrations.length === 0) return [];
  if (saved === null) return state.executionCount() > 0 ? migrations : [];
  const at = migrations.findIndex((m) => m.from === saved);
  return at === -1 ? [] : migrations.slice(at);
}

/**
 * `state` as this version of the agent runs it: migrated from the version that saved it (the whole
 * tree: waiting subagents and their pending calls included) and stamped with this version. The
 * state itself when nothing changes. Raises AgentMigrationError when a migration fails.
 */
export function upgradeState(definition: Versioned, state: AgentState): AgentState {
  const version = definition.version ?? null;
  if (version === null || state.agentVersion() === version) return state;
  let upgraded = state;
  for (const migration of migrationsFor(definition, state)) upgraded = migrate(upgraded, migration);
  return upgraded.withAgentVersion(version);
}

function migrate(state: AgentState, migration: AgentMigration): AgentState {
  const renames = new Map([
    ...Object.entries(migration.tools ?? {}),
    ...Object.entries(migration.subagents ?? {}),
  ]);
  let migrated = state;
  if (renames.size > 0) {
    // a copy of the document of its own, renamed in place
    const document = JSON.parse(JSON.stringify(state));
    if (renameToolsInDocument(document, renames) > 0) migrated = AgentState.fromParsedJson(document);
  }
  if (!migration.state) return migrated;
  let changed: unknown;
  try {
    changed = migration.state(migrated);
  } catch (error) {
    throw new AgentMigrationError(migration.from, `its state function threw: ${(error as Error)?.message}`, {
      cause: error,
    });
  }
  if (!(changed instanceof AgentState))
    throw new AgentMigrationError(
      migration.from,
      `its state function returned ${kindOf(changed)}: return the AgentState it was given, changed with its with* methods`,
    );
  return changed;
}

/** Problems of `version` and `migrations` in a definition: the field and what is wrong, or null. */
export function versionProblem(definition: Versioned): { field: string; detail: string } | null {
  const { version, migrations } = definition;
  if (version !== undefined && (typeof version !== 'string' || version === ''))
    return { field: 'version', detail: `must be a non-empty string, got ${kindOf(version)}` };
  if (migrations === undefined) return null;
  if (!Array.isArray(migrations))
    return { field: 'migrations', detail: `must be an array of { from, tools?, subagents?, state? }` };
  if (version === undefined)
    return { field: 'migrations', detail: 'need a version: give the agent the version they lead to' };
  const seen = new Set<string>();
  for (const [i, migration] of migrations.entries()) {
    const at = `migrations[${i}]`;
    if (typeof migration !== 'object' || migration === null)
      return { field: at, detail: 'must be an object { from, tools?, subagents?, state? }' };
    const { from, tools, subagents, state } = migration as AgentMigration;
    if (typeof from !== 'string' || from === '')
      return {
        field: `${at}.from`,
        detail: 'must be the version (a non-empty string) the migration starts from',
      };
    if (from === version)
      return {
        field: `${at}.from`,
        detail: `is this agent's own version '${version}': a migration leads to it`,
      };
    if (seen.has(from)) return { field: `${at}.from`, detail: `repeats version '${from}'` };
    seen.add(from);
    for (const [key, renames] of [
      ['tools', tools],
      ['subagents', subagents],
    ] as const) {
      if (renames === undefined) continue;
      if (typeof renames !== 'object' || renames === null || Array.isArray(renames))
        return { field: `${at}.${key}`, detail: 'must be an object of names, old to new' };
      for (const [old, renamed] of Object.entries(renames))
        if (typeof renamed !== 'string' || renamed === '' || renamed === old)
          return {
            field: `${at}.${key}.${old}`,
            detail: 'must be the new name (a non-empty string, not the old one)',
          };
    }
    if (state !== undefined && typeof state !== 'function')
      return { field: `${at}.state`, detail: 'must be a function (state) => state' };
  }
  return null;
}
