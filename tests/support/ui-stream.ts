/** Reading a UI message stream response chunk by chunk, as raw JSON (the tests check the order). */

// biome-ignore lint/suspicious/noExplicitAny: chunks are whatever JSON the server sent
export type Chunk = { type: string; [field: string]: any };

/** Yields each `data:` event of an SSE body as parsed JSON, and `'[DONE]'` for the end marker. */
export async function* sseEvents(response: Response): AsyncGenerator<Chunk | '[DONE]'> {
  if (!response.body) throw new Error('The response has no body');
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const bytes of response.body) {
    buffered += decoder.decode(bytes, { stream: true });
    let end = buffered.indexOf('\n\n');
    while (end !== -1) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      yield data === '[DONE]' ? '[DONE]' : (JSON.parse(data) as Chunk);
      end = buffered.indexOf('\n\n');
    }
  }
}

/** Every chunk of the response, checking that the stream ends with `[DONE]`. */
export async function readChunks(response: Response): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  let done = false;
  for await (const event of sseEvents(response)) {
    if (done) throw new Error('An event came after [DONE]');
    if (event === '[DONE]') done = true;
    else chunks.push(event);
  }
  if (!done) throw new Error('The stream ended without [DONE]');
  return chunks;
}

/** The body DefaultChatTransport posts for a user message `text` in chat `id`. */
export function userMessageBody(id: string, text: string): string {
  return JSON.stringify({
    id,
    messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text }] }],
    trigger: 'submit-message',
  });
}

export const postJson = (url: string, body: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
