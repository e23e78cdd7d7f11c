/**
 * The hook stages of the loop that the hooks worker runs, one per lifecycle point (seed 003):
 * beforeToolUse / afterToolUse run inside the tool executor, per call.
 */
export type HookStage = 'beforeExecution' | 'beforeStep' | 'afterStep' | 'afterExecution' | 'onError';
