import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { NotASessionStoreError } from '../persistence/errors';
import { openStoreReadOnly } from '../persistence/read-only-store';
import type { SessionStore } from '../persistence/session-store';
import type { ReplayOptions } from '../replay/replay-options';
import type { ReplayDivergence } from '../replay/replay-tracks';
import type { Agent } from '../runtime/agent-actor';
import { AgentState } from '../state/agent-state';
import { AgentMachineError } from '../state/errors';
import { buildRunView } from './run-model';
import { renderRunView } from './run-viewer';
import { readTrace, traceStates } from './trace-reader';

/** One recorded session to replay: its name and a way to load it. */
interface RecordedSession {
  readonly name: string;
  load(): Promise<AgentState | null>;
}

/** What `replaySessions` found. */
export interface ReplaySummary {
  readonly sessions: number;
  readonly equal: number;
  readonly diverged: number;
  /** Sessions that could not be loaded or replayed (the line says why). */
  readonly failed: number;
}

/** A path that is neither a session store (a folder of them, a SQLite file) nor a folder of traces. */
export class NotARecordingError extends AgentMachineError {
  static override get name(): string {
    return 'NotARecordingError';
  }

  constructor(
    readonly path: string,
    detail: string,
  ) {
    super('NOT_A_RECORDING', `${path}: ${detail}`);
  }
}

/**
 * Replays every session recorded at `path` with `agent` and writes one line per session and a
 * summary: a FileSessionStore folder (`*.journal`), a folder of traces or saved states (`*.json`),
 * or a SQLite file of a SqliteSessionStore. Sessions are replayed one at a time, in name order.
 * With `html`, each diverged session's recording is written there as a run viewer page, the
 * divergence beside its step; `tools: 'live'` runs the agent's tools instead of answering from the
 * recorded results. Stores are opened read-only: nothing is written into `path`. A path with no
 * session raises NotARecordingError (a CI step aimed at the wrong path fails).
 *
 * @example
 * const summary = await replaySessions(agent, 'sessions.db', (line) => console.log(line));
 * process.exitCode = summary.diverged + summary.failed > 0 ? 1 : 0;
 */
export async function replaySessions(
  agent: Agent,
  path: string,
  write: (line: string) => void,
  options: { readonly html?: string; readonly tools?: ReplayOptions['tools'] } = {},
): Promise<ReplaySummary> {
  const { sessions, close } = await recordedSessions(path);
  if (sessions.length === 0) {
    await close();
    throw new NotARecordingError(
      path,
      'holds no sessions to replay (a CI step aimed here would pass on nothing)',
    );
  }
  let equal = 0;
  let diverged = 0;
  let failed = 0;
  try {
    for (const session of sessions) {
      try {
        const state = await session.load();
        if (!state) throw new NotARecordingError(session.name, 'the session is gone');
        const { divergence } = await agent.replay(state, options.tools ? { tools: options.tools } : {});
        if (divergence) {
          diverged++;
          const page = options.html && (await writePage(options.html, session.name, state, divergence));
          write(`DIVERGED ${session.name}: ${describe(divergence)}${page ? ` (see ${page})` : ''}`);
        } else {
          equal++;
          write(`ok       ${session.name} (${state.stepCount()} steps, ${state.status()})`);
        }
      } catch (error) {
        failed++;
        write(`ERROR    ${session.name}: ${(error as Error)?.message ?? String(error)}`);
      }
    }
  } finally {
    await close();
  }
  write(
    `${sessions.length} session${sessions.length === 1 ? '' : 's'} replayed: ${equal} equal, ${diverged} diverged` +
      (failed ? `, ${failed} failed` : ''),
  );
  return { sessions: sessions.length, equal, diverged, failed };
}

/** The recorded run as a viewer page with the divergence beside its step; returns the page's path. */
async function writePage(
  dir: string,
  name: string,
  state: AgentState,
  divergence: ReplayDivergence,
): Promise<string> {
  const file = join(dir, `${name.replace(/[^\w.-]/g, '_')}.html`);
  await mkdir(dir, { recursive: true });
  await writeFile(file, renderRunView(buildRunView(state, { title: `Replay of ${name}`, divergence })));
  return file;
}

function describe(d: ReplayDivergence): string {
  const shown = (value: unknown) => {
    const text = value === undefined ? 'undefined' : JSON.stringify(value);
    return text.length > 120 ? `${text.slice(0, 120)}...` : text;
  };
  return `step ${d.stepNumber} (${d.kind}) at ${d.path}: recorded ${shown(d.recorded)}, replayed ${shown(d.replayed)}`;
}

/** The sessions at `path`, stores opened read-only (a replay writes nothing into its input). */
async function recordedSessions(
  path: string,
): Promise<{ sessions: RecordedSession[]; close: () => Promise<void> }> {
  const info = await stat(path).catch(() => null);
  if (!info) throw new NotARecordingError(path, 'no such file or folder');
  if (info.isFile()) {
    if (extname(path) === '.json') return { sessions: [jsonSession(path)], close: async () => {} };
    return fromStore(await readOnlyStore(path));
  }
  const names = (await readdir(path)).sort();
  if (names.some((name) => name.endsWith('.journal'))) return fromStore(await readOnlyStore(path));
  const files = names.filter((name) => name.endsWith('.json'));
  if (files.length === 0)
    throw new NotARecordingError(
      path,
      'holds no session journals (*.journal) and no traces or states (*.json)',
    );
  return { sessions: files.map((name) => jsonSession(join(path, name))), close: async () => {} };
}

/** The store at `path`, read-only; not one: NotARecordingError, saying why. */
async function readOnlyStore(path: string): Promise<SessionStore> {
  try {
    return await openStoreReadOnly(path);
  } catch (error) {
    if (error instanceof NotASessionStoreError)
      throw new NotARecordingError(path, `not a session store: ${error.detail}`);
    throw error;
  }
}

async function fromStore(store: SessionStore) {
  const ids = await store.list().catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  return {
    sessions: ids.map((id) => ({ name: id, load: async () => (await store.load(id))?.state ?? null })),
    close: () => store.close(),
  };
}

/** A trace (its root agent's state) or an AgentState saved as JSON. */
function jsonSession(file: string): RecordedSession {
  return {
    name: basename(file),
    async load() {
      const data = JSON.parse(await readFile(file, 'utf8'));
      if (data?.format !== 'agent-machine/trace') return AgentState.fromJSON(data);
      const agents = traceStates(readTrace(data));
      return (agents.find((a) => a.parentAgentId === null) ?? agents[0])?.state ?? null;
    },
  };
}
