/// <reference lib="dom" />
/**
 * The chat page's script (bundled with esbuild by examples/http-app.ts, no CDN): the AI SDK's own
 * chat client (`AbstractChat`, which React's `useChat` wraps) with `DefaultChatTransport`, and a
 * plain DOM view of its messages. The chat id (the session id on the server) is in the address,
 * `?chat=<id>`, so a reload shows the same conversation and picks up a run still going on.
 */
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  generateId,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai';

const API = '/api/chat';

/** The chat's state, kept here; every change re-renders the page. */
class PageChatState implements ChatState<UIMessage> {
  #status: ChatStatus = 'ready';
  #error: Error | undefined;
  #messages: UIMessage[];
  constructor(
    messages: UIMessage[],
    private readonly changed: () => void,
  ) {
    this.#messages = messages;
  }
  get status() {
    return this.#status;
  }
  set status(status: ChatStatus) {
    this.#status = status;
    this.changed();
  }
  get error() {
    return this.#error;
  }
  set error(error: Error | undefined) {
    this.#error = error;
    this.changed();
  }
  get messages() {
    return this.#messages;
  }
  set messages(messages: UIMessage[]) {
    this.#messages = messages;
    this.changed();
  }
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.#messages, message];
  };
  popMessage = () => {
    this.messages = this.#messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.#messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

class PageChat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage> & { state: PageChatState }) {
    super(init);
  }
}

const $ = <T extends HTMLElement>(selector: string) => document.querySelector(selector) as T;

function element(tag: string, attributes: Record<string, string>, ...children: Array<Node | string>) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

// biome-ignore lint/suspicious/noExplicitAny: a tool part's fields depend on its state
type ToolPart = any;

function toolView(chat: PageChat, part: ToolPart): HTMLElement {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
  const view = element(
    'div',
    { class: 'tool', 'data-tool': name, 'data-state': part.state },
    element('code', {}, `${name}(${JSON.stringify(part.input ?? {})})`),
  );
  if (part.state === 'output-available')
    view.append(element('pre', { class: 'output' }, format(part.output)));
  if (part.state === 'output-error') view.append(element('pre', { class: 'output error' }, part.errorText));
  if (part.state === 'output-denied') view.append(element('span', { class: 'denied' }, 'denied'));
  if (part.state === 'approval-requested') {
    const answer = (approved: boolean) => () => {
      void chat.addToolApprovalResponse({
        id: part.approval.id,
        approved,
        ...(approved ? {} : { reason: 'denied in the chat page' }),
      });
    };
    const approve = element('button', { type: 'button', class: 'approve' }, 'Approve');
    const deny = element('button', { type: 'button', class: 'deny' }, 'Deny');
    approve.addEventListener('click', answer(true));
    deny.addEventListener('click', answer(false));
    // a call a crash cut off (reason 'interrupted') may have run already: say so before Approve
    const interrupted = part.approval.descriptor?.reason === 'interrupted';
    const ask = interrupted
      ? 'interrupted: this may already have happened: check before running it again '
      : 'needs your approval ';
    view.append(
      element('span', { class: interrupted ? 'approval interrupted' : 'approval' }, ask, approve, deny),
    );
  }
  if (part.state === 'input-available' || part.state === 'approval-responded') {
    view.append(element('span', { class: 'running' }, 'running…'));
  }
  return view;
}

function format(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 1);
}

function render(chat: PageChat): void {
  const list = $('#messages');
  list.replaceChildren(
    ...chat.messages.map((message) => {
      const item = element('li', { class: message.role, 'data-role': message.role, 'data-id': message.id });
      for (const part of message.parts) {
        if (part.type === 'text') item.append(element('p', { class: 'text' }, part.text));
        else if (part.type === 'data-subagent') {
          const { name, status, steps } = part.data as { name: string; status: string; steps: number };
          item.append(
            element(
              'div',
              { class: 'subagent', 'data-status': status },
              `${name}: ${status}, ${steps} steps`,
            ),
          );
        } else if (part.type.startsWith('tool-') || part.type === 'dynamic-tool')
          item.append(toolView(chat, part));
      }
      return item;
    }),
  );
  const status = $('#status');
  status.textContent = chat.error ? `error: ${chat.error.message}` : chat.status;
  status.dataset.status = chat.status;
  const answering = chat.status === 'submitted' || chat.status === 'streaming';
  $<HTMLButtonElement>('#send').disabled = answering;
  // Stop asks the server to stop the run (in whichever process runs it); the answer then ends.
  $<HTMLButtonElement>('#stop').hidden = !answering;
  list.lastElementChild?.scrollIntoView({ block: 'end' });
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
  let scheduled = false;
  const changed = () => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      render(chat);
    });
  };
  const chat: PageChat = new PageChat({
    id,
    state: new PageChatState(stored.messages, changed),
    transport: new DefaultChatTransport({ api: API }),
    // Once every approval asked for is answered, the answers go to the server by themselves.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  $('#stop').addEventListener('click', () => {
    void fetch(`${API}/${encodeURIComponent(id)}/stop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
  });
  $('#composer').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = $<HTMLInputElement>('#text');
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    void chat.sendMessage({ text });
  });
  render(chat);
  document.body.dataset.ready = 'true';
  // A run still going on (the page was reloaded mid-answer) continues here.
  await chat.resumeStream();
}

void main();
