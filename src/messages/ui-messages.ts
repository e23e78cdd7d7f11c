import type { AgentState } from '../state/agent-state';
import { approvalKey } from '../state/approval';
import type { Message } from '../state/message';
import type { ToolExecution } from '../state/tool-execution';
import { approvalPart, nestedApprovalParts } from './chat-approvals';
import type { ChatUIMessage, ChatUIMessagePart, UIMessageChunk, UIToolPart } from './ui-message';

/**
 * A stored conversation as the chat client's messages, for a page that loads a chat (after a
 * reload, say; `toUIMessages` is the general conversion of any conversation, rich parts included): each user message, and one assistant message per execution whose id is the
 * execution's id (the id its UI message stream used), with a `step-start` per step, the text, and
 * each tool call in the state it reached; calls awaiting approval show as `approval-requested`.
 * Tool outputs are the values of the current execution's calls, and for earlier executions the
 * text the model was given. System messages are left out.
 *
 * @example
 * const stored = await store.load(chatId);
 * new Chat({ id: chatId, messages: stored ? toChatUIMessages(stored.state) : [] });
 */
export function toChatUIMessages(state: AgentState): ChatUIMessage[] {
  const executions = new Map<string, ToolExecution>();
  for (const execution of state.toolExecutions()) executions.set(execution.toolCallId(), execution);
  const approval = state.approval();
  const messages: ChatUIMessage[] = [];
  let assistant: { id: string; parts: ChatUIMessagePart[] } | null = null;
  let stepId: unknown = null;

  state.messages().forEach((message, index) => {
    if (message.role === 'system') return;
    if (message.role === 'user') {
      assistant = null;
      messages.push({ id: `user-${index}`, role: 'user', parts: [{ type: 'text', text: message.content }] });
      return;
    }
    const executionId = String(message.metadata.execution_id ?? `assistant-${index}`);
    if (assistant?.id !== executionId) {
      assistant = { id: executionId, parts: [] };
      stepId = null;
      messages.push({ id: executionId, role: 'assistant', parts: assistant.parts });
    }
    const parts = assistant.parts;
    if (message.metadata.step_id !== stepId) {
      stepId = message.metadata.step_id;
      parts.push({ type: 'step-start' });
    }
    if (message.role === 'assistant') {
      if (message.content !== '') parts.push({ type: 'text', text: message.content, state: 'done' });
      for (const call of message.toolCalls ?? []) {
        // Object.assign onto a fresh part, not a spread followed by keys (on Node 20 that gives
        // every part a hidden class of its own, and a long conversation has thousands)
        const tool = { type: `tool-${call.name}` as const, toolCallId: call.id, input: call.args };
        if (approval?.toolCallIds.includes(call.id)) {
          const signature = approval.signatures[approvalKey(undefined, call.id)];
          parts.push(approvalPart(tool, approval.decisions[call.id], signature));
        } else parts.push(Object.assign(tool, { state: 'input-available' as const }));
        // the calls waiting inside this subagent call, as parts of their own (`p1/t1`)
        if (approval?.children[call.id]) parts.push(...nestedApprovalParts(state, call));
      }
      return;
    }
    const at = parts.findIndex((p) => 'toolCallId' in p && p.toolCallId === message.toolCallId);
    const part = parts[at] as UIToolPart | undefined;
    if (part) parts[at] = withResult(part, message, executions.get(part.toolCallId));
  });
  return messages;
}

function withResult(part: UIToolPart, message: Message, execution: ToolExecution | undefined): UIToolPart {
  const tool = { type: part.type, toolCallId: part.toolCallId, input: part.input };
  // A call a person rejected was blocked: once its step ran, its part is an error that says so.
  if (message.isError) {
    const errorText = execution?.error()?.message ?? message.content.replace(/^Error: /, '');
    return Object.assign(tool, { state: 'output-error' as const, errorText });
  }
  return Object.assign(tool, {
    state: 'output-available' as const,
    output: execution ? execution.value() : message.content,
  });
}

/** The chunks that rebuild an assistant message from its parts (the start of a replayed stream). */
export function toUIMessageChunks(message: ChatUIMessage): UIMessageChunk[] {
  const chunks: UIMessageChunk[] = [];
  let steps = 0;
  message.parts.forEach((part, index) => {
    if (part.type === 'step-start') {
      if (steps++ > 0) chunks.push({ type: 'finish-step' });
      chunks.push({ type: 'start-step' });
    } else if (part.type === 'text') {
      const id = `${message.id}:${index}`;
      chunks.push(
        { type: 'text-start', id },
        { type: 'text-delta', id, delta: part.text },
        { type: 'text-end', id },
      );
    } else {
      const { toolCallId } = part;
      const approval = 'approval' in part ? part.approval : undefined;
      chunks.push({
        type: 'tool-input-available',
        toolCallId,
        toolName: part.type.slice(5),
        input: part.input,
      });
      // An answered approval is rebuilt as asked: AI SDK 6's client has no chunk for the answer
      // (`tool-approval-response` is AI SDK 7's), and the call's output or denial follows.
      if (approval) {
        const signed = approval.signature === undefined ? {} : { signature: approval.signature };
        chunks.push(
          Object.assign(
            { type: 'tool-approval-request' as const, approvalId: approval.id, toolCallId },
            signed,
          ),
        );
      }
      if (part.state === 'output-available')
        chunks.push({ type: 'tool-output-available', toolCallId, output: part.output });
      if (part.state === 'output-error')
        chunks.push({ type: 'tool-output-error', toolCallId, errorText: part.errorText });
    }
  });
  return chunks;
}
