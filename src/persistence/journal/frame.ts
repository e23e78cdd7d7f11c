/**
 * The framing of the file journal: each record is `[length: u32 BE][crc32: u32 BE][payload]`, the
 * payload being the record's UTF-8 JSON. A record whose length runs past the end of the file or
 * whose checksum does not match is where a write was cut off (a crash): it and anything after it
 * are not part of the journal.
 */
export const FRAME_HEADER_BYTES = 8;

/** The bytes of one framed record. */
export function frame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  out.writeUInt32BE(payload.length, 0);
  out.writeUInt32BE(crc32(payload), 4);
  payload.copy(out, FRAME_HEADER_BYTES);
  return out;
}

/** The records of a journal file, and the offset where the intact part ends. */
export function unframe(bytes: Uint8Array): { texts: string[]; end: number } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const texts: string[] = [];
  let offset = 0;
  while (offset + FRAME_HEADER_BYTES <= buffer.length) {
    const length = buffer.readUInt32BE(offset);
    const start = offset + FRAME_HEADER_BYTES;
    if (start + length > buffer.length) break;
    const payload = buffer.subarray(start, start + length);
    if (crc32(payload) !== buffer.readUInt32BE(offset + 4)) break;
    texts.push(payload.toString('utf8'));
    offset = start + length;
  }
  return { texts, end: offset };
}

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE), as zlib computes it. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++)
    crc = (TABLE[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
