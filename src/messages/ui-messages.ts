import { AgentState } from '../state/agent-state';
import type { Message } from '../state/message';
import { approvalKey } from '../state/pending-approval';
import type { ToolExecution } from '../state/tool-execution';
import { approvalPart, nestedApprovalParts } from './approval-parts';
import {
  metadata,
  textPart,
  toolOutcome,
  type UIMessage,
  type UIMessagePart,
  type UIToolPart,
  uiPart,
} from './ui-parts';

/**
 * A stored conversation as the AI SDK's UI messages, for `useChat` or a page that loads a chat
 * (after a reload, say): each user message with its text, images and files, and one assistant
 * message per execution whose id is the execution's id (the id its UI message stream used), with a
 * `step-start` per step, the text, reasoning and files, and each tool call in the state it
 * reached; calls awaiting approval show as `approval-requested`. Tool outputs are the values of the
 * current execution's calls, and for earlier executions the text the model was given. Files become
 * URLs (`data:` URLs for inline data). System messages are left out. Messages no agent ran (no
 * execution id) group up to the next user message, each assistant message a step.
 *
 * @example
 * const stored = await store.load(chatId);
 * new Chat({ id: chatId, messages: stored ? toUIMessages(stored.state) : [] });
 */
export function toUIMessages(source: AgentState | readonly Message[]): UIMessage[] {
  const state = source instanceof AgentState ? source : undefined;
  const executions = new Map<string, ToolExecution>();
  for (const execution of state?.toolExecutions() ?? []) executions.set(execution.toolCallId(), execution);
  const approval = state?.approval() ?? null;
  const messages: UIMessage[] = [];
  // `key`: the execution id of the assistant message, or null for messages of no execution
  let assistant: { key: string | null; parts: UIMessagePart[] } | null = null;
  let stepId: unknown = null;

  (state ? state.messages() : (source as readonly Message[])).forEach((message, index) => {
    if (message.role === 'system') return;
    if (message.role === 'user') {
      assistant = null;
      const parts = message.parts ? message.parts.flatMap(uiPart) : [textPart(message.content)];
      messages.push({ id: `user-${index}`, role: 'user', parts });
      return;
    }
    const execution = message.metadata.execution_id;
    const key = execution === undefined || execution === null ? null : String(execution);
    if (!assistant || assistant.key !== key) {
      assistant = { key, parts: [] };
      stepId = null;
      messages.push({ id: key ?? `assistant-${index}`, role: 'assistant', parts: assistant.parts });
    }
    const parts = assistant.parts;
    const step = message.metadata.step_id;
    if (step !== stepId || (step === undefined && message.role === 'assistant')) {
      stepId = step;
      parts.push({ type: 'step-start' });
    }
    if (message.role === 'assistant') {
      if (message.parts) {
        for (const part of message.parts) {
          if (part.type !== 'tool-result') parts.push(...uiPart(part));
          else
            complete(parts, part.toolCallId, (tool) =>
              Object.assign(tool, toolOutcome(part.output, part.isError === true)),
            );
        }
      } else if (message.content !== '') parts.push(textPart(message.content));
      for (const call of message.toolCalls ?? []) {
        // Object.assign onto a fresh part, not a spread followed by keys (on Node 20 that gives
        // every part a hidden class of its own, and a long conversation has thousands)
        const tool = Object.assign(
          { type: `tool-${call.name}` as const, toolCallId: call.id, input: call.args },
          call.providerMetadata ? { callProviderMetadata: metadata(call.providerMetadata) } : {},
        );
        if (approval?.toolCallIds.includes(call.id)) {
          const signature = approval.signatures[approvalKey(undefined, call.id)];
          const reason = approval.interrupted?.includes(call.id) ? 'interrupted' : 'approval';
          parts.push(approvalPart(tool, approval.decisions[call.id], signature, reason));
        } else parts.push(Object.assign(tool, { state: 'input-available' as const }));
        // the calls waiting inside this subagent call, as parts of their own (`p1/t1`)
        if (state && approval?.children[call.id]) parts.push(...nestedApprovalParts(state, call));
      }
      return;
    }
    complete(parts, message.toolCallId, (tool) => withResult(tool, message, executions.get(tool.toolCallId)));
  });
  return messages;
}

/**
 * A stored conversation as the chat client's messages.
 *
 * @deprecated The same as `toUIMessages`, which now groups by execution and shows approval states
 * as the chat did, and keeps the user's images and files, which this one left out.
 */
export const toChatUIMessages: (state: AgentState) => UIMessage[] = toUIMessages;

/** Replaces the tool part of `toolCallId` among `parts` (if there) by `update` of a fresh copy of it. */
function complete(
  parts: UIMessagePart[],
  toolCallId: string | undefined,
  update: (tool: UIToolCallOf) => UIToolPart,
): void {
  const at = parts.findIndex((p) => 'toolCallId' in p && p.toolCallId === toolCallId);
  const part = parts[at] as UIToolPart | undefined;
  if (!part) return;
  const tool: UIToolCallOf = Object.assign(
    { type: part.type, toolCallId: part.toolCallId, input: part.input },
    part.providerExecuted ? { providerExecuted: true } : {},
    part.callProviderMetadata ? { callProviderMetadata: part.callProviderMetadata } : {},
  );
  parts[at] = update(tool);
}

type UIToolCallOf = Pick<
  UIToolPart,
  'type' | 'toolCallId' | 'input' | 'providerExecuted' | 'callProviderMetadata'
>;

function withResult(tool: UIToolCallOf, message: Message, execution: ToolExecution | undefined): UIToolPart {
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
