import { InvalidArgumentError } from '../state/errors';
import { asJsonValue, isRecord, UnsavableValueError, ValueTooDeepError } from '../state/json-value';
import type { ProviderMetadata } from '../state/message';

// The values an AI SDK message brings in (tool inputs, JSON results, provider options) are kept as
// every other value entering a state is (`asJsonValue`), so what `fromModelMessages` accepts saves
// and loads; a value JSON cannot hold is refused with the path of its part in the messages.

const WHAT = 'A value of the ModelMessages';

/**
 * `value` as the JSON the state keeps; ValueTooDeepError or UnsavableValueError naming `path` (in
 * the messages) followed by the path inside the value.
 *
 * @example
 * jsonValueAt({ n: 1n }, 'messages[1].content[0].input'); // throws: ... (at messages[1].content[0].input.n) ...
 */
export function jsonValueAt(value: unknown, path: string): unknown {
  try {
    return asJsonValue(value, WHAT);
  } catch (error) {
    if (error instanceof ValueTooDeepError) throw new ValueTooDeepError(WHAT, joined(path, error.path));
    if (error instanceof UnsavableValueError)
      throw new UnsavableValueError(WHAT, joined(path, error.path), error.detail);
    throw error;
  }
}

/**
 * The AI SDK's `providerOptions` at `path` (`{ [provider]: { ...JSON } }`) as the provider metadata a
 * message or part keeps; none when absent or empty. Anything else is refused, naming the provider.
 */
export function providerMetadataAt(options: unknown, path: string): { providerMetadata?: ProviderMetadata } {
  if (options === undefined || options === null) return {};
  const at = `${path}.providerOptions`;
  const plain = jsonValueAt(options, at);
  if (!isRecord(plain))
    throw new InvalidArgumentError(at, 'must be an object of options by provider ({ openai: { ... } })');
  const providers = Object.keys(plain);
  for (const provider of providers) {
    const value = plain[provider];
    if (!isRecord(value))
      throw new InvalidArgumentError(
        `${at}.${provider}`,
        `must be an object of this provider's options, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`,
      );
  }
  return providers.length ? { providerMetadata: plain as ProviderMetadata } : {};
}

/** `inner` (a path inside a value: `a.b`, `[0].c`) appended to `outer`. */
function joined(outer: string, inner: string): string {
  if (!inner) return outer;
  return inner.startsWith('[') ? `${outer}${inner}` : `${outer}.${inner}`;
}
