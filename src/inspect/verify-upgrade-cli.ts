/**
 * `agent-machine verify-upgrade --agent <module>#<export> [--strict] <store folder | sqlite file>`:
 * `agent.verifyUpgrade` over a store opened read-only, one line a session and a summary, as a CI
 * step before a deploy. Exit codes: 0 no session orphaned (`--strict`: none changed either); 1 an
 * orphaned (or, strict, a changed) session, or a store that cannot be read; 2 a wrong command line.
 */
import { stat } from 'node:fs/promises';
import { inflateRawSync } from 'node:zlib';
import { FileSessionStore } from '../persistence/file-session-store';
import { decodeRecord } from '../persistence/journal/journal-record';
import { replay } from '../persistence/journal/journal-replay';
import { decodeStoredState, parseJson, type StoredAt } from '../persistence/session-document';
import type { LoadedSession } from '../persistence/session-store';
import { loadSqliteDriver, type SqliteDatabase } from '../persistence/sqlite-driver';
import type { SessionUpgradeReport, UpgradeSource } from '../replay/verify-upgrade';
import type { Agent } from '../runtime/agent-actor';

const VERIFY_UPGRADE_HELP = `Usage: agent-machine verify-upgrade --agent <module>[#<export>] [--strict] <path>

Checks, before a deploy, that the new version of your agent can go on with every saved session
(agent.verifyUpgrade): each is loaded (read-only), migrated (createAgent({ version, migrations })),
checked for calls the new code cannot carry on, and replayed with its recorded tools. Prints one
line per session (ok, changed with the first divergence, ORPHANED or unreplayable with why) and a
summary; exits 1 if any session is orphaned (with --strict: also if any changed).

<path> is a FileSessionStore folder (*.journal) or a SqliteSessionStore file, opened read-only.

Options:
  --agent <module>[#<export>]  The new agent: an export that is an agent or a function returning one.
  --strict                     Exit 1 on a changed session too.
  --concurrency <n>            Sessions checked at a time (default 4).
  -h, --help                   Show this help.
`;

interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** Runs the command; resolves with the exit code. `loadAgent` is the CLI's `--agent` loader. */
export async function verifyUpgradeCommand(
  args: readonly string[],
  io: Io,
  loadAgent: (spec: string) => Promise<Agent>,
): Promise<number> {
  let spec: string | undefined;
  let input: string | undefined;
  let strict = false;
  let concurrency: number | undefined;
  const usage = (problem: string) => {
    io.err(`agent-machine: ${problem}\nRun "agent-machine verify-upgrade --help" for usage.\n`);
    return 2;
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-h' || arg === '--help') {
      io.out(VERIFY_UPGRADE_HELP);
      return 0;
    }
    if (arg === '--strict') strict = true;
    else if (arg === '--agent' || arg === '--concurrency') {
      const value = args[++i];
      if (value === undefined || value === '') return usage(`${arg} needs a value`);
      if (arg === '--agent') spec = value;
      else {
        concurrency = Number(value);
        if (!Number.isInteger(concurrency) || concurrency < 1)
          return usage(`--concurrency needs a whole number >= 1, got "${value}"`);
      }
    } else if (arg.startsWith('--agent=')) spec = arg.slice('--agent='.length);
    else if (arg.startsWith('-')) return usage(`unknown option "${arg}"`);
    else if (input === undefined) input = arg;
    else return usage(`one path only (got "${input}" and "${arg}")`);
  }
  if (!spec) return usage('verify-upgrade needs --agent <module>[#<export>]');
  if (input === undefined) return usage('verify-upgrade needs a path: a store folder or a SQLite file');
  let source: ReadOnlySource;
  try {
    source = await openReadOnly(input);
  } catch (error) {
    io.err(`agent-machine: ${input}: ${(error as Error).message}\n`);
    return 1;
  }
  try {
    const agent = await loadAgent(spec);
    try {
      const report = await agent.verifyUpgrade(source, concurrency ? { concurrency } : {});
      const count = { ok: 0, changed: 0, orphaned: 0, unreplayable: 0 };
      for (const session of report.sessions) {
        count[session.verdict]++;
        io.out(`${line(session)}\n`);
      }
      const total = report.sessions.length;
      io.out(
        `${total} session${total === 1 ? '' : 's'} checked: ${count.ok} ok, ${count.changed} changed, ` +
          `${count.orphaned} orphaned, ${count.unreplayable} unreplayable\n`,
      );
      return count.orphaned > 0 || (strict && count.changed > 0) ? 1 : 0;
    } finally {
      await agent.close();
    }
  } finally {
    source.close();
  }
}

