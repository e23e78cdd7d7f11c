import { InvalidArgumentError, shownValue } from '../state/errors';

/**
 * What an acknowledged save of a durable store survives:
 * - `'full'` (the default): a process crash, and a power loss or OS crash (each save is flushed
 *   to the disk before it is acknowledged: fdatasync of the session file, or of SQLite's WAL file,
 *   which the saves of many sessions at once share: sqlite-group-commit.ts);
 * - `'process'`: a process crash (SIGKILL, an uncaught error, an OOM kill): the save is in the
 *   operating system's hands when acknowledged, not yet on the disk (files: no flush; SQLite: WAL
 *   with `synchronous = NORMAL`). A power loss or OS crash can lose the last saves; SQLite keeps
 *   the database sound, while a session file can be left damaged (the OS writes pages out in any
 *   order), which its load reports with CorruptSessionError.
 */
export type Durability = 'full' | 'process';

const DURABILITIES: readonly Durability[] = ['full', 'process'];

/** `options.durability` of a store, checked: `'full'` when not given. */
export function durabilityOption(value: unknown): Durability {
  if (value === undefined) return 'full';
  if (DURABILITIES.includes(value as Durability)) return value as Durability;
  throw new InvalidArgumentError(
    'options.durability',
    `${shownValue(value)} is not one of ${DURABILITIES.map((d) => `'${d}'`).join(', ')}`,
  );
}
