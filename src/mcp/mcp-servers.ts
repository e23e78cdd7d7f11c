import {
  type ReconcileOutcome,
  type Tool,
  type ToolReconcile,
  type ToolSet,
  toolEffect,
} from '../tools/define-tool';
import type { McpCallResult, McpToolInfo } from './mcp-connection';
import { McpToolError, McpToolNameConflictError, McpToolNotListedError } from './mcp-errors';
import type { McpServersConfig, McpToolChoice, McpToolSetting } from './mcp-server-config';
import { SupervisedMcpServer } from './supervised-mcp-server';

/**
 * The MCP servers of one agent, each supervised on its own, and their tools as the agent's:
 * `<server>_<tool>` with the server's JSON Schema (only those in a server's `tools`, when it has
 * one), their approval and effect from the app's settings, else from the server's annotations.
 * Servers start when the tools are first needed (the first model call), are shared by all of the
 * agent's executions, and stop at `close()`.
 *
 * @example
 * const servers = new McpServers({ files: { command: 'node', args: ['files-server.js'] } });
 * const tools = await servers.toolSet({ add }, signal); // { add, files_read, files_write }
 * await servers.close();
 */
export class McpServers {
  private readonly servers: readonly SupervisedMcpServer[];
  /** Each server's `tools`, in the order of `servers`. */
  private readonly choices: ReadonlyArray<McpToolChoice['tools']>;
  private cached: { base: ToolSet; lists: ReadonlyArray<readonly McpToolInfo[]>; set: ToolSet } | null = null;

  constructor(config: McpServersConfig) {
    this.servers = Object.entries(config).map(([name, server]) => new SupervisedMcpServer(name, server));
    this.choices = Object.values(config).map((server) => server.tools);
  }

  /** The supervisor of each server, by name. */
  server(name: string): SupervisedMcpServer | undefined {
    return this.servers.find((s) => s.name === name);
  }

  /**
   * `base` with every server's tools added. The same object is returned while no list changed, so
   * what is derived from it (the tools' JSON Schemas for the model) is kept.
   */
  async toolSet(base: ToolSet, signal?: AbortSignal): Promise<ToolSet> {
    const lists = await Promise.all(this.servers.map((server) => server.tools(signal)));
    const cached = this.cached;
    if (cached && cached.base === base && lists.every((list, i) => list === cached.lists[i]))
      return cached.set;
    const set: Record<string, Tool> = { ...base };
    this.servers.forEach((server, i) => {
      const choice = this.choices[i];
      const listed = (lists[i] ?? []).map((info) => info.name);
      // an entry naming a tool the server lacks (a typo) is refused, not ignored with its setting
      for (const name of Object.keys(choice ?? {}))
        if (!listed.includes(name)) throw new McpToolNotListedError(server.name, name, listed);
      for (const info of lists[i] ?? []) {
        const setting = choice ? (Object.hasOwn(choice, info.name) ? choice[info.name] : undefined) : true;
        if (setting === undefined) continue;
        // Providers accept letters, digits, _ and - in tool names; the server is still called by its own name.
        const name = `${server.name}_${info.name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
        if (Object.hasOwn(set, name)) throw new McpToolNameConflictError(name);
        set[name] = mcpTool(server, info, setting);
      }
    });
    this.cached = { base, lists, set };
    return set;
  }

  /**
   * The set last offered to the model with `base`, for running the calls it asked for: each call
   * reaches its server itself (restarting it if it died), so one server down fails only its own
   * calls. Built as `toolSet` does when nothing was offered yet (a run resumed at its tools).
   */
  /** The tool set as last listed (`base` alone before the servers listed their tools). */
  knownToolSet(base: ToolSet): ToolSet {
    return this.cached?.base === base ? this.cached.set : base;
  }

  async callableToolSet(base: ToolSet, signal?: AbortSignal): Promise<ToolSet> {
    return this.cached?.base === base ? this.cached.set : this.toolSet(base, signal);
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.close()));
  }
}

/**
 * One of a server's tools as the agent's. Unless the app's setting says otherwise, a tool
 * annotated destructive (and not read-only) needs approval, and its effect is `'read'` for
 * `readOnlyHint`, `'idempotent'` for `idempotentHint`, else as defineTool's (`'unsafe'` with
 * approval, else `'idempotent'`).
 */
function mcpTool(server: SupervisedMcpServer, info: McpToolInfo, setting: McpToolSetting): Tool {
  const hints = info.annotations ?? {};
  const chosen = setting === true ? {} : setting;
  const needsApproval =
    chosen.needsApproval ?? (hints.destructiveHint === true && hints.readOnlyHint !== true);
  const hinted = hints.readOnlyHint ? 'read' : hints.idempotentHint ? 'idempotent' : undefined;
  return {
    description: info.description ?? info.title,
    // The server validates the arguments against its schema and answers an error result if they do not fit.
    inputSchema: { jsonSchema: info.inputSchema },
    execute: async (input, { signal }) =>
      toolValue(server.name, info.name, await server.callTool(info.name, input, signal)),
    needsApproval,
    effect: chosen.effect ?? hinted ?? toolEffect({ needsApproval }),
    ...(chosen.reconcile !== undefined && { reconcile: mcpReconcile(server, chosen.reconcile) }),
  };
}

/** A tool's `reconcile` that calls the server's tool `name` and takes its value as the answer. */
function mcpReconcile(server: SupervisedMcpServer, name: string): ToolReconcile {
  return async (request, { signal }) => {
    const value = toolValue(server.name, name, await server.callTool(name, { ...request }, signal));
    // an answer in text is JSON; the reconcile's answer is checked where it is used (reconcile-call.ts)
    return (typeof value === 'string' ? JSON.parse(value) : value) as ReconcileOutcome;
  };
}

/** What the model is told a call returned: the structured content when given, else the text parts, else the parts as they are. */
function toolValue(server: string, tool: string, result: McpCallResult): unknown {
  const content = result.content ?? [];
  const text = content.every((part) => part.type === 'text')
    ? content.map((part) => part.text ?? '').join('\n')
    : null;
  if (result.isError) throw new McpToolError(server, tool, text ?? JSON.stringify(content));
  if (result.structuredContent !== undefined) return result.structuredContent;
  return text ?? content;
}
