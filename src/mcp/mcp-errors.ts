import { AgentMachineError } from '../state/errors';

/** `@modelcontextprotocol/sdk` is not installed: it is an optional peer, needed only with `mcpServers`. */
export class McpDependencyMissingError extends AgentMachineError {
  static override get name(): string {
    return 'McpDependencyMissingError';
  }

  constructor(options?: { cause?: unknown }) {
    super(
      'MCP_DEPENDENCY_MISSING',
      'createAgent({ mcpServers }) needs the optional package "@modelcontextprotocol/sdk", which is not ' +
        'installed (or could not be loaded). Run `npm install @modelcontextprotocol/sdk`.',
      options,
    );
  }
}

/**
 * An MCP server failed: it could not start, it died (or became unreachable) during a call, it was
 * restarted too often, or the agent was closed. `server` names it; `code` says which:
 * `MCP_SERVER_START_FAILED`, `MCP_SERVER_EXITED`, `MCP_SERVER_GAVE_UP`, `MCP_SERVER_CLOSED`.
 */
export class McpServerError extends AgentMachineError {
  static override get name(): string {
    return 'McpServerError';
  }

  constructor(
    code: 'MCP_SERVER_START_FAILED' | 'MCP_SERVER_EXITED' | 'MCP_SERVER_GAVE_UP' | 'MCP_SERVER_CLOSED',
    readonly server: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** An MCP tool answered with an error result (`isError: true`): the message is the tool's own text. */
export class McpToolError extends AgentMachineError {
  static override get name(): string {
    return 'McpToolError';
  }

  constructor(
    readonly server: string,
    readonly tool: string,
    message: string,
  ) {
    super('MCP_TOOL_ERROR', `MCP tool '${tool}' of server '${server}' failed: ${message}`);
  }
}

/**
 * A server answered a call with a result that is not an MCP `CallToolResult` (the SDK's schema
 * refused it). The server is alive and kept: only that call fails. `issues` lists what is wrong.
 */
export class McpResultInvalidError extends AgentMachineError {
  static override get name(): string {
    return 'McpResultInvalidError';
  }

  constructor(
    readonly server: string,
    readonly tool: string,
    readonly issues: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(
      'MCP_RESULT_INVALID',
      `MCP server '${server}' answered the call to '${tool}' with a result that is not a CallToolResult ` +
        `(${issues.join('; ')}): the server's tool must be fixed; the server is kept`,
      options,
    );
  }
}

/** Two tools would be offered to the model under one name (`<server>_<tool>`, or a tool of the agent's own). */
export class McpToolNameConflictError extends AgentMachineError {
  static override get name(): string {
    return 'McpToolNameConflictError';
  }

  constructor(readonly toolName: string) {
    super(
      'MCP_TOOL_NAME_CONFLICT',
      `Two tools are named '${toolName}' (MCP tools are offered as <server>_<tool>): rename the agent's tool or the server's key in mcpServers`,
    );
  }
}

/**
 * A server's `tools` setting names a tool the server does not list (a typo, or a tool it dropped):
 * refused rather than ignored, so that a setting such as `needsApproval` is never silently lost.
 * `server` and `tool` name it; `listed` is what the server offers.
 */
export class McpToolNotListedError extends AgentMachineError {
  static override get name(): string {
    return 'McpToolNotListedError';
  }

  constructor(
    readonly server: string,
    readonly tool: string,
    readonly listed: readonly string[],
  ) {
    super(
      'MCP_TOOL_NOT_LISTED',
      `mcpServers.${server}.tools names '${tool}', a tool MCP server '${server}' does not list ` +
        `(it lists ${listed.length > 0 ? listed.map((name) => `'${name}'`).join(', ') : 'none'}): ` +
        'correct the name or remove the entry.',
    );
  }
}
