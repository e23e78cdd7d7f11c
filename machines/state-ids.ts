/**
 * The chart's state names, spelled once. Transitions target states by these ids; code outside
 * machines/ reads a snapshot through them (`snapshot.matches(...)`, `statePath`) or through the tags
 * (`LoopTag`), so a rename here is a rename everywhere (tests/machines/state-ids.test.ts checks that
 * every id names a state of the chart). State names are public API: README "The machine".
 */
export const StateId = {
  pending: '#agent.pending',
  inProgress: '#agent.inProgress',
  beforeExecution: '#agent.inProgress.beforeExecution',
  step: '#agent.inProgress.step',
  beforeStep: '#agent.inProgress.step.beforeStep',
  checkSignals: '#agent.inProgress.step.checkSignals',
  inference: '#agent.inProgress.step.inference',
  awaitingApproval: '#agent.inProgress.step.awaitingApproval',
  waitingForDecisions: '#agent.inProgress.step.awaitingApproval.waiting',
  intent: '#agent.inProgress.step.intent',
  tools: '#agent.inProgress.step.tools',
  afterStep: '#agent.inProgress.step.afterStep',
  record: '#agent.inProgress.step.record',
  continueOrStop: '#agent.inProgress.step.continueOrStop',
  failing: '#agent.inProgress.failing',
  afterExecution: '#agent.inProgress.afterExecution',
  failingAfterExecution: '#agent.inProgress.failingAfterExecution',
  finalizing: '#agent.inProgress.finalizing',
  concluding: '#agent.inProgress.concluding',
  completed: '#agent.completed',
  stopped: '#agent.stopped',
  failed: '#agent.failed',
} as const;
export type StateId = (typeof StateId)[keyof typeof StateId];

/** A state's dotted path below the machine (`inProgress.step.tools`), as traces and the viewer write it. */
export function statePath(id: StateId): string {
  return id.slice('#agent.'.length);
}

/** Tags of the chart's states, for code that asks what a snapshot means rather than where it is. */
export const LoopTag = {
  /** The execution has ended: `completed`, `stopped` or `failed`. */
  outcome: 'outcome',
  /** The run waits for decisions on tool calls (`awaitingApproval.waiting`). */
  awaitingDecisions: 'awaitingDecisions',
  /** A hook stage waits for the hooks worker's answer (`*.runHooks`). */
  runningHooks: 'runningHooks',
} as const;
export type LoopTag = (typeof LoopTag)[keyof typeof LoopTag];
