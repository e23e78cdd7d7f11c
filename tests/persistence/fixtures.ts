import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendToolStep } from '../../bench/workload';
import { AgentState, createAgent, scriptedDriver } from '../../src/index';
import {
  FileSessionStore,
  InMemorySessionStore,
  type SessionStore,
  SqliteSessionStore,
} from '../../src/persistence/index';
import { add, addCall } from '../support/agents';

/** A real temporary directory, removed by the returned function. */
export async function tempDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-machine-persistence-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A finished execution with a tool step and a final answer, run by the real agent loop. */
export async function finishedState(question = 'What is 2 + 3?', answer = '5'): Promise<AgentState> {
  const agent = createAgent({
    driver: scriptedDriver([{ toolCalls: [addCall()] }, { text: answer }]),
    tools: { add },
  });
  return agent.execute(AgentState.empty().withSystemPrompt('You add numbers.').withUserMessage(question));
}

/** Appends one recorded tool step (the benchmarks' unit): an execution in progress. */
export const appendStep = appendToolStep;

/** An execution in progress with `steps` recorded steps (what a checkpoint after a step holds). */
export function inProgressState(steps: number): AgentState {
  let state = AgentState.empty().withSystemPrompt('bench').withUserMessage('go').withExecutionStarted();
  for (let i = 0; i < steps; i++) state = appendStep(state, i);
  return state;
}

/** A session store with direct access to what it stores, to damage it as a crash or a bug would. */
export interface StoreFixture {
  readonly store: SessionStore;
  /** Another store over the same storage (a restart, or another worker in this process). */
  reopen(): SessionStore;
  /** The stored bytes of a session as text (a document, or a row's version and state_json). */
  readRaw(sessionId: string): Promise<string>;
  /** The stored document (file, map entry) or the row's state_json. */
  readRawState(sessionId: string): Promise<string>;
  /** Replaces the stored document (file, map entry) or the row's state_json with `text`. */
  writeRawState(sessionId: string, text: string): Promise<void>;
  /** Rewrites the stored state JSON through `edit`, keeping the rest of the document. */
  editState(sessionId: string, edit: (state: Record<string, unknown>) => void): Promise<void>;
  /** Closes the stores and removes the storage. */
  cleanup(): Promise<void>;
}

export interface StoreKind {
  readonly name: string;
  create(): Promise<StoreFixture>;
}

export const storeKinds: StoreKind[] = [
  {
    name: 'InMemorySessionStore',
    async create() {
      const documents = new Map<string, string>();
      const opened: SessionStore[] = [];
      const open = () => {
        const store = new InMemorySessionStore({ documents });
        opened.push(store);
        return store;
      };
      const readRaw = async (id: string) => documents.get(id) ?? '';
      return {
        store: open(),
        reopen: open,
        readRaw,
        readRawState: readRaw,
        writeRawState: async (id, text) => {
          documents.set(id, text);
        },
        editState: async (id, edit) => {
          const doc = JSON.parse(await readRaw(id));
          edit(doc.state);
          documents.set(id, JSON.stringify(doc));
        },
        cleanup: async () => {
          await Promise.all(opened.map((s) => s.close()));
        },
      };
    },
  },
  {
    name: 'FileSessionStore',
    async create() {
      const { dir, remove } = await tempDir();
      const opened: SessionStore[] = [];
      const open = () => {
        const store = new FileSessionStore(dir);
        opened.push(store);
        return store;
      };
      const file = (id: string) => join(dir, `${id}.json`);
      return {
        store: open(),
        reopen: open,
        readRaw: (id) => readFile(file(id), 'utf8'),
        readRawState: (id) => readFile(file(id), 'utf8'),
        writeRawState: (id, text) => writeFile(file(id), text),
        editState: async (id, edit) => {
          const doc = JSON.parse(await readFile(file(id), 'utf8'));
          edit(doc.state);
          await writeFile(file(id), JSON.stringify(doc));
        },
        cleanup: async () => {
          await Promise.all(opened.map((s) => s.close()));
          await remove();
        },
      };
    },
  },
  {
    name: 'SqliteSessionStore',
    async create() {
      const { dir, remove } = await tempDir();
      const path = join(dir, 'sessions.db');
      const opened: SessionStore[] = [];
      const open = () => {
        const store = new SqliteSessionStore(path);
        opened.push(store);
        return store;
      };
      const store = open();
      // A separate connection, as another program (or a damaged disk) would write the file.
      const withDb = <T>(fn: (db: Database.Database) => T): T => {
        const db = new Database(path);
        try {
          return fn(db);
        } finally {
          db.close();
        }
      };
      const stateJson = (id: string) =>
        withDb(
          (db) =>
            (db.prepare('SELECT state_json FROM sessions WHERE id = ?').get(id) as { state_json: string })
              .state_json,
        );
      const setStateJson = (id: string, text: string) =>
        withDb((db) => db.prepare('UPDATE sessions SET state_json = ? WHERE id = ?').run(text, id));
      return {
        store,
        reopen: open,
        readRaw: async (id) =>
          withDb((db) => JSON.stringify(db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) ?? null)),
        readRawState: async (id) => stateJson(id),
        writeRawState: async (id, text) => {
          setStateJson(id, text);
        },
        editState: async (id, edit) => {
          const state = JSON.parse(stateJson(id));
          edit(state);
          setStateJson(id, JSON.stringify(state));
        },
        cleanup: async () => {
          await Promise.all(opened.map((s) => s.close()));
          await remove();
        },
      };
    },
  },
];
