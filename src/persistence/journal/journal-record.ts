import { isRecord } from '../../state/json-value';
import { CorruptSessionError } from '../errors';
import type { StoredAt } from '../session-document';
import { crc32 } from './crc32';

/** The version of the journal format (JOURNAL_FORMAT.md), written as `journal` in every record. */
export const JOURNAL_FORMAT_VERSION = 1;

/** Strings at least this long are stored once as content and referenced by hash. */
export const CONTENT_MIN_LENGTH = 200;

/** A run of items appended to a sequence after its first `from` items (the rest is dropped). */
export interface SequencePatch {
  readonly from: number;
  readonly items: readonly unknown[];
}

/** What the snapshot policy needs to know about the records since the newest snapshot. */
export interface Accounting {
  /** Bytes of the records still describing the state (items, content). */
  readonly live: number;
  /** Bytes of superseded records since the snapshot (earlier heads, dropped items). */
  readonly garbage: number;
  /** Bytes of the current execution's step items (become garbage when a new execution starts). */
  readonly steps: number;
}

/**
 * One checkpoint: version `v` of a session. A snapshot holds the whole state; a delta holds what
 * changed since version `v - 1`. Keys are written in this order, so that the head of the text
 * (`{"journal":1,"v":N,"gen":"…","at":"…","step":S,"kind":"…"`) can be read without parsing it.
 */
export interface JournalRecord {
  readonly journal: number;
  readonly v: number;
  readonly gen: string;
  readonly at: string;
  readonly step: number;
  readonly kind: 'snapshot' | 'delta';
  readonly head: Readonly<Record<string, unknown>>;
  readonly steps?: SequencePatch;
  readonly sections?: Readonly<Record<string, SequencePatch>>;
  readonly content?: Readonly<Record<string, string>>;
  readonly acct: Accounting;
}

const KEYS = new Set([
  'journal',
  'v',
  'gen',
  'at',
  'step',
  'kind',
  'head',
  'steps',
  'sections',
  'content',
  'acct',
]);

const isCount = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isText = (value: unknown) => typeof value === 'string';
const isPatch = (value: unknown) => isRecord(value) && isCount(value.from) && Array.isArray(value.items);

/** Whether every value of `record` passes `check` (no array of the values is made). */
function allValues(record: Record<string, unknown>, check: (value: unknown) => boolean): boolean {
  for (const key in record) if (Object.hasOwn(record, key) && !check(record[key])) return false;
  return true;
}

/** Where a parsed record does not have the shape of JournalRecord, or null when it does. */
function shapeProblem(data: Record<string, unknown>): string | null {
  for (const key of Object.keys(data)) if (!KEYS.has(key)) return `unknown key ${JSON.stringify(key)}`;
  if (!isCount(data.v) || (data.v as number) < 1) return 'v';
  if (typeof data.gen !== 'string' || data.gen === '') return 'gen';
  if (typeof data.at !== 'string') return 'at';
  if (!isCount(data.step)) return 'step';
  if (data.kind !== 'snapshot' && data.kind !== 'delta') return 'kind';
  if (!isRecord(data.head)) return 'head';
  if (data.steps !== undefined && !isPatch(data.steps)) return 'steps';
  if (data.sections !== undefined && !(isRecord(data.sections) && allValues(data.sections, isPatch)))
    return 'sections';
  if (data.content !== undefined && !(isRecord(data.content) && allValues(data.content, isText)))
    return 'content';
  const acct = data.acct;
  if (!isRecord(acct) || !isCount(acct.live) || !isCount(acct.garbage) || !isCount(acct.steps)) return 'acct';
  return null;
}

/**
 * The fields of a state a record's `head` holds; a snapshot holds all of them but the optional
 * ones (OPTIONAL_HEAD_FIELDS).
 */
export const HEAD_FIELDS: ReadonlySet<string> = new Set([
  'agentId',
  'parentAgentId',
  'createdAt',
  'updatedAt',
  'executionCount',
  'llmConfig',
  'metadata',
  'systemPrompt',
  'responseFormat',
  'execution',
  'agentVersion',
]);

/**
 * Head fields a snapshot may leave out: `agentVersion` (written by an agent with a version; absent
 * in records written before versions existed, and when the agent has none: read as null).
 */
export const OPTIONAL_HEAD_FIELDS: ReadonlySet<string> = new Set(['agentVersion']);

/**
 * A record's JSON text (one line, keys in JournalRecord's order), sealed: its last member `"crc"`
 * is the CRC-32 of the text without that member, so that damage anywhere in it is found however
 * the record is stored. (The writer builds the JSON from parts it wrote once; a fork re-seals a
 * parsed record.)
 */
export function sealRecord(json: string): string {
  return `${json.slice(0, -1)},"crc":${crc32(json)}}`;
}

/** A record's text under another generation (a fork's records, JOURNAL_FORMAT.md). */
export function withGeneration(record: JournalRecord, gen: string): string {
  return sealRecord(JSON.stringify({ ...record, gen }));
}

const SEAL = /,"crc":(\d{1,10})\}$/;

/** Whether a record's text ends with the checksum of the rest. */
function sealHolds(text: string): boolean {
  // Only the end of the text is searched: the seal is its last 9 to 18 characters.
  const tailStart = Math.max(0, text.length - 20);
  const match = SEAL.exec(text.slice(tailStart));
  if (!match) return false;
  // The text without its seal ends with the `}` the seal replaced: continued, not copied.
  return crc32('}', crc32(text.slice(0, tailStart + match.index))) === Number(match[1]);
}

/** Parses and checks a record's text, or raises CorruptSessionError naming what is wrong. */
export function decodeRecord(text: string, at: StoredAt): JournalRecord {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CorruptSessionError(
      at.sessionId,
      `a journal record is not valid JSON: ${(error as Error).message}`,
      at.location,
      null,
      { cause: error },
    );
  }
  const format = (data as { journal?: unknown } | null)?.journal;
  if (typeof format === 'number' && format !== JOURNAL_FORMAT_VERSION)
    throw new CorruptSessionError(
      at.sessionId,
      `its journal has format version ${format}, and this agent-machine reads format version ` +
        `${JOURNAL_FORMAT_VERSION}${format > JOURNAL_FORMAT_VERSION ? ' (it was written by a newer agent-machine: upgrade agent-machine to read it)' : ''}`,
      at.location,
      'journal',
    );
  if (!sealHolds(text)) {
    const version = readRecordHead(text)?.version;
    throw new CorruptSessionError(
      at.sessionId,
      `journal record ${version ?? '(version unreadable)'} fails its checksum (it was damaged or cut short)`,
      at.location,
    );
  }
  if (isRecord(data)) delete data.crc;
  const problem = isRecord(data) ? shapeProblem(data) : 'top level, not a JSON object';
  if (problem !== null)
    throw new CorruptSessionError(
      at.sessionId,
      `a journal record is malformed (bad ${problem})`,
      at.location,
    );
  return data as unknown as JournalRecord;
}

const HEAD =
  /^\{"journal":\d+,"v":(\d+),"gen":"([^"]*)","at":"([^"]*)","step":(\d+),"kind":"(snapshot|delta)"/;

/** The version, generation, time, step count and kind at the start of a record's text, or null. */
export function readRecordHead(
  text: string,
): { version: number; gen: string; at: string; step: number; kind: 'snapshot' | 'delta' } | null {
  const match = HEAD.exec(text.slice(0, 200));
  if (!match) return null;
  return {
    version: Number(match[1]),
    gen: match[2] as string,
    at: match[3] as string,
    step: Number(match[4]),
    kind: match[5] as 'snapshot' | 'delta',
  };
}
