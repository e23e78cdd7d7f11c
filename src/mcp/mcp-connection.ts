import { McpDependencyMissingError, McpResultInvalidError } from './mcp-errors';
import type { McpServerConfig } from './mcp-server-config';

/** A tool as the server lists it. */
export interface McpToolInfo {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  /** The server's hints about the tool (MCP `ToolAnnotations`), which set its approval and effect defaults. */
  readonly annotations?: McpToolAnnotations;
}

/** MCP's hints about a tool; servers are not trusted to tell the truth, so the app may override them. */
export interface McpToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** A `tools/call` result. */
export interface McpCallResult {
  readonly content?: ReadonlyArray<{ readonly type: string; readonly text?: string }>;
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
}

/** One live connection to a server (one process, for stdio). */
export interface McpConnection {
  /** The server's tools; after it said its list changed, the list read again. */
  listTools(): Promise<readonly McpToolInfo[]>;
  callTool(name: string, args: unknown, signal: AbortSignal): Promise<McpCallResult>;
  close(): Promise<void>;
  /** The end of what the server wrote to stderr (stdio servers), for error messages. */
  stderrTail(): string;
}

/** What the connection tells its supervisor. */
export interface ConnectionEvents {
  /** The server went away (its process exited, the transport closed) without `close()`. */
  exited(connection: McpConnection, error: Error | null): void;
  /** The list could not be read again after the server said it changed. */
  toolsRefreshFailed(connection: McpConnection, error: Error): void;
}

// The parts of @modelcontextprotocol/sdk used here, declared so its types are not needed by users without MCP.
interface SdkTransport {
  onclose?: () => void;
  readonly stderr?: { on(event: 'data', listener: (chunk: Buffer | string) => void): unknown } | null;
}
interface SdkClient {
  connect(transport: SdkTransport, options?: { signal?: AbortSignal }): Promise<void>;
  listTools(
    params?: { cursor?: string },
    options?: { signal?: AbortSignal },
  ): Promise<{ tools: McpToolInfo[]; nextCursor?: string }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    schema?: undefined,
    options?: { signal?: AbortSignal },
  ): Promise<McpCallResult>;
  close(): Promise<void>;
  onclose?: () => void;
  onerror?: (error: Error) => void;
}
interface Sdk {
  Client: new (
    info: { name: string; version: string },
    options: {
      listChanged: {
        tools: {
          autoRefresh: boolean;
          debounceMs: number;
          onChanged: (error: Error | null, tools: McpToolInfo[] | null) => void;
        };
      };
    },
  ) => SdkClient;
  StdioClientTransport: new (params: {
    command: string;
    args?: string[];
    env?: Record<string, string>;
    cwd?: string;
    stderr?: 'pipe';
  }) => SdkTransport;
  StreamableHTTPClientTransport: new (
    url: URL,
    options?: { requestInit?: { headers?: Record<string, string> } },
  ) => SdkTransport;
}

let sdk: Promise<Sdk> | null = null;

/**
 * Loads the SDK's client parts at first use, so that it stays an optional peer; a failed load
 * raises McpDependencyMissingError and is not cached.
 */
export function loadMcpSdk(): Promise<Sdk> {
  if (!sdk) {
    const attempt = importSdk();
    sdk = attempt;
    attempt.catch(() => {
      if (sdk === attempt) sdk = null;
    });
  }
  return sdk;
}

async function importSdk(): Promise<Sdk> {
  // Variable specifiers keep bundlers from inlining the package or failing without it.
  const base: string = '@modelcontextprotocol/sdk/client/';
  try {
    const [client, stdio, http] = await Promise.all([
      import(`${base}index.js`),
      import(`${base}stdio.js`),
      import(`${base}streamableHttp.js`),
    ]);
    return {
      Client: client.Client,
      StdioClientTransport: stdio.StdioClientTransport,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    };
  } catch (error) {
    throw new McpDependencyMissingError({ cause: error });
  }
}

const STDERR_KEPT = 2_000;

/**
 * Starts a server (spawns it, for stdio), runs MCP's initialization and reads its tool list. A
 * start abandoned (`signal` aborted: the agent was closed meanwhile) stops the server at once,
 * whatever it was waiting for, and rejects once its process is gone.
 *
 * @example
 * const connection = await openMcpConnection('files', { command: 'npx', args: ['mcp-files'] }, events, signal);
 */
