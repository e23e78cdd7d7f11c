import type { Message } from '../state/message';

/**
 * Messages in the shape of the GenAI semantic conventions' `gen_ai.input.messages` /
 * `gen_ai.output.messages` (role and parts), as JSON text: span attributes hold no objects.
 *
 * @example
 * genAiMessages([Message.user('2 + 3?')]); // '[{"role":"user","parts":[{"type":"text","content":"2 + 3?"}]}]'
 */
export function genAiMessages(messages: readonly Message[], finishReason?: string | null): string {
  return JSON.stringify(
    messages.map((m) => ({
      role: m.role,
      parts: parts(m),
      ...(finishReason && { finish_reason: finishReason }),
    })),
  );
}

function parts(m: Message): object[] {
  if (m.role === 'tool') return [{ type: 'tool_call_response', id: m.toolCallId ?? '', response: m.content }];
  const list: object[] = m.content ? [{ type: 'text', content: m.content }] : [];
  for (const call of m.toolCalls ?? [])
    list.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.args });
  return list;
}
