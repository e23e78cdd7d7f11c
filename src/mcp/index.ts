/** `agent-machine/mcp`: tools from Model Context Protocol servers (optional peer `@modelcontextprotocol/sdk`). */
export type { McpCallResult, McpConnection, McpToolAnnotations, McpToolInfo } from './mcp-connection';
export {
  McpDependencyMissingError,
  McpServerError,
  McpToolError,
  McpToolNameConflictError,
  McpToolNotListedError,
} from './mcp-errors';
export type {
  McpHttpServerConfig,
  McpServerConfig,
  McpServersConfig,
  McpStdioServerConfig,
  McpSupervision,
  McpToolChoice,
  McpToolSetting,
} from './mcp-server-config';
export { mcpServerMachine } from './mcp-server-machine';
export { McpServers } from './mcp-servers';
export { SupervisedMcpServer } from './supervised-mcp-server';
