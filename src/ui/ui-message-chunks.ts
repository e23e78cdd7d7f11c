import type { UIMessage } from '../messages/ui-parts';
import type { UIMessageChunk } from './ui-message';

/**
 * The chunks that rebuild an assistant message from its parts (the start of a replayed stream):
 * steps, text and tool calls, as the live stream sends them; reasoning and files, which the live
 * stream does not send, are left out.
 */
export function toUIMessageChunks(message: UIMessage): UIMessageChunk[] {
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
    } else if ('toolCallId' in part) {
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
        const reason = 'descriptor' in approval ? approval.descriptor?.reason : undefined;
        const why = reason ? { approvalDescriptor: { reason } } : {};
        chunks.push(
          Object.assign(
            { type: 'tool-approval-request' as const, approvalId: approval.id, toolCallId },
            signed,
            why,
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
