/**
 * The `driver` worker: one model call per request, through the agent's driver, with the tools it
 * offers (its own, an MCP server's, its subagents bound to the agent), its reports and its ledger.
 */
import type { Driver, DriverContext } from '../drivers/driver';
import type { BudgetLedger, LedgerRun } from '../ledger/budget-ledger';
import type { McpServers } from '../mcp/mcp-servers';
import { admitInference } from '../state/inference-admission';
import type { ToolSet } from '../tools/define-tool';
import { signedBy } from './approval-signature';
import { requestApprovals } from './approvals';
import { reporterFor } from './report-delivery';
import { stepWorker } from './step-worker';
import type { SubagentCalls } from './subagent-calls';

export interface DriverWorkerParts {
  readonly driver: Driver;
  readonly tools: ToolSet;
  readonly mcp: McpServers | undefined;
  readonly subagents: SubagentCalls;
  readonly ledger: BudgetLedger | undefined;
  /** Whether any tool may need approval: the model's answer is then checked for calls to ask about. */
  readonly needsApprovals: boolean;
  /** The root's `approvalSecret`: calls waiting for a decision are signed. */
  readonly approvalSecret: string | undefined;
}

export function driverWorker(parts: DriverWorkerParts) {
  const { driver, tools, mcp, subagents, ledger, needsApprovals, approvalSecret } = parts;
  return stepWorker('driver', async ({ state }, worker, request) => {
    // A plain object (an accessor would make it a slow dictionary-mode one): model calls take
    // the signal anyway, so it is made here.
    const offered = mcp ? await mcp.toolSet(tools, request.signal) : tools;
    const context: DriverContext = {
      signal: request.signal,
      tools: subagents.toolsFor(worker, offered),
      report: reporterFor(worker),
      run: worker.agent,
      ledger: ledger && ledgerRun(ledger, worker.ledgerScopes),
    };
    const answered = admitInference(await driver.infer(state, context), driver.name);
    if (!needsApprovals) return answered;
    return signedBy(approvalSecret, await requestApprovals(answered, offered), worker.sessionId);
  });
}

/** The run's ledger and the scopes it charges; none without scopes. */
const ledgerRun = (ledger: BudgetLedger, scopes: readonly string[]): LedgerRun | undefined =>
  scopes.length === 0 ? undefined : { ledger, scopes };
