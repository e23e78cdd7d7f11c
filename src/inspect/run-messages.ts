/** Messages as the viewer holds them: stored once, by identity. */
import type { AppendOnlyList } from '../state/append-only-list';
import type { Message } from '../state/message';
import type { MessageView } from './run-view';
import { pretty } from './view-helpers';

/** Messages stored once for the page, by identity: a step's input is a range of the conversation. */
export class MessageTable {
  readonly views: MessageView[] = [];
  private readonly index = new Map<Message, number>();

  add(message: Message): number {
    const known = this.index.get(message);
    if (known !== undefined) return known;
    const i = this.views.length;
    this.views.push(messageView(message));
    this.index.set(message, i);
    return i;
  }

  /** Adds a whole list; returns the index of its first message when they got contiguous indexes. */
  addList(list: AppendOnlyList<Message>): number | null {
    const base = this.views.length;
    let expected = base;
    let contiguous = true;
    for (const message of list) {
      if (this.add(message) !== expected) contiguous = false;
      expected++;
    }
    return contiguous ? base : null;
  }

  ranges(
    list: AppendOnlyList<Message>,
    conversation: AppendOnlyList<Message>,
    conversationBase: number | null,
  ): Array<[number, number]> {
    if (list.size === 0) return [];
    if (conversationBase !== null && list.isPrefixOf(conversation))
      return [[conversationBase, conversationBase + list.size]];
    const out: Array<[number, number]> = [];
    for (const message of list) {
      const i = this.add(message);
      const last = out[out.length - 1];
      if (last && last[1] === i) last[1] = i + 1;
      else out.push([i, i + 1]);
    }
    return out;
  }
}

function messageView(message: Message): MessageView {
  const view: {
    role: string;
    content: string;
    toolCalls?: Array<{ id: string; name: string; args: string }>;
    toolCallId?: string;
    toolName?: string;
    isError?: boolean;
  } = { role: message.role, content: message.content };
  if (message.toolCalls?.length)
    view.toolCalls = message.toolCalls.map((c) => ({ id: c.id, name: c.name, args: pretty(c.args) }));
  if (message.toolCallId !== undefined) view.toolCallId = message.toolCallId;
  if (message.toolName !== undefined) view.toolName = message.toolName;
  if (message.isError) view.isError = true;
  return view;
}
