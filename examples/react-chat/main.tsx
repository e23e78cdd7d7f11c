/// <reference lib="dom" />
/**
 * The React chat page (bundled with esbuild by examples/http-app.ts when started with
 * CHAT_CLIENT=react): `useChat` from `@ai-sdk/react` against `createChatHandler`.
 *
 * - The chat id is in the address (`?chat=<id>`); the stored conversation is fetched from
 *   `GET /api/chat/<id>/messages` before the chat mounts, so a reload shows it.
 * - `resume: true`: a reload mid-answer follows the run still going on (`GET /api/chat/<id>/stream`).
 * - While a tool call waits for approval the input is disabled: the server refuses a new message
 *   until the approval is decided (409), so the page never sends one.
 */
import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  generateId,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai';
import { type FormEvent, useState } from 'react';
import { createRoot } from 'react-dom/client';

const API = '/api/chat';

// biome-ignore lint/suspicious/noExplicitAny: a tool part's fields depend on its state
type ToolPart = any;

function ToolView({ part, decide }: { part: ToolPart; decide: (approved: boolean) => void }) {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
  const interrupted = part.approval?.descriptor?.reason === 'interrupted';
  return (
    <div className="tool" data-tool={name} data-state={part.state}>
      <code>{`${name}(${JSON.stringify(part.input ?? {})})`}</code>
      {part.state === 'output-available' && <pre className="output">{format(part.output)}</pre>}
      {part.state === 'output-error' && <pre className="output error">{part.errorText}</pre>}
      {part.state === 'output-denied' && <span className="denied">denied</span>}
      {part.state === 'approval-requested' && (
        // a call a crash cut off (reason 'interrupted') may have run already: say so before Approve
        <span className={interrupted ? 'approval interrupted' : 'approval'}>
          {interrupted
            ? 'interrupted: this may already have happened: check before running it again'
            : 'needs your approval'}{' '}
          <button type="button" className="approve" onClick={() => decide(true)}>
            Approve
          </button>
          <button type="button" className="deny" onClick={() => decide(false)}>
            Deny
          </button>
        </span>
      )}
      {(part.state === 'input-available' || part.state === 'approval-responded') && (
        <span className="running">running…</span>
      )}
    </div>
  );
}

function stopRun(id: string): Promise<Response> {
  return fetch(`${API}/${encodeURIComponent(id)}/stop`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
}

function format(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 1);
}

/** Whether a call of the last message waits for a person's decision. */
export function awaitsApproval(messages: readonly UIMessage[]): boolean {
  const last = messages.at(-1);
  return (
    last?.role === 'assistant' &&
    last.parts.some((part) => isToolUIPart(part) && part.state === 'approval-requested')
  );
}

function Chat({ id, stored }: { id: string; stored: UIMessage[] }) {
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    id,
    messages: stored,
    transport: new DefaultChatTransport({ api: API }),
    // A run still going on after a reload continues here.
    resume: true,
    // Once every approval asked for is answered, the answers go to the server by themselves.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [text, setText] = useState('');
  const busy = status === 'submitted' || status === 'streaming';
  const waiting = awaitsApproval(messages);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!text.trim() || busy || waiting) return;
    void sendMessage({ text: text.trim() });
    setText('');
  };
  return (
    <main>
      <header>
        <h1>agent-machine chat (React)</h1>
        <span id="status" data-status={status} data-waiting={String(waiting)}>
          {error ? `error: ${error.message}` : waiting ? 'waiting for your approval' : status}
        </span>
      </header>
      <ol id="messages">
        {messages.map((message) => (
          <li key={message.id} className={message.role} data-role={message.role} data-id={message.id}>
            {message.parts.map((part, index) => {
              const key = `${message.id}-${index}`;
              if (part.type === 'text')
                return (
                  <p key={key} className="text">
                    {part.text}
                  </p>
                );
              if (part.type === 'data-subagent') {
                const { name, status, steps } = part.data as { name: string; status: string; steps: number };
                return (
                  <div key={key} className="subagent" data-status={status}>
                    {`${name}: ${status}, ${steps} steps`}
                  </div>
                );
              }
              if (!isToolUIPart(part)) return null;
              const decide = (approved: boolean) =>
                void addToolApprovalResponse({
                  id: (part as ToolPart).approval.id,
                  approved,
                  ...(approved ? {} : { reason: 'denied in the chat page' }),
                });
              return <ToolView key={key} part={part} decide={decide} />;
            })}
          </li>
        ))}
      </ol>
      <form id="composer" onSubmit={submit}>
        <input
          id="text"
          autoComplete="off"
          value={text}
          disabled={waiting}
          placeholder={
            waiting ? 'Approve or deny the call above first' : 'Ask about Lisbon, or pay the deposit'
          }
          onChange={(event) => setText(event.target.value)}
        />
        <button id="send" type="submit" disabled={busy || waiting}>
          Send
        </button>
        {busy && (
          // Asks the server to stop the run (in whichever process runs it); the answer then ends.
          <button id="stop" type="button" onClick={() => void stopRun(id)}>
            Stop
          </button>
        )}
      </form>
    </main>
  );
}

async function main(): Promise<void> {
  let id = new URLSearchParams(location.search).get('chat');
  let response = id ? await fetch(`${API}/${encodeURIComponent(id)}/messages`) : null;
  // No chat id, or one the server refuses (400): start a new chat under an id of our own.
  if (!id || response?.status === 400) {
    id = generateId();
    history.replaceState(null, '', `?chat=${id}`);
    response = await fetch(`${API}/${id}/messages`);
  }
  if (!response?.ok) throw new Error(`Loading the chat failed: ${response?.status}`);
  const stored = (await response.json()) as { messages: UIMessage[] };
  const root = document.getElementById('root');
  if (!root) throw new Error('The page has no #root element.');
  createRoot(root).render(<Chat id={id} stored={stored.messages} />);
  document.body.dataset.ready = 'true';
}

void main();
