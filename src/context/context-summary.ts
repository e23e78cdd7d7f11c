import type { AgentState } from '../state/agent-state';
import { AgentStopError } from '../state/agent-stop-error';
import { AgentMachineError, InvalidArgumentError } from '../state/errors';
import { Message } from '../state/message';
import { Usage } from '../state/usage';
import { promptUnits, taskOf } from './prompt-units';
import { charsForTokens, estimateMessageTokens, estimateTextTokens } from './token-estimate';

/** The state's section the summary is kept in (one message: the latest summary). */
export const SUMMARY_SECTION = 'summary';

/**
 * One summarization call: the instructions and the text to summarize in, the summary and the
 * call's usage out. The model driver makes it from a model (`doGenerate`, no tools, with retries).
 */
export type Summarizer = (
  request: { readonly instructions: string; readonly text: string },
  signal: AbortSignal,
) => Promise<{ readonly text: string; readonly usage: Usage }>;

/**
 * Where the summary stands in the conversation: it replaces the messages of the default section
 * before `through`, except those at the indexes in `kept` (the task of the execution that made it).
 */
interface SummaryCover {
  readonly through: number;
  readonly kept: readonly number[];
}

/** The summary kept in the state, if any. */
export function summaryOf(state: AgentState): Message | null {
  const section = state.store().section(SUMMARY_SECTION);
  return section[section.length - 1] ?? null;
}

function coverOf(summary: Message): SummaryCover {
  const through = summary.metadata.summary_through;
  const kept = summary.metadata.summary_kept;
  return {
    through: typeof through === 'number' ? through : 0,
    kept: Array.isArray(kept) ? kept.filter((i): i is number => typeof i === 'number') : [],
  };
}

/** Each conversation message's index in the state's default section. */
export function conversationIndexes(state: AgentState): Map<Message, number> {
  const indexes = new Map<Message, number>();
  let i = 0;
  for (const message of state.messageList()) indexes.set(message, i++);
  return indexes;
}

/**
 * The compiled messages with the summary in place of what it covers: it goes where the first
 * message after its cover is. Messages the compiler made itself (not in the conversation) stay.
 */
export function withSummary(
  messages: readonly Message[],
  summary: Message | null,
  indexes: Map<Message, number>,
): Message[] {
  if (!summary) return [...messages];
  const cover = coverOf(summary);
  const kept = new Set(cover.kept);
  const out: Message[] = [];
  let placed = false;
  for (const message of messages) {
    const index = indexes.get(message);
    if (index !== undefined && index < cover.through && !kept.has(index)) continue;
    if (!placed && (index === undefined || index >= cover.through)) {
      out.push(summary);
      placed = true;
    }
    out.push(message);
  }
  if (!placed) out.push(summary);
  return out;
}

export interface Folded {
  readonly state: AgentState;
  readonly removed: number;
  readonly usage: Usage;
}

/**
 * Folds the oldest steps of `prompt` (the compiled messages with the current summary in place)
 * into a new summary until the estimate is within `targetEstimate`, counting `summaryEstimate` for
 * the new summary. Pinned units and messages not from the conversation are never folded. The text
 * is summarized in chunks of at most `chunkEstimate`, each call given the summary so far.
 */
export async function foldIntoSummary(
  state: AgentState,
  prompt: readonly Message[],
  indexes: Map<Message, number>,
  budget: {
    readonly targetEstimate: number;
    readonly summaryEstimate: number;
    readonly chunkEstimate: number;
  },
  summarize: Summarizer,
  signal: AbortSignal,
): Promise<Folded | null> {
  const previous = summaryOf(state);
  let estimate = budget.summaryEstimate;
  for (const message of prompt) if (message !== previous) estimate += estimateMessageTokens(message);
  const folded: Message[] = [];
  for (const unit of promptUnits(prompt, taskOf(state), state.executionId())) {
    if (estimate <= budget.targetEstimate) break;
    if (unit.pinned || unit.messages.some((m) => m === previous || !indexes.has(m))) continue;
    folded.push(...unit.messages);
    for (const message of unit.messages) estimate -= estimateMessageTokens(message);
  }
  if (folded.length === 0) return null;
  let through = 0;
  for (const message of folded) through = Math.max(through, (indexes.get(message) as number) + 1);
  const foldedSet = new Set(folded);
  const kept: number[] = [];
  for (const message of prompt) {
    const index = indexes.get(message);
    if (index !== undefined && index < through && !foldedSet.has(message)) kept.push(index);
  }

  let text = previous?.content.replace(SUMMARY_PREFIX, '') ?? '';
  let usage = Usage.zero;
  for (const chunk of chunks(folded.map(transcriptLine), budget.chunkEstimate)) {
    const request = text ? `Summary so far:\n${text}\n\nConversation to add:\n${chunk}` : chunk;
    let answer: Awaited<ReturnType<Summarizer>>;
    try {
      answer = await summarize({ instructions: INSTRUCTIONS, text: request }, signal);
    } catch (error) {
      // the budget ledger refused the call, or cannot bound it: the run stops as at a step's call
      if (AgentStopError.isInstance(error) || InvalidArgumentError.isInstance(error)) throw error;
      throw new SummarizerFailedError(error, usage);
    }
    text = answer.text.trim();
    usage = Usage.add(usage, answer.usage);
  }
  const summary = Message.of({
    role: 'user',
    content: `${SUMMARY_PREFIX}${text}`,
    metadata: { summary_through: through, summary_kept: kept },
  });
  const store = state.store().withSectionReplaced([summary], SUMMARY_SECTION);
  return { state: state.withContext(state.context().withStore(store)), removed: folded.length, usage };
}

/** The summarizer threw; `usage` is that of its calls before (they were made and paid for). */
export class SummarizerFailedError extends AgentMachineError {
  static override get name(): string {
    return 'SummarizerFailedError';
  }

  constructor(
    cause: unknown,
    readonly usage: Usage,
  ) {
    super(
      'SUMMARIZER_FAILED',
      `The summarizer threw: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

const SUMMARY_PREFIX = 'Summary of the earlier part of this conversation:\n';
const INSTRUCTIONS =
  'You compress the history of an agent run so the agent can go on without it. Write a concise ' +
  'summary of the conversation you are given (and of the summary so far, if any): the user requests, ' +
  'what was done, tool results that still matter (facts, numbers, names, file paths), decisions and ' +
  'open questions. Plain text, no preamble, at most 300 words.';

function transcriptLine(message: Message): string {
  const parts: string[] = [];
  if (message.role === 'tool') {
    parts.push(
      `[${message.toolName ?? 'tool'} result${message.isError ? ' (error)' : ''}] ${message.content}`,
    );
  } else if (message.content) {
    parts.push(`[${message.role}] ${message.content}`);
  }
  for (const call of message.toolCalls ?? [])
    parts.push(`[assistant called ${call.name}] ${JSON.stringify(call.args ?? null)}`);
  return parts.join('\n');
}

/** Lines joined into chunks within `maxEstimate`; a line longer than a chunk is cut to fit. */
function chunks(lines: readonly string[], maxEstimate: number): string[] {
  const maxChars = charsForTokens(Math.max(1, maxEstimate));
  const out: string[] = [];
  let current = '';
  for (const full of lines) {
    const line = full.length > maxChars ? `${full.slice(0, maxChars - 20)} [cut]` : full;
    if (current && estimateTextTokens(current) + estimateTextTokens(line) > maxEstimate) {
      out.push(current);
      current = '';
    }
    current = current ? `${current}\n${line}` : line;
  }
  if (current) out.push(current);
  return out;
}
