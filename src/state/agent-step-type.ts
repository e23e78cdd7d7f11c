/** What a step was, derived from its contents: Error > ToolExecution > FinalResponse. */
export const AgentStepType = {
  ToolExecution: 'tool_execution',
  FinalResponse: 'final_response',
  Error: 'error',
} as const;
export type AgentStepType = (typeof AgentStepType)[keyof typeof AgentStepType];
