import { createRequire } from 'node:module';
import { InvalidArgumentError } from '../state/errors';

/**
 * The request header by which a page says the AI SDK major of its chat client (`6`, `7`): set it on
 * the transport (`new DefaultChatTransport({ api, headers: { 'x-ai-sdk-version': '6' } })`) and
 * it is sent with each message and each resumed stream.
 */
export const AI_SDK_VERSION_HEADER = 'x-ai-sdk-version';

/** The AI SDK majors whose chat clients a pool chat's stream is written for. */
export type AiSdkVersion = 6 | 7;

/** A handler's `aiSdkVersion` option, checked; undefined: the major of the installed `ai` package. */
export function aiSdkVersionOption(value: unknown): AiSdkVersion {
  if (value === undefined) return installedAiMajor();
  if (value === 6 || value === 7) return value;
  throw new InvalidArgumentError(
    'aiSdkVersion',
    `${JSON.stringify(value)} is not 6 or 7 (the AI SDK major of the page's chat client)`,
  );
}

/** The AI SDK major of the chat client that sent `request`: its `x-ai-sdk-version` header, else `fallback`. */
export function clientAiSdkVersion(request: Request, fallback: AiSdkVersion): AiSdkVersion {
  const header = request.headers.get(AI_SDK_VERSION_HEADER);
  const major = header === null ? Number.NaN : Number.parseInt(header, 10);
  if (major === 6 || major === 7) return major;
  if (header !== null && major > 7) return 7;
  return fallback;
}

let installed: AiSdkVersion | undefined;

/**
 * The major of the `ai` package this library finds installed (in one app, the one the page's chat
 * client comes from): 7 from 7 on; 6 when it is older, or cannot be read (6's stream is read by both).
 */
function installedAiMajor(): AiSdkVersion {
  if (installed !== undefined) return installed;
  try {
    const { version } = createRequire(import.meta.url)('ai/package.json') as { version?: unknown };
    installed = Number.parseInt(String(version), 10) >= 7 ? 7 : 6;
  } catch {
    // not installed where this library can see it: the stream every client reads
    installed = 6;
  }
  return installed;
}
