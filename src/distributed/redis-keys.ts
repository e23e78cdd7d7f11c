/**
 * The Redis key layout of agent-machine, in one place. On Redis Cluster a script may touch only
 * keys of one hash slot, and a key's slot is that of its hash tag (the text between its first `{`
 * and the next `}`). So every key of one session, and of one chat, carries the same tag, derived
 * from the id: all of a session's keys are in one slot, and sessions spread over the masters.
 *
 * A new Redis script that touches a session's keys builds them with `sessionKeys` (or names a
 * key of its own with `sessionKey(prefix, id, name)`): then it is in the session's slot.
 */
import { InvalidArgumentError } from '../state/errors';

/**
 * The hash tag of an id: the id itself when it is made of the characters session ids allow
 * (`chat-42` → `chat-42`); otherwise it is percent-encoded (`a{b}` → `a%7Bb%7D`), so that the tag
 * never holds `{` or `}`, is never empty (`''` → `%`), and two ids never share a tag.
 */
export function hashTag(id: string): string {
  if (id === '') return '%';
  return /^[A-Za-z0-9._-]+$/.test(id) ? id : encodeURIComponent(id).replace(/[!'()*]/g, escapeChar);
}

function escapeChar(c: string): string {
  return `%${c.charCodeAt(0).toString(16).toUpperCase()}`;
}

/** The id a hash tag was derived from (see `hashTag`). */
export function idOfTag(tag: string): string {
  return tag === '%' ? '' : decodeURIComponent(tag);
}

/** A key of `id`'s own, in its slot: `<prefix>{<tag>}:<name>`. */
export function taggedKey(prefix: string, id: string, name: string): string {
  return `${prefix}{${hashTag(id)}}:${name}`;
}

/** The keys of one session in a RedisSessionStore (all in one slot). */
export interface SessionKeys {
  /** The journal: a list of records (JOURNAL_FORMAT.md). */
  readonly journal: string;
  /** The position of the newest snapshot record in the journal. */
  readonly snapshot: string;
  /** The session's document from before the journal (moved here from the old layout). */
  readonly document: string;
}

/** The keys of session `sessionId` under `prefix`: `<prefix>{<tag>}:journal`, `:snapshot`, `:session`. */
export function sessionKeys(prefix: string, sessionId: string): SessionKeys {
  return {
    journal: taggedKey(prefix, sessionId, 'journal'),
    snapshot: taggedKey(prefix, sessionId, 'snapshot'),
    document: taggedKey(prefix, sessionId, 'session'),
  };
}

/**
 * The keys of a session before the Cluster layout (agent-machine 0.x up to this change): they
 * are read when the new keys hold nothing, and moved to the new keys at the first touch.
 */
export function legacySessionKeys(prefix: string, sessionId: string) {
  return {
    journal: `${prefix}journal:${sessionId}`,
    snapshot: `${prefix}journal-snapshot:${sessionId}`,
    document: `${prefix}session:${sessionId}`,
    index: `${prefix}sessions`,
  } as const;
}

/** The keys of one chat in a RedisStreamStore (all in one slot). */
export function chatKeys(prefix: string, chatId: string) {
  return {
    /** The id of the chat's open stream, with a lease. */
    active: taggedKey(prefix, chatId, 'stream-active'),
    /** The messages steered to the chat and not yet settled by a run. */
    handedOff: taggedKey(prefix, chatId, 'stream-handed-off'),
    /** A stream's chunks (a Redis Stream). */
    stream: (streamId: string) => taggedKey(prefix, chatId, `stream:${streamId}`),
    /** A stream's stop flag. */
    stopFlag: (streamId: string) => taggedKey(prefix, chatId, `stream-stop:${streamId}`),
    /** The messages steered to a stream, in order. */
    steerList: (streamId: string) => taggedKey(prefix, chatId, `stream-steer:${streamId}`),
  } as const;
}

/**
 * Refuses a key prefix under which the keys of one id would not share a slot: one whose first `{`
 * is followed at once by `}` (Redis then hashes each whole key). A prefix with a tag of its own
 * (`{app}:`) is valid: all its keys share that one slot (one master holds them all).
 */
export function assertKeyPrefix(name: string, prefix: unknown): string {
  if (typeof prefix !== 'string') throw new InvalidArgumentError(name, 'expected a string');
  const open = prefix.indexOf('{');
  if (open >= 0 && prefix[open + 1] === '}')
    throw new InvalidArgumentError(
      name,
      `${JSON.stringify(prefix)} has an empty hash tag "{}": on Redis Cluster the keys of one session would be in different slots`,
    );
  return prefix;
}

/** Whether `key` has a hash tag: a `{` whose next `}` is not right after it. */
export function hasHashTag(key: string): boolean {
  const open = key.indexOf('{');
  if (open < 0) return false;
  const close = key.indexOf('}', open + 1);
  return close > open + 1;
}

/** Escapes the glob characters of a SCAN MATCH pattern. */
export function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
