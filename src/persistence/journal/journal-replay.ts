import type { AgentState } from '../../state/agent-state';
import { setOwn } from '../../state/json-value';
import { FORMAT_VERSION } from '../../state/schemas';
import { CorruptSessionError } from '../errors';
import { decodeStoredState, type StoredAt } from '../session-document';
import { ContentResolver } from './content-resolver';
import { buildFused } from './fused-build';
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
export function replay(records: readonly JournalRecord[], at: StoredAt, onePass = true): Replayed {
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
  // One pass over the items (fused-build.ts); the whole path when it does not build (or `onePass`
  // is false: tests hold the two to the same states and errors).
  const state =
    (onePass ? buildFused(head, sections, steps, resolve) : null) ??
    build(head, sections, steps, resolve, at);
  return {
    state,
    version: last.v,
    tip: tipOf(state, last.v, last.gen, last.acct, new Set(content.keys())),
  };
}

/**
 * The state the merged records make, the whole way: content put back everywhere, the document put
 * together, then checked and built (`AgentState.fromJSON`'s path). Taken when the one pass
 * (fused-build.ts) does not build it: this raises what is wrong.
 */
function build(
  head: Record<string, unknown>,
  sections: Record<string, unknown[]>,
  steps: unknown[],
  resolve: ContentResolver,
  at: StoredAt,
): AgentState {
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
  return decodeStoredState(document, at, true);
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
