/**
 * The server process of the chat-turn bench: two loopback node:http servers, each a chat route
 * served through the same Web-to-node adapter (`toNodeHandler`), each with its own SQLite file in
 * `dir` and its own instance of the same streaming mock model (mock-model.ts):
 *
 * - `agent-machine`: `createChatHandler({ agent })` over `createAgent({ model, modelOptions:
 *   { stream: true }, store: new SqliteSessionStore(file) })` (default `'full'` durability).
 * - `ai-sdk`: the AI SDK's persistence recipe as a route handler: the stored chat loaded from a
 *   SQLite table (`chats`, one JSON row per chat), the posted last message appended,
 *   `streamText({ model, messages: await convertToModelMessages(messages) })`, and
 *   `toUIMessageStreamResponse({ originalMessages, onFinish })` saving the messages in `onFinish`
 *   (better-sqlite3, WAL, `synchronous = FULL`: the same flush per commit as the store's default).
 *
 * With `process` as second argument, both flush less: the store with `durability: 'process'`, the
 * table with `synchronous = NORMAL`.
 *
 * Usage: `node --import tsx bench/chat-turn/server.ts <dir> [full|process]`; prints one JSON line
 * `{ "agent-machine": port, "ai-sdk": port }` when both listen, serves `GET /calls` (the model's
 * call count, to check each turn called it once), `GET /cpu` (the process's CPU time in µs) and exits when stdin closes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { convertToModelMessages, generateId, streamText, type UIMessage } from 'ai';
import Database from 'better-sqlite3';
import { createAgent } from '../../src/index';
import { type Durability, SqliteSessionStore } from '../../src/persistence/index';
import { createChatHandler, toNodeHandler } from '../../src/ui/index';
import { streamingMockModel } from './mock-model';

type Handler = (request: Request) => Promise<Response>;

function agentMachineRoute(dir: string, durability: Durability): { handler: Handler; calls: () => number } {
  const { model, calls } = streamingMockModel();
  const agent = createAgent({
    model,
    modelOptions: { stream: true },
    store: new SqliteSessionStore(join(dir, 'agent-machine.db'), { durability }),
  });
  return { handler: createChatHandler({ agent }), calls };
}

function aiSdkRoute(dir: string, durability: Durability): { handler: Handler; calls: () => number } {
  const { model, calls } = streamingMockModel();
  const db = new Database(join(dir, 'ai-sdk.db'));
  db.pragma('journal_mode = WAL');
  db.pragma(durability === 'full' ? 'synchronous = FULL' : 'synchronous = NORMAL');
  db.exec('CREATE TABLE IF NOT EXISTS chats (id TEXT PRIMARY KEY, messages TEXT NOT NULL)');
  const select = db.prepare<[string], { messages: string }>('SELECT messages FROM chats WHERE id = ?');
  const upsert = db.prepare<[string, string]>(
    'INSERT INTO chats (id, messages) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET messages = excluded.messages',
  );
  const handler: Handler = async (request) => {
    const { id, messages: posted } = (await request.json()) as { id: string; messages: UIMessage[] };
    const row = select.get(id);
    const stored: UIMessage[] = row ? (JSON.parse(row.messages) as UIMessage[]) : [];
    const messages = [...stored, posted[posted.length - 1] as UIMessage];
    const result = streamText({ model, messages: await convertToModelMessages(messages) });
    return result.toUIMessageStreamResponse({
      originalMessages: messages,
      generateMessageId: generateId,
      onFinish: ({ messages: all }) => {
        upsert.run(id, JSON.stringify(all));
      },
    });
  };
  return { handler, calls };
}

function serve(route: { handler: Handler; calls: () => number }): Promise<Server> {
  const node = toNodeHandler(route.handler);
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/calls') {
      res.end(String(route.calls()));
      return;
    }
    if (req.method === 'GET' && req.url === '/cpu') {
      const { user, system } = process.cpuUsage();
      res.end(String(user + system));
      return;
    }
    node(req, res);
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const [dir, durabilityArg = 'full'] = process.argv.slice(2);
if (!dir || (durabilityArg !== 'full' && durabilityArg !== 'process')) {
  throw new Error('usage: server.ts <dir> [full|process]');
}
const durability: Durability = durabilityArg;
const servers = {
  'agent-machine': await serve(agentMachineRoute(dir, durability)),
  'ai-sdk': await serve(aiSdkRoute(dir, durability)),
};
const port = (server: Server) => (server.address() as AddressInfo).port;
console.log(
  JSON.stringify({ 'agent-machine': port(servers['agent-machine']), 'ai-sdk': port(servers['ai-sdk']) }),
);
process.stdin.resume();
process.stdin.on('end', () => {
  for (const server of Object.values(servers)) {
    server.close();
    server.closeAllConnections();
  }
  process.exit(0);
});
