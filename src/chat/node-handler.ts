import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/**
 * Serves a Web-standard handler (`createChatHandler`'s) on node:http: the request becomes a
 * `Request` (whose `signal` aborts when the client goes away), the `Response` is written back as it
 * streams (with backpressure), and a client that goes away, before the answer or while reading it,
 * cancels the body and has its response ended.
 *
 * @example
 * createServer(toNodeHandler(createChatHandler({ agent }))).listen(3000, '127.0.0.1');
 */
export function toNodeHandler(
  handler: (request: Request) => Promise<Response>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    serve(handler, req, res).catch((error: unknown) => {
      console.error(error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end();
    });
  };
}

async function serve(
  handler: (request: Request) => Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value])
      headers.append(name, one);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  // Listened for from the start: a client may leave while the handler is still working.
  const left = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) left.abort();
  });
  const request = new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`), {
    method: req.method,
    headers,
    signal: left.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit);
  const response = await handler(request);
  if (left.signal.aborted) {
    // no one to answer: the body is cancelled unread, and the response ended
    await response.body?.cancel().catch((error: unknown) => console.error(error));
    res.end();
    return;
  }

  const outgoing: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) if (name !== 'set-cookie') outgoing[name] = value;
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) outgoing['set-cookie'] = cookies;
  // An empty statusText (Response.json sets none) leaves Node's standard reason phrase.
  if (response.statusText) res.writeHead(response.status, response.statusText, outgoing);
  else res.writeHead(response.status, outgoing);
  if (!response.body) {
    res.end();
    return;
  }
  // the headers go now: a stream whose first chunk comes later (a queued message's answer) is answered at once
  res.flushHeaders();
  const reader = response.body.getReader();
  const cancel = () => reader.cancel().catch((error: unknown) => console.error(error));
  left.signal.addEventListener('abort', cancel, { once: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value) && !left.signal.aborted) {
      await new Promise<void>((resolve) => {
        res.once('drain', resolve);
        left.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
  }
  res.end();
}
