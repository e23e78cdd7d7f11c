import { randomBytes } from 'node:crypto';
import { DEFAULT_SECTION } from '../../state/agent-context';
import type { AgentState } from '../../state/agent-state';
import type { AgentStep } from '../../state/agent-step';
import type { AppendOnlyList } from '../../state/append-only-list';
import { contentHash } from '../../state/content-hash';
import type { Message } from '../../state/message';
import type { StepExecution } from '../../state/step-execution';
import type { ToolExecution } from '../../state/tool-execution';
import { type Accounting, CONTENT_MIN_LENGTH, JOURNAL_FORMAT_VERSION, sealRecord } from './journal-record';

/**
 * What a writer remembers of the last checkpoint it wrote or read, to append only what changed:
 * the state itself (appends share its lists, so "what is new" is found without comparing
 * contents), its head fields as JSON, the content stored since the newest snapshot, the accounts.
 * The set of content keys is shared along a chain of tips and grows when a record is committed,
 * so that a save does not copy it.
 */
export interface JournalTip {
  readonly version: number;
  readonly gen: string;
  readonly state: AgentState;
  readonly head: Readonly<Record<string, string>>;
  readonly contentKeys: Set<string>;
  readonly acct: Accounting;
}

/** A record ready to append. */
export interface NextRecord {
  readonly text: string;
  readonly kind: 'snapshot' | 'delta';
  readonly version: number;
  readonly gen: string;
  readonly acct: Accounting;
  /** The tip after the record; call it once the record is stored (it adds the record's content keys). */
  commit(): JournalTip;
}

/** Bytes of superseded records tolerated beyond the live ones before a snapshot is written. */
const GARBAGE_ALLOWANCE = 64 * 1024;

/**
 * The record that brings a session from `tip` to `state` at `version`: a delta when `tip` is the
 * stored head and `state` extends it, else a snapshot. A snapshot is also written once the
 * records since the newest one hold more superseded bytes than live ones, so a load reads at most
 * about twice the state.
 */
export function nextRecord(tip: JournalTip | null, state: AgentState, version: number): NextRecord {
  if (tip && tip.version === version - 1) {
    const delta = encodeDelta(tip, state, version);
    if (delta && delta.acct.garbage <= delta.acct.live + GARBAGE_ALLOWANCE) return delta;
  }
  return encodeSnapshot(state, version);
}

/** A snapshot record of `state` at `version`, and its tip. */
function encodeSnapshot(state: AgentState, version: number): NextRecord {
  const content = new ContentWriter(new Set());
  const head = headOf(state);
  const sections: string[] = [];
  for (const name of state.store().sectionNames()) {
    const items = [...state.store().list(name)].map((m) => encodeMessage(m, content));
    sections.push(`${JSON.stringify(name)}:${patchJson(0, JSON.stringify(items))}`);
  }
  const stepItems = JSON.stringify(stepList(state).map((s) => encodeStepExecution(s, state, content)));
  const stepsBytes = stepItems.length;
  const gen = newGen();
  const body =
    `${envelope(state, version, gen, 'snapshot')},"head":${headJson(Object.entries(head))}` +
    `,"steps":${patchJson(0, stepItems)},"sections":{${sections.join(',')}},"content":${JSON.stringify(content.added)}`;
  // The live bytes are the record's own: its JSON with `live` 0, before the seal.
  const live = `${body},${acctJson({ live: 0, garbage: 0, steps: stepsBytes })}}`.length;
  const text = sealRecord(`${body},${acctJson({ live, garbage: 0, steps: stepsBytes })}}`);
  const tip: JournalTip = {
    version,
    gen,
    state,
    head,
    contentKeys: new Set(Object.keys(content.added)),
    acct: { live: text.length, garbage: 0, steps: stepsBytes },
  };
  return { text, kind: 'snapshot', version, gen, acct: tip.acct, commit: () => tip };
}

/** The tip after reading `state` at `version` from records whose newest says `gen` and `acct`. */
export function tipOf(
  state: AgentState,
  version: number,
  gen: string,
  acct: Accounting,
  contentKeys: Set<string>,
): JournalTip {
  // The head's JSON is what the next save compares against: written then, not by the load.
  let head: Record<string, string> | undefined;
  return {
    version,
    gen,
    state,
    contentKeys,
    acct,
    get head() {
      head ??= headOf(state);
      return head;
    },
  };
}