export async function openMcpConnection(
  name: string,
  config: McpServerConfig,
  events: ConnectionEvents,
  signal: AbortSignal,
): Promise<McpConnection> {
  const { Client, StdioClientTransport, StreamableHTTPClientTransport } = await loadMcpSdk();
  let stderr = '';
  let closing = false;
  let lastError: Error | null = null;
  const transport =
    'command' in config
      ? new StdioClientTransport({
          command: config.command,
          args: config.args ? [...config.args] : undefined,
          env: config.env ? { ...config.env } : undefined,
          cwd: config.cwd,
          stderr: 'pipe',
        })
      : new StreamableHTTPClientTransport(new URL(config.url), {
          requestInit: config.headers ? { headers: { ...config.headers } } : undefined,
        });
  transport.stderr?.on('data', (chunk) => {
    stderr = (stderr + String(chunk)).slice(-STDERR_KEPT);
  });
  let tools: readonly McpToolInfo[] = [];
  let refreshing: Promise<void> | null = null;
  // The list is read again by us, not by the SDK: the notification arrives before the answer to
  // the call that changed the list, so marking the list stale here makes the next model call wait
  // for the new one.
  const refresh = () => {
    refreshing = listAllTools(client).then(
      (listed) => {
        tools = listed;
      },
      (error: Error) => events.toolsRefreshFailed(connection, error),
    );
  };
  const client = new Client(
    { name: 'agent-machine', version: '1' },
    { listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: refresh } } },
  );
  const connection: McpConnection = {
    listTools: async () => {
      await refreshing;
      return tools;
    },
    callTool: (tool, args, callSignal) =>
      client
        .callTool({ name: tool, arguments: args as Record<string, unknown> }, undefined, {
          signal: callSignal,
        })
        .catch((error: unknown) => {
          throw refusedResult(name, tool, error) ?? error;
        }),
    close: () => shutdown(),
    stderrTail: () => stderr.trim(),
  };
  client.onerror = (error) => {
    lastError = error;
  };
  client.onclose = () => {
    if (!closing) events.exited(connection, lastError);
  };
  // Once: a second client.close() returns before the first has stopped the process.
  let shut: Promise<void> | null = null;
  function shutdown(): Promise<void> {
    closing = true;
    shut ??= client.close();
    return shut;
  }
  // An abandoned start (agent.close()) stops the process at once: a server that never answers
  // `initialize`, or lists its tools in pages without end, would otherwise keep Node running.
  const abandon = () => {
    shutdown().catch(() => undefined);
  };
  signal.addEventListener('abort', abandon, { once: true });
  try {
    await client.connect(transport, { signal });
    tools = await listAllTools(client, signal);
  } catch (error) {
    // The start's own error is the one to report; a failure to close what never opened adds nothing.
    await shutdown().catch(() => undefined);
    if (signal.aborted) throw new Error(`MCP server '${name}' was closed while it started`, { cause: error });
    const detail = stderr.trim() ? ` (stderr: ${stderr.trim()})` : '';
    throw new Error(`MCP server '${name}' did not start: ${(error as Error).message}${detail}`, {
      cause: error,
    });
  } finally {
    signal.removeEventListener('abort', abandon);
  }
  if (signal.aborted) {
    await shutdown();
    throw new Error(`MCP server '${name}' was closed while it started`);
  }
  return connection;
}

/**
 * The SDK rejects an answer its schema refuses with the schema's error (zod's, with `issues`), not
 * an McpError: the server answered, so this is the call's failure, not the connection's.
 */
function refusedResult(server: string, tool: string, error: unknown): McpResultInvalidError | null {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues)) return null;
  const described = issues.map((issue: { path?: unknown[]; message?: string }) =>
    issue.path?.length ? `${issue.path.join('.')}: ${issue.message}` : String(issue.message),
  );
  return new McpResultInvalidError(server, tool, described, { cause: error });
}

async function listAllTools(client: SdkClient, signal?: AbortSignal): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const params = cursor ? { cursor } : undefined;
    const page = await withPageSignal(signal, (pageSignal) =>
      client.listTools(params, { signal: pageSignal }),
    );
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/**
 * Runs one request with a signal of its own that follows `signal`: the SDK leaves its abort
 * listener on the signal it is given, so a tool list of many pages would pile them up on one
 * (Node warns past ten: MaxListenersExceededWarning).
 */
async function withPageSignal<T>(
  signal: AbortSignal | undefined,
  request: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  if (!signal) return request(undefined);
  const page = new AbortController();
  const abort = () => page.abort(signal.reason);
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  try {
    return await request(page.signal);
  } finally {
    signal.removeEventListener('abort', abort);
  }
}
