import { AgentState } from '../state/agent-state';
import { InvalidStateError } from '../state/errors';
import { isRecord } from '../state/json-value';
import { FORMAT_VERSION } from '../state/schemas';
import { CorruptSessionError } from './errors';
import type { LoadedSession } from './session-store';

/** Which stored session a decoder is reading, for the errors it raises. */
export interface StoredAt {
  readonly sessionId: string;
  readonly location: string;
}

/**
 * The text of a stored session document (FileSessionStore, InMemorySessionStore):
 * `{"version":N,"savedAt":"<ISO time>","state":<AgentState.toJSON()>}`. The version comes first
 * so that a save can read it from the first bytes without parsing the whole state.
 */
export function encodeSessionDocument(version: number, state: AgentState, savedAt = Date.now()): string {
  return JSON.stringify({ version, savedAt: new Date(savedAt).toISOString(), state });
}

/** Enough bytes of a document to hold `{"version":<16 digits>,` (see `versionFromHead`). */
const DOCUMENT_HEAD_BYTES = 64;

const HEAD = /^\{"version":([1-9][0-9]{0,15}),/;

/**
 * The version at the start of a document as this module writes it, or null when the head has
 * another shape (the caller then parses the whole document with `storedVersion`).
 */
function versionFromHead(head: string): number | null {
  const match = HEAD.exec(head);
  if (!match) return null;
  const version = Number(match[1]);
  return Number.isSafeInteger(version) ? version : null;
}

/**
 * The version of a stored document, for the version check of a save. Only the version has to be
 * readable: a save that names it may replace a document whose state is damaged, as it would
 * replace a sound one. Raises CorruptSessionError when the version cannot be read.
 */
export function storedVersion(text: string, at: StoredAt): number {
  const fromHead = versionFromHead(text.slice(0, DOCUMENT_HEAD_BYTES));
  if (fromHead !== null) return fromHead;
  return readEnvelope(parseJson(text, at), at).version;
}

/** When a stored document says it was saved (its `savedAt`), read without parsing the state. */
export function savedAtOf(text: string): Date {
  return new Date(/"savedAt"\s*:\s*"([^"]+)"/.exec(text)?.[1] ?? Number.NaN);
}

/** The state and version of a stored document, or CorruptSessionError naming what is wrong. */
export function decodeSessionDocument(text: string, at: StoredAt): LoadedSession {
  const envelope = readEnvelope(parseJson(text, at), at);
  return { version: envelope.version, state: decodeStoredState(envelope.state, at) };
}

/**
 * Builds the AgentState of a stored session from its parsed `toJSON()` form, turning every way it
 * can be wrong into CorruptSessionError (with the InvalidStateError's path and message).
 * `fromRecords`: the form was put together from a journal's parsed records (all of it made by
 * JSON.parse), which the schema checks without walking it first (validateParsedJson).
 */
export function decodeStoredState(data: unknown, at: StoredAt, fromRecords = false): AgentState {
  const formatVersion = isRecord(data) ? data.formatVersion : undefined;
  if (typeof formatVersion === 'number' && formatVersion !== FORMAT_VERSION) {
    throw new CorruptSessionError(
      at.sessionId,
      `its state has format version ${formatVersion}, and this agent-machine reads format version ` +
        `${FORMAT_VERSION}${formatVersion > FORMAT_VERSION ? ' (it was written by a newer agent-machine: upgrade agent-machine to read it)' : ''}`,
      at.location,
      'formatVersion',
    );
  }
  try {
    return fromRecords ? AgentState.fromParsedJson(data) : AgentState.fromJSON(data);
  } catch (error) {
    if (error instanceof InvalidStateError) {
      throw new CorruptSessionError(at.sessionId, error.message, at.location, error.path, { cause: error });
    }
    throw error;
  }
}

/** Parses JSON text, or raises CorruptSessionError saying it is not JSON. */
export function parseJson(text: string, at: StoredAt): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const shown = text.length === 0 ? 'the stored data is empty' : (error as Error).message;
    throw new CorruptSessionError(
      at.sessionId,
      `not valid JSON (truncated or overwritten): ${shown}`,
      at.location,
      null,
      { cause: error },
    );
  }
}

interface Envelope {
  readonly version: number;
  readonly state: unknown;
}

function readEnvelope(data: unknown, at: StoredAt): Envelope {
  const fail = (problem: string): never => {
    throw new CorruptSessionError(at.sessionId, problem, at.location);
  };
  if (!isRecord(data)) return fail('the document is not a JSON object of { version, savedAt, state }');
  const unknown = Object.keys(data).filter((k) => k !== 'version' && k !== 'savedAt' && k !== 'state');
  if (unknown.length > 0)
    fail(`the document has unknown key(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')}`);
  const { version, savedAt, state } = data;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1)
    fail(`the document's version is ${JSON.stringify(version)}, not a positive integer`);
  if (typeof savedAt !== 'string' || Number.isNaN(Date.parse(savedAt)))
    fail(`the document's savedAt is ${JSON.stringify(savedAt)}, not an ISO time`);
  if (!isRecord(state)) fail('the document has no state object');
  return { version: version as number, state };
}
