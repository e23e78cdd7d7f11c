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

export type McpServerConfig = (McpStdioServerConfig | McpHttpServerConfig) & McpSupervision;

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
  return null;
}
