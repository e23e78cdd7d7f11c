/**
 * An MCP server over Streamable HTTP on 127.0.0.1, written with the SDK (stateless: a server and
 * transport per request), with one tool, add. `stop()` takes it off
 * the port (the server "dies"); `start()` brings it back on the same port.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface HttpMcpServer {
  readonly url: string;
  /** Tool calls answered so far. */
  readonly calls: number;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startHttpMcpServer(): Promise<HttpMcpServer> {
  let calls = 0;
  const mcpServer = () => {
    const server = new McpServer({ name: 'http-fixture', version: '1.0.0' });
    server.registerTool(
      'add',
      { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => {
        calls++;
        return { content: [{ type: 'text', text: String(a + b) }] };
      },
    );
    return server;
  };
  let http: Server | null = null;
  let port = 0;
  const start = async () => {
    const server = createServer((req, res) => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const mcp = mcpServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      mcp
        .connect(transport)
        .then(() => transport.handleRequest(req, res))
        .catch((error: unknown) => {
          if (!res.headersSent) res.writeHead(500).end(String(error));
        });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // Loopback only: tests never open a port to the network.
      server.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server.address() as AddressInfo).port;
    http = server;
  };
  await start();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get calls() {
      return calls;
    },
    start,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        const server = http;
        http = null;
        if (!server) return resolve();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
