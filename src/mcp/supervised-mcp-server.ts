import { type Actor, createActor, fromPromise, waitFor } from 'xstate';
import {
  loadMcpSdk,
  type McpCallResult,
  type McpConnection,
  type McpToolInfo,
  openMcpConnection,
} from './mcp-connection';
import { McpResultInvalidError, McpServerError } from './mcp-errors';
import type { McpServerConfig } from './mcp-server-config';
import { mcpServerMachine } from './mcp-server-machine';

const DEFAULT_MAX_RESTARTS = 3;
const DEFAULT_RESTART_DELAY_MS = 500;
// MCP's JSON-RPC codes for a connection that closed (the server went away) and a request that timed out.
const CONNECTION_CLOSED = -32000;

/**
 * One MCP server an agent uses, supervised by its own actor (mcpServerMachine): started at first
 * use, shared by every execution of the agent, restarted by the next call after it died. A call
 * in flight when the server dies fails with McpServerError `MCP_SERVER_EXITED` naming the server.
 *
 * @example
 * const server = new SupervisedMcpServer('files', { command: 'node', args: ['files-server.js'] });
 * const tools = await server.tools(signal);
 * const result = await server.callTool('read', { path: 'a.txt' }, signal);
 * await server.close();
 */
export class SupervisedMcpServer {
  private readonly actor: Actor<typeof mcpServerMachine>;
  /** The list the server gave last, offered still once it is given up (its calls then fail one by one). */
  private known: readonly McpToolInfo[] | null = null;
  /** The last start, settled once its process is gone if it was abandoned: `close()` waits for it. */
  private starting: Promise<unknown> = Promise.resolve();

  constructor(
    readonly name: string,
    config: McpServerConfig,
  ) {
    const events = {
      exited: (connection: McpConnection, error: Error | null) => this.drop(connection, error),
      // A list that could not be read again: the connection is dropped, so the next call restarts
      // the server and reads its list afresh.
      toolsRefreshFailed: (connection: McpConnection, error: Error) => this.drop(connection, error),
    };
    const machine = mcpServerMachine.provide({
      actors: {
        connect: fromPromise(({ signal }) => {
          const start = openMcpConnection(name, config, events, signal);
          this.starting = start.catch(() => undefined);
          return start;
        }),
      },
    });
    this.actor = createActor(machine, {
      id: `mcp:${name}`,
      input: {
        name,
        maxRestarts: config.maxRestarts ?? DEFAULT_MAX_RESTARTS,
        restartDelayMs: config.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS,
      },
    });
    this.actor.start();
  }

  /** The supervisor's state: `idle`, `starting`, `ready`, `down`, `restarting`, `failed`, `closing` or `closed`. */
  status(): string {
    return String(this.actor.getSnapshot().value);
  }

  /**
   * The server's tools, starting (or restarting) it first if needed. A server given up after it
   * had listed its tools keeps them offered (each call then fails with `MCP_SERVER_GAVE_UP`, which
   * the model is told), so one broken server does not fail the agent's runs; a server that never
   * started raises its error.
   */
  async tools(signal?: AbortSignal): Promise<readonly McpToolInfo[]> {
    try {
      this.known = await (await this.connection(signal)).listTools();
    } catch (error) {
      if (!(this.known && error instanceof McpServerError && error.code === 'MCP_SERVER_GAVE_UP'))
        throw error;
    }
    return this.known;
  }

  /**
   * Calls one of the server's tools (by its own name). A server that dies during the call, or
   * cannot be reached, fails it with McpServerError `MCP_SERVER_EXITED`; the next call restarts it.
   * A malformed result fails the call alone (McpResultInvalidError); the server is kept.
   */
  async callTool(tool: string, args: unknown, signal: AbortSignal): Promise<McpCallResult> {
    const connection = await this.connection(signal);
    try {
      const result = await connection.callTool(tool, args, signal);
      this.actor.send({ type: 'call.succeeded' });
      return result;
    } catch (error) {
      if (signal.aborted || !isConnectionFailure(error)) throw error;
      this.drop(connection, error as Error);
      const stderr = connection.stderrTail();
      throw new McpServerError(
        'MCP_SERVER_EXITED',
        this.name,
        `MCP server '${this.name}' went away during a call to '${tool}': ${(error as Error).message}` +
          `${stderr ? ` (stderr: ${stderr})` : ''}; the next call restarts it`,
        { cause: error },
      );
    }
  }

  /**
   * Closes the connection (stops the process) for good, a start in progress too; resolves once the
   * process is gone. Calls after this fail with `MCP_SERVER_CLOSED`.
   */
  async close(): Promise<void> {
    this.actor.send({ type: 'close' });
    await waitFor(this.actor, (snapshot) => snapshot.status === 'done', {
      timeout: Number.POSITIVE_INFINITY,
    });
    await this.starting;
  }

  /** The connection is gone (or unusable): the supervisor goes `down`, and what is left of it is released. */
  private drop(connection: McpConnection, error: Error | null): void {
    this.actor.send({ type: 'exited', connection, error });
    // The failure that dropped it is already reported; closing only releases a process that may linger.
    connection.close().catch(() => undefined);
  }

  private async connection(signal?: AbortSignal): Promise<McpConnection> {
    // A missing SDK is the user's install, not the server: said at once, with no restarts.
    await loadMcpSdk();
    const value = this.actor.getSnapshot().value;
    if (value === 'idle' || value === 'down') this.actor.send({ type: 'use' });
    const snapshot = await waitFor(
      this.actor,
      (s) => s.status === 'done' || s.value === 'ready' || s.value === 'failed' || s.value === 'closing',
      { timeout: Number.POSITIVE_INFINITY, signal },
    );
    const { connection, error, restarts, startFailed } = snapshot.context;
    if (snapshot.value === 'ready' && connection) return connection;
    if (snapshot.value === 'failed' && startFailed) {
      throw new McpServerError(
        'MCP_SERVER_START_FAILED',
        this.name,
        `${error?.message ?? `MCP server '${this.name}' did not start`} (${restarts} restarts tried). ` +
          `Check its command, args and env (or url) in mcpServers, then create the agent again`,
        { cause: error },
      );
    }
    if (snapshot.value === 'failed') {
      throw new McpServerError(
        'MCP_SERVER_GAVE_UP',
        this.name,
        `MCP server '${this.name}' is given up after ${restarts} restarts in a row` +
          `${error ? `; last: ${error.message}` : ''}. Fix the server (or its command in mcpServers) and create the agent again`,
        { cause: error },
      );
    }
    throw new McpServerError(
      'MCP_SERVER_CLOSED',
      this.name,
      `MCP server '${this.name}' is closed (agent.close() was called): create the agent again to use it`,
    );
  }
}

/** A failure of the connection (not an error the server answered with): the server may be gone. */
function isConnectionFailure(error: unknown): boolean {
  if (error instanceof McpResultInvalidError) return false;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code !== 'number' || code === CONNECTION_CLOSED;
}