function encodeDelta(tip: JournalTip, state: AgentState, version: number): NextRecord | null {
  const before = tip.state;
  const content = new ContentWriter(tip.contentKeys);
  let garbage = tip.acct.garbage;
  let live = tip.acct.live;

  // Each part is written to JSON once: its length is what the accounts count, and the record's
  // text is these parts put together (as JSON.stringify of the record would write it).
  const sections: string[] = [];
  const names = state.store().sectionNames();
  for (const name of before.store().sectionNames()) if (!names.includes(name)) return null;
  for (const name of names) {
    const was = before.store().list(name);
    const now = state.store().list(name);
    const extends_ = was.size === 0 || was.isPrefixOf(now);
    // Steps refer to the conversation by position: if it was rewritten, start afresh.
    if (!extends_ && name === DEFAULT_SECTION) return null;
    const from = extends_ ? was.size : 0;
    if (from === now.size && extends_) continue;
    const contentBefore = content.bytes;
    const items = JSON.stringify(sliceOf(now, from).map((m) => encodeMessage(m, content)));
    sections.push(`${JSON.stringify(name)}:${patchJson(from, items)}`);
    const bytes = items.length + content.bytes - contentBefore;
    // A rewritten section supersedes the old one: its size stands in for the old one's.
    if (extends_) live += bytes;
    else garbage += bytes;
  }

  const wasExecution = before.execution();
  const execution = state.execution();
  let steps: string | undefined;
  let stepsBytes = tip.acct.steps;
  const wasSteps = wasExecution?.stepExecutionList();
  const nowSteps = execution?.stepExecutionList();
  const sameExecution =
    wasExecution !== null &&
    execution !== null &&
    wasExecution.executionId() === execution.executionId() &&
    wasSteps !== undefined &&
    nowSteps !== undefined &&
    (wasSteps.size === 0 || wasSteps.isPrefixOf(nowSteps));
  if (sameExecution && wasSteps && nowSteps) {
    if (nowSteps.size > wasSteps.size) {
      const contentBefore = content.bytes;
      const items = JSON.stringify(
        sliceOf(nowSteps, wasSteps.size).map((s) => encodeStepExecution(s, state, content)),
      );
      steps = patchJson(wasSteps.size, items);
      stepsBytes += items.length;
      live += items.length + content.bytes - contentBefore;
    }
  } else if ((wasSteps?.size ?? 0) > 0 || (nowSteps?.size ?? 0) > 0) {
    const items = JSON.stringify(stepList(state).map((s) => encodeStepExecution(s, state, content)));
    steps = patchJson(0, items);
    garbage += stepsBytes;
    live -= Math.min(live, stepsBytes);
    stepsBytes = items.length;
    live += stepsBytes;
  }

  const head = headOf(state, tip);
  const changed: [string, string][] = [];
  for (const [key, json] of Object.entries(head)) {
    if (tip.head[key] === json) continue;
    changed.push([key, json]);
    garbage += (tip.head[key]?.length ?? 0) + key.length;
  }

  const acct: Accounting = { live, garbage, steps: stepsBytes };
  const added = Object.keys(content.added).length > 0;
  const text = sealRecord(
    `${envelope(state, version, tip.gen, 'delta')},"head":${headJson(changed)}` +
      (steps === undefined ? '' : `,"steps":${steps}`) +
      (sections.length > 0 ? `,"sections":{${sections.join(',')}}` : '') +
      (added ? `,"content":${JSON.stringify(content.added)}` : '') +
      `,${acctJson(acct)}}`,
  );
  const next: JournalTip = {
    version,
    gen: tip.gen,
    state,
    head,
    contentKeys: tip.contentKeys,
    acct,
  };
  return {
    text,
    kind: 'delta',
    version,
    gen: tip.gen,
    acct,
    commit: () => {
      for (const hash of Object.keys(content.added)) tip.contentKeys.add(hash);
      return next;
    },
  };
}

/**
 * The start of a record's JSON, up to `kind` (JournalRecord's keys in their order). `at` and `gen`
 * are JSON-safe as they are (an ISO time, base64url), as a store's head reader expects.
 */
function envelope(state: AgentState, version: number, gen: string, kind: 'snapshot' | 'delta'): string {
  return `{"journal":${JOURNAL_FORMAT_VERSION},"v":${version},"gen":${JSON.stringify(gen)},"at":"${new Date().toISOString()}","step":${state.stepCount()},"kind":"${kind}"`;
}

/** `{ from, items }` as JSON, from the items' JSON. */
const patchJson = (from: number, items: string) => `{"from":${from},"items":${items}}`;

/** An object of head fields as JSON, from each field's JSON. */
const headJson = (fields: readonly (readonly [string, string])[]) =>
  `{${fields.map(([key, json]) => `${JSON.stringify(key)}:${json}`).join(',')}}`;

const acctJson = ({ live, garbage, steps }: Accounting) =>
  `"acct":{"live":${live},"garbage":${garbage},"steps":${steps}}`;

/** A new generation: random, 12 characters. */
export function newGen(): string {
  return randomBytes(9).toString('base64url');
}

