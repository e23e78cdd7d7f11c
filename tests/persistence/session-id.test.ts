import { describe, expect, it } from 'vitest';
import {
  assertSessionId,
  InvalidSessionIdError,
  isValidSessionId,
  MAX_SESSION_ID_LENGTH,
} from '../../src/persistence/index';

describe('session ids', () => {
  it.each(['chat-42', 'a', 'A.b_c-D', '.hidden', 'a..b', '...', '0', 'x'.repeat(MAX_SESSION_ID_LENGTH)])(
    'accepts %j',
    (id) => {
      expect(isValidSessionId(id)).toBe(true);
      expect(assertSessionId(id)).toBe(id);
    },
  );

  it.each([
    ['', 'it is empty'],
    ['.', 'it is a relative path'],
    ['..', 'it is a relative path'],
    ['../x', 'it contains "/" (a path separator)'],
    ['a/b', 'it contains "/" (a path separator)'],
    ['a\\b', 'it contains "\\\\" (a path separator)'],
    ['a b', 'it contains " "'],
    ['a:b', 'it contains ":"'],
    ['nul\u0000', 'it contains "\\u0000"'],
    ['x'.repeat(MAX_SESSION_ID_LENGTH + 1), 'it has 201 characters, more than 200'],
  ])('refuses %j: %s', (id, detail) => {
    expect(isValidSessionId(id)).toBe(false);
    const error = (() => {
      try {
        assertSessionId(id);
      } catch (e) {
        return e;
      }
    })() as InvalidSessionIdError;
    expect(error).toBeInstanceOf(InvalidSessionIdError);
    expect(error.code).toBe('INVALID_SESSION_ID');
    expect(error.sessionId).toBe(id);
    expect(error.detail).toBe(detail);
    expect(error.message).toContain('Use 1 to 200 characters of A-Z, a-z, 0-9');
  });

  it('refuses values that are not strings', () => {
    for (const id of [undefined, null, 42, {}]) {
      expect(() => assertSessionId(id)).toThrow(/not a string/);
    }
  });
});
