/**
 * Names the main entry exported before they moved to `agent-machine/mcp`
 * (MCP servers): deprecated there for one release, each its new home's own value.
 */
import * as mcp from '../mcp/index';

/** @deprecated Import from `agent-machine/mcp`. */
export type McpCallResult = mcp.McpCallResult;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpConnection = mcp.McpConnection;
/** @deprecated Import from `agent-machine/mcp`. */
export const McpDependencyMissingError = mcp.McpDependencyMissingError;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpDependencyMissingError = mcp.McpDependencyMissingError;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpHttpServerConfig = mcp.McpHttpServerConfig;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpServerConfig = mcp.McpServerConfig;
/** @deprecated Import from `agent-machine/mcp`. */
export const McpServerError = mcp.McpServerError;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpServerError = mcp.McpServerError;
/** @deprecated Import from `agent-machine/mcp`. */
export const mcpServerMachine = mcp.mcpServerMachine;
/** @deprecated Import from `agent-machine/mcp`. */
export const McpServers = mcp.McpServers;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpServers = mcp.McpServers;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpServersConfig = mcp.McpServersConfig;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpStdioServerConfig = mcp.McpStdioServerConfig;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpSupervision = mcp.McpSupervision;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpToolAnnotations = mcp.McpToolAnnotations;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpToolChoice = mcp.McpToolChoice;
/** @deprecated Import from `agent-machine/mcp`. */
export const McpToolError = mcp.McpToolError;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpToolError = mcp.McpToolError;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpToolInfo = mcp.McpToolInfo;
/** @deprecated Import from `agent-machine/mcp`. */
export const McpToolNameConflictError = mcp.McpToolNameConflictError;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpToolNameConflictError = mcp.McpToolNameConflictError;
/** @deprecated Import from `agent-machine/mcp`. */
export const McpToolNotListedError = mcp.McpToolNotListedError;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpToolNotListedError = mcp.McpToolNotListedError;
/** @deprecated Import from `agent-machine/mcp`. */
export type McpToolSetting = mcp.McpToolSetting;
/** @deprecated Import from `agent-machine/mcp`. */
export const SupervisedMcpServer = mcp.SupervisedMcpServer;
/** @deprecated Import from `agent-machine/mcp`. */
export type SupervisedMcpServer = mcp.SupervisedMcpServer;
