import type { AgentState } from '../../state/agent-state';
import { isRecord } from '../../state/json-value';
import { FORMAT_VERSION } from '../../state/schemas';
import { CorruptSessionError } from '../errors';
import { decodeStoredState, type StoredAt } from '../session-document';
import { HEAD_FIELDS, type JournalRecord } from './journal-record';
import { type JournalTip, tipOf } from './journal-writer';

/** A state read from the journal, and the tip a writer continues from. */
export interface Replayed {
  readonly state: AgentState;
  readonly version: number;
  readonly tip: JournalTip;
}

/**
 * The state after `records` (the newest snapshot, then the deltas after it, in order): the
 * snapshot's head and sequences, each delta's changed head fields and appended items, then every
 * content reference resolved. Raises CorruptSessionError when the records do not follow each
 * other, refer to content they do not hold, or do not make a valid state.
 */
export function replay(records: readonly JournalRecord[], at: StoredAt): Replayed {
  const first = records[0];
  if (first?.kind !== 'snapshot')
    throw new CorruptSessionError(at.sessionId, 'the journal has no snapshot to start from', at.location);
  // Without prototypes: a `__proto__` key in a damaged record stays a plain key (and fails validation).
  const head: Record<string, unknown> = Object.create(null);
  const sections: Record<string, unknown[]> = Object.create(null);
  let steps: unknown[] = [];
  const content = new Map<string, string>();
  let previous = first.v - 1;
  for (const record of records) {
    const refuse = (problem: string) => {
      throw new CorruptSessionError(at.sessionId, `journal record ${record.v} ${problem}`, at.location);
    };
    if (record.v !== previous + 1) refuse(`follows record ${previous} (a record is missing)`);
    if (record !== first && record.kind === 'snapshot')
      refuse(`is a snapshot after record ${first.v}, where the newest snapshot was looked for`);
    if (record.gen !== first.gen)
      refuse(`has generation ${record.gen}, not that of its snapshot (record ${first.v}, ${first.gen})`);
    previous = record.v;
    for (const key of Object.keys(record.head))
      if (!HEAD_FIELDS.has(key)) refuse(`has an unknown head field ${JSON.stringify(key)}`);
    if (record === first)
      for (const key of HEAD_FIELDS)
        if (!(key in record.head)) refuse(`is a snapshot without head field "${key}"`);
    for (const [key, value] of Object.entries(record.head)) head[key] = value;
    for (const [name, patch] of Object.entries(record.sections ?? {}))
      sections[name] = applyPatch(
        sections[name] ?? [],
        patch.from,
        patch.items,
        `sections.${name}`,
        record,
        at,
      );
    if (record.steps) steps = applyPatch(steps, record.steps.from, record.steps.items, 'steps', record, at);
    for (const [hash, text] of Object.entries(record.content ?? {})) content.set(hash, text);
    if (steps.length !== record.step) refuse(`says ${record.step} steps, but its steps make ${steps.length}`);
  }
  const last = records[records.length - 1] as JournalRecord;
  const resolve = new ContentResolver(content, at);
  const execution = head.execution as Record<string, unknown> | null | undefined;
  const document = {
    formatVersion: FORMAT_VERSION,
    agentId: head.agentId,
    parentAgentId: head.parentAgentId,
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
    executionCount: head.executionCount,
    llmConfig: head.llmConfig,
    context: {
      messages: Object.fromEntries(
        Object.entries(sections).map(([name, items]) => [name, items.map((m) => resolve.message(m))]),
      ),
      metadata: head.metadata,
      systemPrompt: head.systemPrompt,
      responseFormat: head.responseFormat,
    },
    execution: execution
      ? { ...execution, stepExecutions: steps.map((s) => resolve.stepExecution(s)) }
      : null,
  };
  const state = decodeStoredState(document, at, true);
  return {
    state,
    version: last.v,
    tip: tipOf(state, last.v, last.gen, last.acct, new Set(content.keys())),
  };
}

function applyPatch(
  items: unknown[],
  from: number,
  added: readonly unknown[],
  what: string,
  record: JournalRecord,
  at: StoredAt,
): unknown[] {
  // A writer appends after the last item, or rewrites from the start: any other start would drop
  // items (or leave a gap) that no save asked for.
  if (from !== 0 && from !== items.length)
    throw new CorruptSessionError(
      at.sessionId,
      `journal record ${record.v} appends to ${what} after item ${from}, but there are ${items.length}`,
      at.location,
    );
  items.length = from;
  for (const item of added) items.push(item);
  return items;
}

/** Puts stored content back where a record refers to it. */
class ContentResolver {
  constructor(
    private readonly content: ReadonlyMap<string, string>,
    private readonly at: StoredAt,
  ) {}

  text(hash: unknown): string {
    const text = typeof hash === 'string' ? this.content.get(hash) : undefined;
    if (text === undefined)
      throw new CorruptSessionError(
        this.at.sessionId,
        `the journal refers to content ${JSON.stringify(hash)} that it does not hold`,
        this.at.location,
      );
    return text;
  }

  message(message: unknown): unknown {
    if (!isRecord(message) || !isRecord(message.content)) return message;
    return { ...message, content: this.text(message.content.$c) };
  }

  toolExecution(execution: unknown): unknown {
    if (!isRecord(execution) || !isRecord(execution.valueRef)) return execution;
    const { valueRef, ...rest } = execution;
    if (typeof valueRef.text === 'string') return { ...rest, value: this.text(valueRef.text) };
    return { ...rest, value: JSON.parse(this.text(valueRef.json)) };
  }

  stepExecution(item: unknown): unknown {
    if (!isRecord(item) || !isRecord(item.step)) return item;
    const step = item.step;
    const list = (value: unknown, map: (x: unknown) => unknown) =>
      Array.isArray(value) ? value.map(map) : value;
    return {
      ...item,
      step: {
        ...step,
        inputMessages: list(step.inputMessages, (m) => this.message(m)),
        outputMessages: list(step.outputMessages, (m) => this.message(m)),
        toolExecutions: list(step.toolExecutions, (e) => this.toolExecution(e)),
      },
    };
  }
}
