/**
 * A journal row's body as the SQLite store reads it: the record's UTF-8 JSON, or (written by
 * agent-machine 0.1) that JSON compressed with raw DEFLATE, inflated within `legacyInflateLimit`.
 */
import { constants } from 'node:buffer';
import { inflateRawSync } from 'node:zlib';
import { CorruptSessionError } from './errors';
import type { StoredAt } from './session-document';

/**
 * How many times its size a legacy row may inflate to. DEFLATE (0.1 wrote at the default level)
 * shrinks an agent's record JSON 2 to 10 times, and about 350 times for a record of 2,000
 * identical messages; its format allows 1,032 times, which is what a crafted row reaches.
 */
const LEGACY_INFLATE_RATIO = 128;
/** The floor of that bound, for small rows. */
const LEGACY_INFLATE_FLOOR = 1 << 20;

/**
 * How many bytes a legacy row of `bodyLength` bytes may inflate to: 128 times its size (1 MiB at
 * least), and never past the longest text a record can be (3 UTF-8 bytes a UTF-16 unit of the
 * longest string). A row past it is refused as soon as its inflated output reaches the bound,
 * before more is allocated: a 400 KB crafted row stops at 51 MB, not at the 806 MB it holds.
 */
export function legacyInflateLimit(bodyLength: number): number {
  return Math.min(
    3 * constants.MAX_STRING_LENGTH,
    Math.max(LEGACY_INFLATE_FLOOR, bodyLength * LEGACY_INFLATE_RATIO),
  );
}

/**
 * The record's text in a row's body: its UTF-8 JSON, or (written by agent-machine 0.1) that JSON
 * compressed with raw DEFLATE. A record starts with `{"`, which no DEFLATE stream of a record
 * starts with: `{` would open a block of fixed codes whose first code, with the bits of `"`, is the
 * literal 0xE4, where a record's first literal is `{` (JOURNAL_FORMAT.md). Inflating every row
 * cost a load more than parsing the records' JSON (`npm run bench persistence-loads`).
 */
export function bodyText(body: Uint8Array, at: StoredAt): string {
  if (body[0] === 0x7b && body[1] === 0x22)
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const limit = legacyInflateLimit(body.byteLength);
  try {
    return inflateRawSync(body, { maxOutputLength: limit }).toString('utf8');
  } catch (error) {
    const tooLarge = (error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE';
    throw new CorruptSessionError(
      at.sessionId,
      tooLarge
        ? `a journal record of ${body.byteLength} bytes inflates to more than ${limit} bytes`
        : `a journal record cannot be decompressed: ${(error as Error).message}`,
      at.location,
      null,
      { cause: error },
    );
  }
}
