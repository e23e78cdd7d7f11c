import { randomUUID } from 'node:crypto';

/** A new random identifier (UUID v4) for agents, executions, steps and tool executions. */
export function newId(): string {
  const id = randomUUID();
  // Node builds the UUID by concatenation: V8 keeps it as a tree of about twenty string pieces
  // (~490 bytes). Reading a character flattens it in place (~70 bytes); a state holds thousands.
  id.charCodeAt(0);
  return id;
}
