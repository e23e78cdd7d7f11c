import { AppendOnlyList } from './append-only-list';
import { setOwn } from './json-value';
import type { Message } from './message';

/** The section the conversation lives in; other sections (buffer, summary) are for hooks. */
export const DEFAULT_SECTION = 'messages';
/** Messages steered into a run (`{ type: 'steer' }`), saved with it, joining the conversation at the next step. */
export const STEERING_SECTION = 'steering';

/** Structured output the final answer must follow. `schema` is a JSON Schema. */
export type ResponseFormat =
  | { readonly type: 'text' }
  | { readonly type: 'json'; readonly schema?: Readonly<Record<string, unknown>>; readonly name?: string };

/** Messages kept in named sections; appends share structure with the previous version. */
export class MessageStore {
  // A Map, copied on write: a frozen null-prototype record (the first version) got a hidden class of
  // its own from V8 at every write, i.e. at every step.
  private constructor(private readonly sections: ReadonlyMap<string, AppendOnlyList<Message>>) {}

  static empty(): MessageStore {
    return emptyStore;
  }

  static of(sections: Record<string, readonly Message[]>): MessageStore {
    const lists = new Map<string, AppendOnlyList<Message>>();
    for (const [name, messages] of Object.entries(sections)) lists.set(name, AppendOnlyList.of(messages));
    return new MessageStore(lists);
  }

  sectionNames(): readonly string[] {
    return [...this.sections.keys()];
  }
  section(name: string = DEFAULT_SECTION): readonly Message[] {
    return this.list(name).toArray();
  }
  list(name: string = DEFAULT_SECTION): AppendOnlyList<Message> {
    return this.sections.get(name) ?? emptyList;
  }
  count(name: string = DEFAULT_SECTION): number {
    return this.list(name).size;
  }

  withAppended(messages: readonly Message[], name: string = DEFAULT_SECTION): MessageStore {
    if (messages.length === 0) return this;
    return this.withSection(name, this.list(name).append(...messages));
  }
  withSectionReplaced(messages: readonly Message[], name: string = DEFAULT_SECTION): MessageStore {
    return this.withSection(name, AppendOnlyList.of(messages));
  }
  private withSection(name: string, list: AppendOnlyList<Message>): MessageStore {
    const lists = new Map(this.sections);
    lists.set(name, list);
    return new MessageStore(lists);
  }

  toJSON(): Record<string, readonly Message[]> {
    const out: Record<string, readonly Message[]> = {};
    for (const [name, list] of this.sections) setOwn(out, name, list.toArray());
    return out;
  }
}

const emptyList = AppendOnlyList.empty<Message>();
const emptyStore = MessageStore.of({});

interface AgentContextProps {
  readonly store: MessageStore;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly systemPrompt: string;
  readonly responseFormat: ResponseFormat;
}

/** What the agent sends to the model: messages, metadata, system prompt and response format. */
export class AgentContext {
  private constructor(private readonly props: AgentContextProps) {}

  static empty(): AgentContext {
    return emptyContext;
  }

  static of(props: Partial<AgentContextProps>): AgentContext {
    return new AgentContext({
      store: props.store ?? MessageStore.empty(),
      metadata: Object.freeze({ ...(props.metadata ?? {}) }),
      systemPrompt: props.systemPrompt ?? '',
      responseFormat: props.responseFormat ?? textFormat,
    });
  }

  store(): MessageStore {
    return this.props.store;
  }
  messages(): readonly Message[] {
    return this.props.store.section(DEFAULT_SECTION);
  }
  metadata(): Readonly<Record<string, unknown>> {
    return this.props.metadata;
  }
  systemPrompt(): string {
    return this.props.systemPrompt;
  }
  responseFormat(): ResponseFormat {
    return this.props.responseFormat;
  }

  withStore(store: MessageStore): AgentContext {
    return new AgentContext({ ...this.props, store });
  }
  withMessages(messages: readonly Message[], section: string = DEFAULT_SECTION): AgentContext {
    return this.withStore(this.props.store.withAppended(messages, section));
  }
  withSectionReplaced(messages: readonly Message[], section: string): AgentContext {
    return this.withStore(this.props.store.withSectionReplaced(messages, section));
  }
  withMetadata(key: string, value: unknown): AgentContext {
    return new AgentContext({
      ...this.props,
      metadata: Object.freeze({ ...this.props.metadata, [key]: value }),
    });
  }
  withoutMetadata(key: string): AgentContext {
    const { [key]: _removed, ...rest } = this.props.metadata;
    return new AgentContext({ ...this.props, metadata: Object.freeze(rest) });
  }
  withSystemPrompt(systemPrompt: string): AgentContext {
    return new AgentContext({ ...this.props, systemPrompt });
  }
  withResponseFormat(responseFormat: ResponseFormat): AgentContext {
    return new AgentContext({ ...this.props, responseFormat });
  }

  toJSON() {
    return {
      messages: this.props.store.toJSON(),
      metadata: this.props.metadata,
      systemPrompt: this.props.systemPrompt,
      responseFormat: this.props.responseFormat,
    };
  }
}

const textFormat: ResponseFormat = Object.freeze({ type: 'text' });
const emptyContext = AgentContext.of({});
