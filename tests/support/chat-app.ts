import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { type ChatAppOptions, createChatApp } from '../../examples/http-app';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';

/** Run after each test, last first. */
export const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The chat app on 127.0.0.1 (a free port) with its chats in a temporary SQLite file. */
export async function startApp(options: Omit<ChatAppOptions, 'store'> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-chat-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const dbFile = join(dir, 'chat.db');
  const store = new SqliteSessionStore(dbFile);
  cleanups.push(() => store.close());
  const server = createChatApp({ ...options, store });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  cleanups.push(() => close(server));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return { url, api: `${url}/api/chat`, store, dbFile };
}

function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}
