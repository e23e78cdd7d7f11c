/**
 * The one content hash and the one canonical JSON: the key content is stored under (the journal's
 * long strings, the trace's blobs) is `contentHash` of its text, a value's text being its
 * `canonicalJson` (object keys sorted), so equal content gives the same key whatever the key order
 * or object identity; approvals are signed over `canonicalJson` too.
 *
 * Node's crypto is used when the runtime offers it synchronously (`process.getBuiltinModule`,
 * Node >= 20.16); elsewhere (a browser, an older Node) a small pure-JS SHA-256 gives the same
 * digest. Nothing here imports a Node module, so the recorder can be bundled for the browser.
 */

/** Characters kept from the base64url SHA-256 digest: 132 bits. */
const CONTENT_HASH_LENGTH = 22;

/**
 * JSON text of `value` with object keys sorted at every level. Like `JSON.stringify`: `toJSON()`
 * is honoured, `undefined` and functions are left out of objects (and become `null` in arrays),
 * non-finite numbers become `null`.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  const out = write(value);
  return out === undefined ? 'null' : out;
}

function write(value: unknown): string | undefined {
  if (value === null) return 'null';
  if (typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return write((value as { toJSON: () => unknown }).toJSON());
  }
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return JSON.stringify(value.toString());
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`;
      const record = value as Record<string, unknown>;
      const parts: string[] = [];
      for (const key of Object.keys(record).sort()) {
        const item = write(record[key]);
        if (item !== undefined) parts.push(`${JSON.stringify(key)}:${item}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return undefined;
  }
}

/**
 * The key `text` is stored under: the first 22 characters of the base64url SHA-256 of its UTF-8
 * encoding (132 bits). A value's key is the key of its canonical JSON.
 *
 * @example
 * contentHash(canonicalJson({ role: 'user', content: 'hi' })) ===
 *   contentHash(canonicalJson({ content: 'hi', role: 'user' })); // true
 */
export function contentHash(text: string): string {
  if (nodeCrypto)
    return nodeCrypto
      .createHash('sha256')
      .update(text, 'utf8')
      .digest('base64url')
      .slice(0, CONTENT_HASH_LENGTH);
  return sha256Base64(text).replace(/\+/g, '-').replace(/\//g, '_').slice(0, CONTENT_HASH_LENGTH);
}

type NodeCrypto = {
  createHash(algorithm: string): {
    update(data: string, encoding: 'utf8'): { digest(encoding: 'base64' | 'base64url'): string };
  };
};

const nodeCrypto: NodeCrypto | undefined = (() => {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  return typeof proc?.getBuiltinModule === 'function'
    ? (proc.getBuiltinModule('node:crypto') as NodeCrypto | undefined)
    : undefined;
})();

/** SHA-256 of `text` as base64 (the form a Content-Security-Policy `'sha256-...'` source takes). */
export function sha256Base64(text: string): string {
  if (nodeCrypto) return nodeCrypto.createHash('sha256').update(text, 'utf8').digest('base64');
  return toBase64(sha256Bytes(new TextEncoder().encode(text)));
}

/** The pure-JS digest, exported for tests that compare it with Node's. */
export function sha256Portable(text: string): string {
  return toHex(sha256Bytes(new TextEncoder().encode(text)));
}

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

function sha256Bytes(message: Uint8Array): Uint8Array {
  const bitLength = message.length * 8;
  const padded = new Uint8Array((((message.length + 9 + 63) >> 6) << 6) >>> 0);
  padded.set(message);
  padded[message.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 0x100000000));
  view.setUint32(padded.length - 4, bitLength >>> 0);

  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) >>> 0;
    }
    let a = h[0]!;
    let b = h[1]!;
    let c = h[2]!;
    let d = h[3]!;
    let e = h[4]!;
    let f = h[5]!;
    let g = h[6]!;
    let hh = h[7]!;
    for (let i = 0; i < 64; i++) {
      const s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + s1 + ch + K[i]! + w[i]!) >>> 0;
      const s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (s0 + maj) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    h[0] = h[0]! + a;
    h[1] = h[1]! + b;
    h[2] = h[2]! + c;
    h[3] = h[3]! + d;
    h[4] = h[4]! + e;
    h[5] = h[5]! + f;
    h[6] = h[6]! + g;
    h[7] = h[7]! + hh;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(i * 4, h[i]!);
  return out;
}

function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += BASE64[(n >> 18) & 63];
    out += BASE64[(n >> 12) & 63];
    out += i + 1 < bytes.length ? BASE64[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.length ? BASE64[n & 63] : '=';
  }
  return out;
}