function sliceOf<T>(list: AppendOnlyList<T>, from: number): T[] {
  const out: T[] = [];
  for (let i = from; i < list.size; i++) out.push(list.at(i) as T);
  return out;
}

function stepList(state: AgentState): StepExecution[] {
  const list = state.execution()?.stepExecutionList();
  return list ? sliceOf(list, 0) : [];
}

/**
 * The small fields of a state, each as JSON: identity, timing, settings, and the execution without
 * its steps (status, continuation, errors, a step awaiting approval), as `toJSON` writes them.
 * The settings `tip`'s state holds unchanged (the same value: a state shares what did not change)
 * keep the tip's JSON, so that a long system prompt is not written to JSON again at every save.
 */
function headOf(state: AgentState, tip?: JournalTip): Record<string, string> {
  // Its keys are HEAD_FIELDS (journal-record.ts), which a load accepts.
  const fields: Record<string, unknown> = {
    agentId: state.agentId(),
    parentAgentId: state.parentAgentId(),
    createdAt: state.createdAt().toISOString(),
    updatedAt: state.updatedAt().toISOString(),
    executionCount: state.executionCount(),
    llmConfig: state.llmConfig(),
    metadata: state.metadata(),
    systemPrompt: state.systemPrompt(),
    responseFormat: state.responseFormat(),
    execution: state.execution()?.serializeHead((step) => encodeStep(step, state, null)) ?? null,
  };
  // only with a version, or to clear one the tip has: journals of agents without one read as before
  const agentVersion = state.agentVersion();
  if (agentVersion !== null || tip?.head.agentVersion !== undefined) fields.agentVersion = agentVersion;
  const was = tip && settingsOf(tip.state);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) {
    const kept = was && key in was && was[key as keyof typeof was] === value ? tip.head[key] : undefined;
    out[key] = kept ?? JSON.stringify(value);
  }
  return out;
}

/** The head fields whose values a state keeps as they were given (the others are made when read). */
function settingsOf(state: AgentState) {
  return {
    llmConfig: state.llmConfig(),
    metadata: state.metadata(),
    systemPrompt: state.systemPrompt(),
    responseFormat: state.responseFormat(),
  };
}

/** Collects content (long strings) not yet stored since the newest snapshot; `stored` is not changed. */
class ContentWriter {
  readonly added: Record<string, string> = {};
  /** Characters of the content added. */
  bytes = 0;
  /** Hashes of the texts seen: a tool's result is in the conversation, the step and its execution. */
  private readonly hashes = new Map<string, string>();
  constructor(private readonly stored: ReadonlySet<string>) {}

  /** The string itself when short, else `{ "$c": hash }` (storing it if new). */
  ref(text: string): string | { $c: string } {
    if (text.length < CONTENT_MIN_LENGTH) return text;
    let hash = this.hashes.get(text);
    if (hash === undefined) {
      hash = contentHash(text);
      this.hashes.set(text, hash);
    }
    if (!this.stored.has(hash) && !(hash in this.added)) {
      this.added[hash] = text;
      this.bytes += text.length;
    }
    return { $c: hash };
  }
}

function encodeMessage(message: Message, content: ContentWriter | null): unknown {
  if (!content) return message;
  return { ...message, content: content.ref(message.content) };
}

function encodeToolExecution(execution: ToolExecution, content: ContentWriter | null): unknown {
  const json = execution.toJSON();
  if (!content) return json;
  const value = json.value;
  if (typeof value === 'string' && value.length >= CONTENT_MIN_LENGTH) {
    return { ...json, value: null, valueRef: { text: (content.ref(value) as { $c: string }).$c } };
  }
  if (value !== null && typeof value === 'object') {
    const text = JSON.stringify(value);
    if (text.length >= CONTENT_MIN_LENGTH)
      return { ...json, value: null, valueRef: { json: (content.ref(text) as { $c: string }).$c } };
  }
  return json;
}

/**
 * A step as the state format writes it (`AgentStep.serialize`, which `toJSON` uses), with its input
 * as a reference to the conversation and its long strings as content references.
 */
function encodeStep(step: AgentStep, state: AgentState, content: ContentWriter | null): unknown {
  const inputs = step.inputMessageList();
  const conversation = state.messageList();
  const inputMessages =
    inputs.size === 0
      ? []
      : inputs.isPrefixOf(conversation)
        ? [{ $ref: [0, inputs.size] }]
        : sliceOf(inputs, 0).map((m) => encodeMessage(m, content));
  return step.serialize(
    inputMessages,
    (m) => encodeMessage(m, content),
    (e) => encodeToolExecution(e, content),
  );
}

function encodeStepExecution(
  stepExecution: StepExecution,
  state: AgentState,
  content: ContentWriter,
): unknown {
  return stepExecution.serialize((step) => encodeStep(step, state, content));
}
