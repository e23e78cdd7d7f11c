import { crc32 } from './crc32';

/**
 * The framing of the file journal: each record is `[length: u32 BE][crc32: u32 BE][payload]`, the
 * payload being the record's UTF-8 JSON (never empty). A frame that runs past the end of the file,
 * is empty, or whose checksum does not match is bad. A bad frame with no intact frame anywhere
 * after it is where an append was cut off (a crash): it and what follows are not part of the
 * journal. A bad frame with an intact frame after it is damage: appends only ever tear the end.
 */
const FRAME_HEADER_BYTES = 8;

/** The bytes of one framed record. */
export function frame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  out.writeUInt32BE(payload.length, 0);
  out.writeUInt32BE(crc32(payload), 4);
  payload.copy(out, FRAME_HEADER_BYTES);
  return out;
}

/**
 * The records of a journal file: their texts, the offset where the intact part ends, and, when a
 * bad frame is followed by an intact one, the offset of the bad frame (the file is damaged).
 */
export interface Unframed {
  readonly texts: string[];
  readonly end: number;
  readonly damagedAt: number | null;
}

export function unframe(bytes: Uint8Array): Unframed {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const texts: string[] = [];
  let offset = 0;
  for (let length = frameAt(buffer, offset); length > 0; length = frameAt(buffer, offset)) {
    texts.push(buffer.toString('utf8', offset + FRAME_HEADER_BYTES, offset + FRAME_HEADER_BYTES + length));
    offset += FRAME_HEADER_BYTES + length;
  }
  // The bad frame's own length may be what is damaged, so where the next frame would start is
  // not known: every later offset is tried.
  for (let at = offset + 1; at + FRAME_HEADER_BYTES < buffer.length; at++)
    if (frameAt(buffer, at) > 0) return { texts, end: offset, damagedAt: offset };
  return { texts, end: offset, damagedAt: null };
}

/** The payload length of the intact frame at `offset`, or 0 when there is none. */
function frameAt(buffer: Buffer, offset: number): number {
  if (offset + FRAME_HEADER_BYTES > buffer.length) return 0;
  const length = buffer.readUInt32BE(offset);
  const start = offset + FRAME_HEADER_BYTES;
  if (length === 0 || length > buffer.length - start) return 0;
  return crc32(buffer.subarray(start, start + length)) === buffer.readUInt32BE(offset + 4) ? length : 0;
}
