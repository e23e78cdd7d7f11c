import { TOOL_EFFECTS, type Tool, type ToolEffect } from '../tools/define-tool';

/** A server run as a child process, speaking MCP over its stdin and stdout. */
export interface McpStdioServerConfig {
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the SDK's default environment (PATH, HOME, ...), not the whole of `process.env`. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServerConfig {
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** How an agent supervises a server: restarts after it died, with exponential backoff. */
export interface McpSupervision {
  /** Restarts in a row (without a successful call between) before the server is given up. Default 3. */
  readonly maxRestarts?: number;
  /** Wait before the first restart in ms, doubled for each further one (at most 30 s). Default 500. */
  readonly restartDelayMs?: number;
}

/**
 * How one of a server's tools is offered: `true` as the server describes it, or with the app's own
 * approval rule and effect (each unset one taken from the server's annotations).
 */
export type McpToolSetting =
  | true
  | {
      /** As a tool's `needsApproval`. Default: true for a tool annotated `destructiveHint: true`. */
      readonly needsApproval?: Tool['needsApproval'];
      /** As a tool's `effect`. Default: from `readOnlyHint` / `idempotentHint`, else as defineTool's. */
      readonly effect?: ToolEffect;
      /**
       * For an `'unsafe'` tool: the name of a tool of the same server that is its `reconcile`. It is
       * called with `{ input, idempotencyKey, toolCallId }` and answers `{ status: 'done', result }`,
       * `{ status: 'not-done' }` or `{ status: 'unknown' }` (as structured content, or as JSON text).
       */
      readonly reconcile?: string;
    };

/** Which of a server's tools are offered to the model. */
export interface McpToolChoice {
  /**
   * Keyed by the server's own tool name; a tool not listed is not offered. Without `tools`, every
   * tool the server lists is offered.
   */
  readonly tools?: Readonly<Record<string, McpToolSetting>>;
}

export type McpServerConfig = (McpStdioServerConfig | McpHttpServerConfig) & McpSupervision & McpToolChoice;

/** `createAgent({ mcpServers })`: servers by name; their tools are offered as `<name>_<tool>`. */
export type McpServersConfig = Readonly<Record<string, McpServerConfig>>;

export const MCP_SERVER_NAME = /^[A-Za-z0-9_-]+$/;

/**
 * What is wrong with a server's configuration, or null if nothing.
 *
 * @example
 * mcpConfigProblem({ url: 'ftp://x' }); // 'url must be an http:// or https:// URL'
 */
export function mcpConfigProblem(config: McpServerConfig): string | null {
  if (typeof config !== 'object' || config === null) return 'must be an object: { command, args } or { url }';
  const stdio = 'command' in config && config.command !== undefined;
  const http = 'url' in config && config.url !== undefined;
  if (stdio === http)
    return 'needs exactly one of command (a stdio server) or url (a Streamable HTTP server)';
  if (stdio && (typeof config.command !== 'string' || config.command === ''))
    return 'command must be a non-empty string';
  if (http && !/^https?:\/\//.test(String(config.url))) return 'url must be an http:// or https:// URL';
  const { maxRestarts, restartDelayMs } = config;
  if (maxRestarts !== undefined && (!Number.isInteger(maxRestarts) || maxRestarts < 0))
    return `maxRestarts must be a whole number >= 0, got ${maxRestarts}`;
  if (restartDelayMs !== undefined && (!Number.isFinite(restartDelayMs) || restartDelayMs < 0))
    return `restartDelayMs must be a number >= 0, got ${restartDelayMs}`;
  return config.tools === undefined ? null : toolsProblem(config.tools);
}

const SETTING_KEYS = ['needsApproval', 'effect', 'reconcile'];

function toolsProblem(tools: unknown): string | null {
  if (typeof tools !== 'object' || tools === null || Array.isArray(tools))
    return "tools must be an object keyed by the server's tool names";
  for (const [name, setting] of Object.entries(tools)) {
    const at = `tools.${name}`;
    if (setting === true) continue;
    if (typeof setting !== 'object' || setting === null || Array.isArray(setting))
      return `${at} must be true or { needsApproval, effect }, got ${JSON.stringify(setting)}`;
    const unknown = Object.keys(setting).find((key) => !SETTING_KEYS.includes(key));
    if (unknown !== undefined)
      return `${at}.${unknown} is not a setting: use needsApproval or effect, or reconcile`;
    const { needsApproval, effect, reconcile } = setting as Record<string, unknown>;
    if (reconcile !== undefined && (typeof reconcile !== 'string' || reconcile === ''))
      return `${at}.reconcile must name a tool of the same server, got ${JSON.stringify(reconcile)}`;
    if (reconcile !== undefined && effect !== 'unsafe')
      return `${at}.reconcile needs effect: 'unsafe' (only an unsafe call is reconciled after a crash)`;
    if (
      needsApproval !== undefined &&
      typeof needsApproval !== 'boolean' &&
      typeof needsApproval !== 'function'
    )
      return `${at}.needsApproval must be a boolean or a function, got ${JSON.stringify(needsApproval)}`;
    if (effect !== undefined && !TOOL_EFFECTS.includes(effect as ToolEffect))
      return `${at}.effect must be 'read', 'idempotent' or 'unsafe', got ${JSON.stringify(effect)}`;
  }
  return null;
}
