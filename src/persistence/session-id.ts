import { InvalidSessionIdError } from './errors';

/** The longest session id: well under the 255-byte file name limit once `.json` is added. */
export const MAX_SESSION_ID_LENGTH = 200;

// A portable alphabet: safe as a file name on every platform and as a key anywhere, so the same
// id works with every store and never reaches outside a FileSessionStore's directory.
const SESSION_ID = /^[A-Za-z0-9._-]+$/;

/** Whether `id` is a session id every store accepts. */
export function isValidSessionId(id: unknown): id is string {
  return problemWith(id) === null;
}

/**
 * Returns `id` if it is a valid session id, else throws InvalidSessionIdError naming it. Every
 * store calls this first, so all of them accept and refuse the same ids.
 *
 * @example
 * assertSessionId('chat-42');   // 'chat-42'
 * assertSessionId('../etc');    // throws InvalidSessionIdError (code 'INVALID_SESSION_ID')
 */
export function assertSessionId(id: unknown): string {
  const problem = problemWith(id);
  if (problem !== null) throw new InvalidSessionIdError(id, problem);
  return id as string;
}

function problemWith(id: unknown): string | null {
  if (typeof id !== 'string') return 'it is not a string';
  if (id.length === 0) return 'it is empty';
  if (id.length > MAX_SESSION_ID_LENGTH)
    return `it has ${id.length} characters, more than ${MAX_SESSION_ID_LENGTH}`;
  if (id === '.' || id === '..') return 'it is a relative path';
  if (!SESSION_ID.test(id)) {
    const bad = [...id].find((c) => !SESSION_ID.test(c)) ?? '';
    return `it contains ${JSON.stringify(bad)}${bad === '/' || bad === '\\' ? ' (a path separator)' : ''}`;
  }
  return null;
}
