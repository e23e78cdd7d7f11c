import { InvalidStateError } from '../state/errors';
import { CorruptExecutionRecordError } from './errors';
import { ExecutionRecord } from './execution-record';

/**
 * Reads a stored record (`JSON.stringify(record)`), turning every way it can be wrong into
 * CorruptExecutionRecordError naming the execution, where it is stored and the bad field.
 */
export function decodeStoredRecord(text: string, executionId: string, location: string): ExecutionRecord {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CorruptExecutionRecordError(
      executionId,
      `not valid JSON (truncated or overwritten): ${(error as Error).message}`,
      location,
      null,
      { cause: error },
    );
  }
  let record: ExecutionRecord;
  try {
    record = ExecutionRecord.fromJSON(data);
  } catch (error) {
    if (!(error instanceof InvalidStateError)) throw error;
    throw new CorruptExecutionRecordError(executionId, error.message, location, error.path, { cause: error });
  }
  if (record.executionId !== executionId)
    throw new CorruptExecutionRecordError(
      executionId,
      `it holds execution ${JSON.stringify(record.executionId)}`,
      location,
      'executionId',
    );
  return record;
}
