import * as zlib from 'node:zlib';

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

// zlib.crc32 is Node >= 20.15 and 22.2; older Nodes use the table.
const native = (zlib as { crc32?: (data: string | Uint8Array, value?: number) => number }).crc32;

/**
 * CRC-32 (IEEE), as zlib computes it, of bytes or of a string's UTF-8 bytes; `value`, the CRC-32 of
 * what comes before them, continues it (`crc32(b, crc32(a))` is the CRC-32 of a then b).
 */
export function crc32(data: string | Uint8Array, value = 0): number {
  if (native) return native(data, value);
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let crc = (value ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++)
    crc = (TABLE[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
