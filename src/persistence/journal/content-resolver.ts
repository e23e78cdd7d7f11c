import { isRecord, setOwn } from '../../state/json-value';
import { CorruptSessionError } from '../errors';
import type { StoredAt } from '../session-document';

/** Puts stored content back where a record refers to it, in the record's own objects. */
export class ContentResolver {
  constructor(
    private readonly content: ReadonlyMap<string, string>,
    private readonly at: StoredAt,
  ) {}

  text(hash: unknown): string {
    const text = typeof hash === 'string' ? this.content.get(hash) : undefined;
    if (text === undefined)
      throw new CorruptSessionError(
        this.at.sessionId,
        `the journal refers to content ${JSON.stringify(hash)} that it does not hold`,
        this.at.location,
      );
    return text;
  }

  message(message: unknown): void {
    if (isRecord(message) && isRecord(message.content)) message.content = this.text(message.content.$c);
  }

  /** The execution with its value, without `valueRef`: a new object (a delete left V8's slow dictionary mode). */
  toolExecution(execution: unknown): unknown {
    if (!isRecord(execution) || !isRecord(execution.valueRef)) return execution;
    const ref = execution.valueRef;
    const value = typeof ref.text === 'string' ? this.text(ref.text) : JSON.parse(this.text(ref.json));
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(execution)) if (key !== 'valueRef') setOwn(out, key, execution[key]);
    out.value = value;
    return out;
  }

  stepExecution(item: unknown): void {
    if (!isRecord(item) || !isRecord(item.step)) return;
    const step = item.step;
    if (Array.isArray(step.inputMessages)) for (const m of step.inputMessages) this.message(m);
    if (Array.isArray(step.outputMessages)) for (const m of step.outputMessages) this.message(m);
    const executions = step.toolExecutions;
    if (Array.isArray(executions))
      for (let i = 0; i < executions.length; i++) executions[i] = this.toolExecution(executions[i]);
  }
}
