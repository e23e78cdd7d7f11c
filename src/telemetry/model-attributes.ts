import type { TelemetryAttributes } from './telemetry-options';

/** What a chat span reads of an AI SDK language model (V3 and V4 alike). */
export interface TracedModel {
  readonly modelId: string;
  readonly provider: string;
}

/**
 * The GenAI conventions' names for the AI SDK's providers, by the first part of the model's
 * `provider` (`openai.chat` -> `openai`); a provider not listed keeps that first part.
 */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  openai: 'openai',
  azure: 'azure.ai.openai',
  anthropic: 'anthropic',
  'amazon-bedrock': 'aws.bedrock',
  bedrock: 'aws.bedrock',
  mistral: 'mistral_ai',
  xai: 'x_ai',
  groq: 'groq',
  deepseek: 'deepseek',
  perplexity: 'perplexity',
  cohere: 'cohere',
};

const known = new WeakMap<object, TelemetryAttributes>();

/**
 * `gen_ai.provider.name` of a model, and `server.address` / `server.port` when the model exposes
 * where it sends requests (the AI SDK's provider packages keep a `config` with a `baseURL` or a
 * `url()` builder). Read once per model object.
 *
 * @example
 * modelAttributes(createOpenAICompatible({ name: 'local', baseURL: 'http://127.0.0.1:8080/v1' }).chatModel('m'));
 * // { 'gen_ai.provider.name': 'local', 'server.address': '127.0.0.1', 'server.port': 8080 }
 */
export function modelAttributes(model: TracedModel): TelemetryAttributes {
  let attributes = known.get(model);
  if (!attributes) {
    const url = baseUrl(model);
    attributes = {
      'gen_ai.provider.name': providerName(String(model.provider ?? '')),
      'server.address': url?.hostname.replace(/^\[(.*)\]$/, '$1'),
      'server.port': url ? Number(url.port) || (url.protocol === 'http:' ? 80 : 443) : undefined,
    };
    known.set(model, attributes);
  }
  return attributes;
}

function providerName(provider: string): string | undefined {
  if (provider === '') return undefined;
  if (provider.startsWith('google.vertex')) return 'gcp.vertex_ai';
  if (provider.startsWith('google.')) return 'gcp.gemini';
  const first = provider.split('.')[0] as string;
  return PROVIDER_NAMES[first] ?? first;
}

/** The model's base URL, if its provider package exposes one; never throws (a model is any object). */
function baseUrl(model: TracedModel): URL | null {
  try {
    const config = (model as { config?: { baseURL?: unknown; url?: unknown } }).config;
    const given =
      typeof config?.baseURL === 'string'
        ? config.baseURL
        : typeof config?.url === 'function'
          ? config.url({ modelId: model.modelId, path: '' })
          : null;
    return typeof given === 'string' && URL.canParse(given) ? new URL(given) : null;
  } catch {
    // A provider whose url() needs more than a path: where it sends requests stays unrecorded.
    return null;
  }
}
