/**
 * Renaming tools in a saved state (an agent upgrade: `migrations: [{ tools: { old: 'new' } }]`): every
 * call of a renamed tool, in the whole tree of agents (a waiting subagent's state, a finished
 * call's child state), is named anew where a state keeps a tool's name: the model's calls, the
 * calls of the tool executions, the assistant and tool messages and their parts. Ids, inputs,
 * results and signatures are left as they are, so a pending approval keeps its id and signature.
 */
import { isRecord } from './json-value';

/** Old tool name to new. */
export type ToolRenames = ReadonlyMap<string, string>;

/**
 * Renames, in place, the tool calls of an AgentState's JSON document (a copy of its own: a fresh
 * `JSON.parse`), and returns how many names it changed.
 */
export function renameToolsInDocument(document: unknown, renames: ToolRenames): number {
  return renames.size === 0 ? 0 : new Renamer(renames).state(document);
}

class Renamer {
  constructor(private readonly renames: ToolRenames) {}

  state(document: unknown): number {
    if (!isRecord(document)) return 0;
    let changed = 0;
    const sections = isRecord(document.context) ? document.context.messages : undefined;
    if (isRecord(sections))
      for (const name of Object.keys(sections)) changed += this.messages(sections[name]);
    const execution = document.execution;
    if (!isRecord(execution)) return changed;
    if (Array.isArray(execution.stepExecutions))
      for (const item of execution.stepExecutions) if (isRecord(item)) changed += this.step(item.step);
    const approval = execution.awaitingApproval;
    if (isRecord(approval)) {
      changed += this.step(approval.step);
      if (isRecord(approval.children))
        for (const id of Object.keys(approval.children)) changed += this.state(approval.children[id]);
    }
    return changed;
  }

  private step(step: unknown): number {
    if (!isRecord(step)) return 0;
    let changed = this.messages(step.inputMessages) + this.messages(step.outputMessages);
    if (isRecord(step.inferenceResponse)) changed += this.calls(step.inferenceResponse.toolCalls);
    if (Array.isArray(step.toolExecutions))
      for (const execution of step.toolExecutions) {
        if (!isRecord(execution)) continue;
        changed += this.call(execution.toolCall);
        changed += this.state(execution.childState);
      }
    return changed;
  }

  private messages(list: unknown): number {
    if (!Array.isArray(list)) return 0;
    let changed = 0;
    for (const message of list) {
      // a `{ $ref }` into the conversation is renamed there
      if (!isRecord(message) || '$ref' in message) continue;
      changed += this.calls(message.toolCalls) + this.named(message, 'toolName');
      if (Array.isArray(message.parts))
        for (const part of message.parts)
          if (isRecord(part) && (part.type === 'tool-call' || part.type === 'tool-result'))
            changed += this.named(part, 'toolName');
    }
    return changed;
  }

  private calls(list: unknown): number {
    if (!Array.isArray(list)) return 0;
    let changed = 0;
    for (const call of list) changed += this.call(call);
    return changed;
  }

  private call(call: unknown): number {
    return isRecord(call) ? this.named(call, 'name') : 0;
  }

  private named(holder: Record<string, unknown>, key: string): number {
    const name = holder[key];
    if (typeof name !== 'string') return 0;
    const renamed = this.renames.get(name);
    if (renamed === undefined) return 0;
    holder[key] = renamed;
    return 1;
  }
}
