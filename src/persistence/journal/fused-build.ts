import { AgentState } from '../../state/agent-state';
import { setOwn } from '../../state/json-value';
import { adoptMessage, type Message } from '../../state/message';
import { type AgentStateJSON, FORMAT_VERSION } from '../../state/schemas';
import {
  isAgentStateDocument,
  isMessageDocument,
  isStepExecutionDocument,
} from '../../state/state-document-check';
import { StepExecution } from '../../state/step-execution';
import type { ContentResolver } from './content-resolver';

/**
 * The state a journal's records make, in one pass over their items: each message and each step
 * has its content put back, is checked (the zod-free check, item by item) and is built while it is
 * at hand, where a load otherwise went over the whole state three times (content, check, build)
 * and a fourth to build the document those walked. The rest of the document (head, settings, the
 * execution without its steps) is small and checked as before.
 *
 * Null when anything is not as a sound journal has it (an item the check does not accept, content
 * not held, a `$ref` past the conversation, anything thrown): the caller then takes the load's
 * whole path over the same items (journal-replay.ts), which refuses exactly as before, with the
 * same CorruptSessionError (the schema's path and message) or accepts what only the schema accepts.
 * That path may see items this one has touched: content put back stays put back (putting it back
 * again is a no-op), and a message this one froze is one the check accepted.
 */
export function buildFused(
  head: Readonly<Record<string, unknown>>,
  sections: Readonly<Record<string, unknown[]>>,
  steps: readonly unknown[],
  content: ContentResolver,
): AgentState | null {
  const execution = head.execution as Record<string, unknown> | null | undefined;
  // Steps without an execution to hold them: the whole path puts their content back (or refuses).
  if (!execution && steps.length > 0) return null;
  try {
    const built: Record<string, Message[]> = {};
    const unbuilt: Record<string, never[]> = {};
    for (const name of Object.keys(sections)) {
      const items = sections[name] as unknown[];
      const messages: Message[] = new Array(items.length);
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        content.message(item);
        if (!isMessageDocument(item)) return null;
        messages[i] = adoptMessage(item);
      }
      setOwn(built, name, messages);
      setOwn(unbuilt, name, []);
    }
    // The document without its messages and steps: `built` holds them.
    const document = {
      formatVersion: FORMAT_VERSION,
      agentId: head.agentId,
      parentAgentId: head.parentAgentId,
      createdAt: head.createdAt,
      updatedAt: head.updatedAt,
      executionCount: head.executionCount,
      llmConfig: head.llmConfig,
      context: {
        messages: unbuilt,
        metadata: head.metadata,
        systemPrompt: head.systemPrompt,
        responseFormat: head.responseFormat,
      },
      execution: execution ? { ...execution, stepExecutions: [] } : null,
      ...(typeof head.agentVersion === 'string' && { agentVersion: head.agentVersion }),
    };
    if (!isAgentStateDocument(document)) return null;
    return AgentState.fromBuiltParts(document as AgentStateJSON, {
      sections: built,
      steps: (inputs) => {
        const out: StepExecution[] = new Array(steps.length);
        for (let i = 0; i < steps.length; i++) {
          const item = steps[i];
          content.stepExecution(item);
          if (!isStepExecutionDocument(item)) throw NOT_FUSED;
          out[i] = StepExecution.fromParsed(
            item,
            inputs(item.step, `execution.stepExecutions[${i}].step.inputMessages`),
            adoptMessage,
          );
        }
        return out;
      },
    });
  } catch {
    // Not lost: the whole path goes over the same items and raises what is wrong with them.
    return null;
  }
}

/** Thrown out of the steps' build when one is not accepted as it is (caught above). */
const NOT_FUSED = new Error('not built in one pass');
