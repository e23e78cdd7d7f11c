import { randomUUID } from 'node:crypto';

/** A new random identifier (UUID v4) for agents, executions, steps and tool executions. */
export function newId(): string {
  // Node builds the UUID by concatenation: V8 keeps it as a tree of about twenty string pieces
  // (~490 bytes held per id; a state holds thousands). `toLowerCase` (a no-op on the value: the
  // UUID is lower case) returns it flat (~65 bytes) on Node 20 and 22 alike; reading a character,
  // which flattened it on Node 20, no longer does on Node 22.
  return randomUUID().toLowerCase();
}
