import { readFileSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import {
  FileSessionStore,
  InMemorySessionStore,
  type JournaledSessionStore,
  SqliteSessionStore,
  type StoredSession,
} from '../../src/persistence/index';
import { createAgent } from '../../src/runtime/create-agent';
import type { AgentState } from '../../src/state/agent-state';
import { tempDir } from './fixtures';

/**
 * A session as agent-machine wrote it before the journal (`{"version":4,"savedAt":...,"state":...}`,
 * the file store's bytes): a finished execution with a tool step whose result is long.
 */
const OLD_DOCUMENT = readFileSync(new URL('./fixtures/session-format-1.txt', import.meta.url), 'utf8');
const OLD_STATE = JSON.parse(OLD_DOCUMENT).state;

/** A store holding the old document under `legacy-chat`, as the store wrote it then, and a look at what it holds. */
interface OldStore {
  readonly store: JournaledSessionStore;
  /** Whether the old document is still there. */
  holdsOldDocument(): Promise<boolean>;
  /** How many journal records the session has. */
  journalRecords(): Promise<number>;
  cleanup(): Promise<void>;
}

export const oldStores: { name: string; create(): Promise<OldStore> }[] = [
  {
    name: 'InMemorySessionStore',
    async create() {
      const documents = new Map<string, StoredSession>([['legacy-chat', OLD_DOCUMENT]]);
      const store = new InMemorySessionStore({ documents });
      return {
        store,
        holdsOldDocument: async () => typeof documents.get('legacy-chat') === 'string',
        journalRecords: async () => {
          const stored = documents.get('legacy-chat');
          return Array.isArray(stored) ? stored.length : 0;
        },
        cleanup: () => store.close(),
      };
    },
  },
  {
    name: 'FileSessionStore',
    async create() {
      const { dir, remove } = await tempDir();
      await writeFile(join(dir, 'legacy-chat.json'), OLD_DOCUMENT);
      const store = new FileSessionStore(dir);
      return {
        store,
        holdsOldDocument: async () => (await readdir(dir)).includes('legacy-chat.json'),
        journalRecords: async () => {
          if (!(await readdir(dir)).includes('legacy-chat.journal')) return 0;
          return (await store.checkpoints('legacy-chat')).length;
        },
        cleanup: async () => {
          await store.close();
          await remove();
        },
      };
    },
  },
  {
    name: 'SqliteSessionStore',
    async create() {
      const { dir, remove } = await tempDir();
      const file = join(dir, 'agents.db');
      // The database as the store left it before the journal: one row per session in `sessions`.
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.exec(`CREATE TABLE sessions (
        id TEXT PRIMARY KEY NOT NULL,
        version INTEGER NOT NULL CHECK (version >= 1),
        saved_at TEXT NOT NULL,
        state_json TEXT NOT NULL
      ) STRICT`);
      const old = JSON.parse(OLD_DOCUMENT);
      db.prepare('INSERT INTO sessions VALUES (?, ?, ?, ?)').run(
        'legacy-chat',
        old.version,
        old.savedAt,
        JSON.stringify(old.state),
      );
      db.close();
      const store = new SqliteSessionStore(file);
      const count = (sql: string) => {
        const reader = new Database(file, { readonly: true });
        try {
          return reader.prepare(sql).pluck().get('legacy-chat') as number;
        } finally {
          reader.close();
        }
      };
      return {
        store,
        holdsOldDocument: async () => count('SELECT count(*) FROM sessions WHERE id = ?') === 1,
        journalRecords: async () => count('SELECT count(*) FROM session_journal WHERE session_id = ?'),
        cleanup: async () => {
          await store.close();
          await remove();
        },
      };
    },
  },
];

export function describeMigration(kinds: typeof oldStores): void {
  describe.each(kinds)('$name: a session saved before the journal', (kind) => {
    let old: OldStore;
    afterEach(async () => {
      await old?.cleanup();
    });

    it('loads as it was saved, at its version, and lists as one checkpoint', async () => {
      old = await kind.create();
      const loaded = await old.store.load('legacy-chat');
      expect(loaded?.version).toBe(4);
      expect(loaded?.state.toJSON()).toEqual(OLD_STATE);
      expect(loaded?.state.finalResponse()).toBe('Lyon has two rivers.');
      expect(await old.store.list()).toEqual(['legacy-chat']);
      const checkpoints = await old.store.checkpoints('legacy-chat');
      expect(checkpoints).toEqual([
        { version: 4, stepNumber: 2, savedAt: new Date(JSON.parse(OLD_DOCUMENT).savedAt) },
      ]);
      expect((await old.store.loadCheckpoint('legacy-chat', 4))?.state.toJSON()).toEqual(OLD_STATE);
      // Loading changes nothing.
      expect(await old.holdsOldDocument()).toBe(true);
      expect(await old.journalRecords()).toBe(0);
      // It can be forked at its version, as it is.
      expect((await old.store.fork('legacy-chat', 4, 'legacy-fork')).version).toBe(4);
      expect((await old.store.load('legacy-fork'))?.state.toJSON()).toEqual(OLD_STATE);
    });

    it('moves to the journal at its next save, which names the old version', async () => {
      old = await kind.create();
      const loaded = await old.store.load('legacy-chat');
      const next = (loaded as { state: AgentState }).state.withUserMessage('And Paris?');
      await expect(old.store.save('legacy-chat', next, 3)).rejects.toMatchObject({
        code: 'SESSION_CONFLICT',
        actualVersion: 4,
      });
      expect(await old.store.save('legacy-chat', next, 4)).toBe(5);
      expect(await old.holdsOldDocument()).toBe(false);
      expect(await old.journalRecords()).toBe(1);
      const again = await old.store.load('legacy-chat');
      expect(again?.version).toBe(5);
      expect(again?.state.toJSON()).toEqual(next.toJSON());
      // The next saves append to the journal.
      expect(await old.store.save('legacy-chat', next.withUserMessage('And Rome?'), 5)).toBe(6);
      expect(await old.journalRecords()).toBe(2);
      expect((await old.store.load('legacy-chat'))?.state.messages().at(-1)?.content).toBe('And Rome?');
    });

    it('goes on through the agent: chat() continues the old conversation and checkpoints into the journal', async () => {
      old = await kind.create();
      const agent = createAgent({
        store: old.store,
        driver: scriptedDriver([{ text: 'Paris has one river.' }]),
      });
      const state = await agent.chat('legacy-chat', 'And Paris?');
      expect(state.finalResponse()).toBe('Paris has one river.');
      expect(await old.holdsOldDocument()).toBe(false);
      const loaded = await old.store.load('legacy-chat');
      expect(loaded?.version).toBeGreaterThan(4);
      expect(loaded?.state.toJSON()).toEqual(state.toJSON());
      expect(loaded?.state.messages().map((m) => m.content.slice(0, 20))).toEqual([
        'Tell me about Lyon.',
        '',
        'Lyon: A long descrip',
        'Lyon has two rivers.',
        'And Paris?',
        'Paris has one river.',
      ]);
    });
  });
}

// Only as its own test file: a file that imports describeMigration runs it for its stores.
if (expect.getState().testPath === new URL(import.meta.url).pathname) describeMigration(oldStores);
