import type { ApprovalRequest } from './approval';
import { decodeNestedState } from './nested-state';
import type { AgentStateJSON, AwaitingApprovalJSON } from './schemas';

/**
 * An approval's fields in the serialized form (beside its step and the step's start): the time it
 * was requested, the calls, the decisions, and, only when there are some, the waiting children's
 * states and the signatures. The state's `toJSON()` and the checkpoint journal both write it.
 */
export function encodeApprovalFields(approval: ApprovalRequest) {
  return {
    requestedAt: new Date(approval.requestedAt).toISOString(),
    toolCallIds: approval.toolCallIds,
    decisions: approval.decisions,
    ...(Object.keys(approval.children).length > 0 && {
      children: Object.fromEntries(
        Object.entries(approval.children).map(([id, child]): [string, unknown] => [id, child.toJSON()]),
      ),
    }),
    ...(Object.keys(approval.signatures).length > 0 && { signatures: approval.signatures }),
    ...(approval.interrupted?.length && { interrupted: approval.interrupted }),
    ...(approval.started !== undefined && { started: approval.started }),
  };
}

/** An approval of a validated document, from the fields `encodeApprovalFields` writes. */
export function decodeApprovalFields(json: AwaitingApprovalJSON): ApprovalRequest {
  return Object.freeze({
    requestedAt: Date.parse(json.requestedAt),
    toolCallIds: Object.freeze([...json.toolCallIds]),
    decisions: Object.freeze({ ...json.decisions }) as ApprovalRequest['decisions'],
    children: Object.freeze(
      Object.fromEntries(
        // validated with this document: the schema checks each child as a whole AgentState
        Object.entries(json.children ?? {}).map(([id, child]) => [
          id,
          decodeNestedState(child as AgentStateJSON),
        ]),
      ),
    ),
    signatures: Object.freeze({ ...json.signatures }),
    ...(json.interrupted?.length && { interrupted: Object.freeze([...json.interrupted]) }),
    ...(json.started !== undefined && { started: Object.freeze([...json.started]) }),
  });
}
