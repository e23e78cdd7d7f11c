import type { AgentState } from '../../state/agent-state';
import { isRecord, setOwn } from '../../state/json-value';
import { FORMAT_VERSION } from '../../state/schemas';
import { CorruptSessionError } from '../errors';
import { decodeStoredState, type StoredAt } from '../session-document';
import { HEAD_FIELDS, type JournalRecord, OPTIONAL_HEAD_FIELDS, type SequencePatch } from './journal-record';
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
 * other, refer to content they do not hold, or do not make a valid state. The records are the
 * caller's fresh parse, used up here: their items become the state's document as they are, content
 * put back in place (only a tool execution whose value comes back is a new object).
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
    if (record.v !== previous + 1) refuse(record, `follows record ${previous} (a record is missing)`, at);
    if (record !== first && record.kind === 'snapshot')
      refuse(record, `is a snapshot after record ${first.v}, where the newest snapshot was looked for`, at);
    if (record.gen !== first.gen)
      refuse(
        record,
        `has generation ${record.gen}, not that of its snapshot (record ${first.v}, ${first.gen})`,
        at,
      );
    previous = record.v;
    for (const key of Object.keys(record.head))
      if (!HEAD_FIELDS.has(key)) refuse(record, `has an unknown head field ${JSON.stringify(key)}`, at);
    if (record === first)
      for (const key of HEAD_FIELDS)
        if (!(key in record.head) && !OPTIONAL_HEAD_FIELDS.has(key))
          refuse(record, `is a snapshot without head field "${key}"`, at);
    for (const key of Object.keys(record.head)) head[key] = record.head[key];
    if (record.sections)
      for (const name of Object.keys(record.sections)) {
        const patch = record.sections[name] as SequencePatch;
        sections[name] = applyPatch(
          sections[name] ?? [],
          patch.from,
          patch.items,
          `sections.${name}`,
          record,
          at,
        );
      }
    if (record.steps) steps = applyPatch(steps, record.steps.from, record.steps.items, 'steps', record, at);
    if (record.content)
      for (const hash of Object.keys(record.content)) content.set(hash, record.content[hash] as string);
    if (steps.length !== record.step)
      refuse(record, `says ${record.step} steps, but its steps make ${steps.length}`, at);
  }
  const last = records[records.length - 1] as JournalRecord;
  const resolve = new ContentResolver(content, at);
  const messages: Record<string, unknown[]> = {};
  for (const name of Object.keys(sections)) {
    const items = sections[name] as unknown[];
    for (const message of items) resolve.message(message);
    setOwn(messages, name, items);
  }
  for (const item of steps) resolve.stepExecution(item);
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
      messages,
      metadata: head.metadata,
      systemPrompt: head.systemPrompt,
      responseFormat: head.responseFormat,
    },
    execution: execution ? { ...execution, stepExecutions: steps } : null,
    ...(typeof head.agentVersion === 'string' && { agentVersion: head.agentVersion }),
  };
  const state = decodeStoredState(document, at, true);
  return {
    state,
    version: last.v,
    tip: tipOf(state, last.v, last.gen, last.acct, new Set(content.keys())),
  };
}

function refuse(record: JournalRecord, problem: string, at: StoredAt): never {
  throw new CorruptSessionError(at.sessionId, `journal record ${record.v} ${problem}`, at.location);
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

/** Puts stored content back where a record refers to it, in the record's own objects. */
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

  message(message: unknown): void {
    if (isRecord(message) && isRecord(message.content)) message.content = this.text(message.content.$c);
  }

  /** The execution with its value, without `valueRef`: a new object (a delete left V8's slow dictionary mode). */
  toolExecution(execution: unknown): unknown {
    if (!isRecord(execution) || !isRecord(execution.valueRef)) return execution;
    const ref = execution.valueRef;
    const value = typeof ref.text === 'string' ? this.text(ref.text) : JSON.parse(this.text(ref.json));
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(execution)) if (key !== 'valueRef') setOwn(out, key, execution[key]);
    out.value = value;
    return out;
  }

  stepExecution(item: unknown): void {
    if (!isRecord(item) || !isRecord(item.step)) return;
    const step = item.step;
    if (Array.isArray(step.inputMessages)) for (const m of step.inputMessages) this.message(m);
    if (Array.isArray(step.outputMessages)) for (const m of step.outputMessages) this.message(m);
    const executions = step.toolExecutions;
    if (Array.isArray(executions))
      for (let i = 0; i < executions.length; i++) executions[i] = this.toolExecution(executions[i]);
  }
}
