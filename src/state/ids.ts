import { randomUUID } from 'node:crypto';

/** A new random identifier (UUID v4) for agents, executions, steps and tool executions. */
export function newId(): string {
  return randomUUID();
}
