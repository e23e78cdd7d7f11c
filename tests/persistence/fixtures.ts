import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 as zlibCrc32 } from 'node:zlib';
import Database from 'better-sqlite3';
import { appendToolStep } from '../../bench/workload';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import {
  FileSessionStore,
  InMemorySessionStore,
  type SessionStore,
  SqliteSessionStore,
  type StoredSession,
} from '../../src/persistence/index';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
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
  /** Everything stored for a session, as text (the journal's records, or rows). */
  readRaw(sessionId: string): Promise<string>;
  /** The text of the session's newest journal record. */
  readRecord(sessionId: string): Promise<string>;
  /** The texts of all the session's journal records, oldest first. */
  readRecords(sessionId: string): Promise<string[]>;
  /** Replaces the text of the session's newest journal record (intact framing: a bug, not a crash). */
  writeRecord(sessionId: string, text: string): Promise<void>;
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
      const documents = new Map<string, StoredSession>();
      const opened: SessionStore[] = [];
      const open = () => {
        const store = new InMemorySessionStore({ documents });
        opened.push(store);
        return store;
      };
      const records = (id: string) => documents.get(id) as string[];
      return {
        store: open(),
        reopen: open,
        readRaw: async (id) => JSON.stringify(documents.get(id) ?? null),
        readRecord: async (id) => records(id)[records(id).length - 1] as string,
        readRecords: async (id) => [...records(id)],
        writeRecord: async (id, text) => {
          records(id)[records(id).length - 1] = text;
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
      const file = (id: string) => join(dir, `${id}.journal`);
      const records = async (id: string) => unframeRecords(await readFile(file(id)));
      return {
        store: open(),
        reopen: open,
        readRaw: async (id) => (await readFile(file(id))).toString('base64'),
        readRecord: async (id) => (await records(id)).at(-1) as string,
        readRecords: records,
        writeRecord: async (id, text) => {
          const texts = await records(id);
          texts[texts.length - 1] = text;
          await writeFile(file(id), Buffer.concat(texts.map(frameRecord)));
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
      const newest = 'SELECT max(version) FROM session_journal WHERE session_id = @id';
      return {
        store,
        reopen: open,
        readRaw: async (id) =>
          withDb((db) =>
            JSON.stringify(
              db.prepare('SELECT * FROM session_journal WHERE session_id = ? ORDER BY version').all(id),
            ),
          ),
        // Bodies are the record's UTF-8 JSON.
        readRecord: async (id) =>
          withDb((db) => {
            const row = db
              .prepare(`SELECT body FROM session_journal WHERE session_id = @id AND version = (${newest})`)
              .get({ id }) as { body: Buffer };
            return row.body.toString('utf8');
          }),
        readRecords: async (id) =>
          withDb((db) =>
            (
              db
                .prepare('SELECT body FROM session_journal WHERE session_id = ? ORDER BY version')
                .all(id) as { body: Buffer }[]
            ).map((row) => row.body.toString('utf8')),
          ),
        writeRecord: async (id, text) => {
          withDb((db) =>
            db
              .prepare(
                `UPDATE session_journal SET body = @body WHERE session_id = @id AND version = (${newest})`,
              )
              .run({ id, body: Buffer.from(text, 'utf8') }),
          );
        },
        cleanup: async () => {
          await Promise.all(opened.map((s) => s.close()));
          await remove();
        },
      };
    },
  },
];

/** The file journal's framing (`[length u32 BE][crc32 u32 BE][payload]`), written out for tests. */
export function frameRecord(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const header = Buffer.alloc(8);
  header.writeUInt32BE(payload.length, 0);
  header.writeUInt32BE(zlibCrc32(payload), 4);
  return Buffer.concat([header, payload]);
}

export function unframeRecords(bytes: Buffer): string[] {
  const texts: string[] = [];
  for (let offset = 0; offset + 8 <= bytes.length; ) {
    const length = bytes.readUInt32BE(offset);
    texts.push(bytes.subarray(offset + 8, offset + 8 + length).toString('utf8'));
    offset += 8 + length;
  }
  return texts;
}

/**
 * A journal record's text with its checksum (JOURNAL_FORMAT.md: the last member `"crc"`, the
 * CRC-32 of the record's JSON without it), written out for tests that edit records as a buggy
 * writer would: the check passes, so what the reader checks next is what the test is about.
 */
export function sealRecord(record: Record<string, unknown>): string {
  const { crc: _, ...rest } = record;
  const text = JSON.stringify(rest);
  return `${text.slice(0, -1)},"crc":${zlibCrc32(text)}}`;
}