function line(session: SessionUpgradeReport): string {
  const name = `${session.sessionId} (from ${session.fromVersion ?? 'no version'})`;
  const d = session.divergence;
  if (session.verdict === 'changed' && d)
    return `changed      ${name}: step ${d.stepNumber} (${d.kind}) at ${d.path}: recorded ${shown(d.recorded)}, now ${shown(d.replayed)}`;
  const label = session.verdict === 'orphaned' ? 'ORPHANED' : session.verdict;
  return `${label.padEnd(12)} ${name}${session.reason ? `: ${session.reason}` : ''}`;
}

function shown(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

type ReadOnlySource = UpgradeSource & { close(): void };

/** A store folder (whose loads only read) or a SQLite file opened read-only. */
async function openReadOnly(path: string): Promise<ReadOnlySource> {
  const info = await stat(path).catch(() => null);
  if (!info) throw new Error('no such file or folder');
  if (info.isFile()) return readOnlySqlite(path);
  const store = new FileSessionStore(path);
  return { load: (id) => store.load(id), list: () => store.list(), close: () => void store.close() };
}

/**
 * The sessions of a SqliteSessionStore file, read with a read-only connection (better-sqlite3's
 * `readonly`): the same rows a store's load reads (JOURNAL_FORMAT.md), nothing written.
 */
async function readOnlySqlite(file: string): Promise<ReadOnlySource> {
  const Database = (await loadSqliteDriver()) as unknown as new (
    file: string,
    options: { readonly: boolean; fileMustExist: boolean },
  ) => SqliteDatabase;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const tables = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
      (t) => t.name,
    ),
  );
  if (!tables.has('session_journal')) {
    db.close();
    throw new Error('not a SqliteSessionStore file (it has no session_journal table)');
  }
  const legacy = tables.has('sessions');
  const ids = db.prepare(
    legacy
      ? 'SELECT session_id AS id FROM session_journal UNION SELECT id FROM sessions ORDER BY id'
      : 'SELECT DISTINCT session_id AS id FROM session_journal ORDER BY id',
  );
  const records = db.prepare(
    `SELECT version, kind, body FROM session_journal WHERE session_id = ? AND version >=
     (SELECT max(version) FROM session_journal WHERE session_id = ? AND kind = 'snapshot') ORDER BY version`,
  );
  const old = legacy ? db.prepare('SELECT state_json, version FROM sessions WHERE id = ?') : null;
  const load = async (id: string): Promise<LoadedSession | null> => {
    const at: StoredAt = { sessionId: id, location: `${file}#session_journal/${id}` };
    const rows = records.all(id, id) as { version: number; kind: string; body: Uint8Array | string }[];
    if (rows.length === 0) {
      const row = old?.get(id) as { state_json: string; version: number } | undefined;
      if (!row) return null;
      return { state: decodeStoredState(parseJson(row.state_json, at), at), version: row.version };
    }
    const replayed = replay(
      rows.map((row) => decodeRecord(bodyText(row.body), at)),
      at,
    );
    return { state: replayed.state, version: replayed.version };
  };
  return {
    load,
    list: async () => (ids.all() as { id: string }[]).map((row) => row.id),
    close: () => void db.close(),
  };
}

/** A row's body as text: the record's UTF-8 JSON, or (agent-machine 0.1) that JSON compressed with raw DEFLATE. */
function bodyText(body: Uint8Array | string): string {
  if (typeof body === 'string') return body;
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return bytes[0] === 0x7b && bytes[1] === 0x22
    ? bytes.toString('utf8')
    : inflateRawSync(bytes).toString('utf8');
}
