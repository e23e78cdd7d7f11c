/** Which states and transitions of the chart the test model's paths took. */
import type { InspectionEvent } from 'xstate';
import type { Agent } from '../runtime/create-agent';

type StateNodeLike = {
  id: string;
  states: Record<string, StateNodeLike>;
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
};
type TransitionLike = {
  source: { id: string };
  target?: readonly { id: string }[];
  eventType: string;
  guard?: unknown;
};

function transitionKey(t: TransitionLike): string {
  const guard = t.guard
    ? ` [${typeof t.guard === 'object' ? (t.guard as { type?: string }).type : String(t.guard)}]`
    : '';
  const targets = t.target?.map((n) => n.id).join(',') ?? '(self)';
  return `${t.source.id} --${t.eventType || 'always'}${guard}--> ${targets}`;
}

const REPORTS = new Set(['tool.started', 'tool.finished', 'text.delta', 'context.compacted']);

export class Coverage {
  private readonly states = new Set<string>();
  private readonly transitions = new Set<string>();

  record(event: InspectionEvent): void {
    if (event.type === '@xstate.event') {
      this.recordReport(event);
      return;
    }
    if (event.type !== '@xstate.microstep' && event.type !== '@xstate.snapshot') return;
    const snapshot = event.snapshot as { _nodes?: { id: string }[] };
    for (const node of snapshot._nodes ?? []) this.states.add(node.id);
    if (event.type !== '@xstate.microstep') return;
    for (const t of (event as unknown as { _transitions: TransitionLike[] })._transitions) {
      this.transitions.add(transitionKey(t));
      for (const target of t.target ?? []) this.states.add(target.id);
    }
  }

  /**
   * Reports from the agent's workers (`tool.started`, `tool.finished`, `text.delta`,
   * `context.compacted`) are delivered without a macrostep (src/runtime/report-delivery.ts): the
   * inspector sees the event the agent received and the `xstate.emit` its `inProgress`
   * self-transition (`forwardReport`) makes, and no microstep. Such an event, received while the
   * agent is `inProgress`, is that transition taken.
   */
  private recordReport(event: InspectionEvent & { type: '@xstate.event' }): void {
    if (!REPORTS.has(event.event.type)) return;
    const snapshot = event.actorRef.getSnapshot() as { _nodes?: { id: string }[] };
    if (!snapshot._nodes?.some((node) => node.id === 'agent.inProgress')) return;
    this.transitions.add(`agent.inProgress --${event.event.type}--> (self)`);
  }

  report(machine: Agent['machine']) {
    const root = (machine as unknown as { root: StateNodeLike }).root;
    const allStates: string[] = [];
    const allTransitions: string[] = [];
    const walk = (node: StateNodeLike) => {
      allStates.push(node.id);
      for (const list of node.transitions.values())
        for (const t of list) allTransitions.push(transitionKey(t));
      for (const t of node.always ?? []) allTransitions.push(transitionKey(t));
      for (const child of Object.values(node.states)) walk(child);
    };
    walk(root);
    return {
      states: allStates,
      transitions: [...new Set(allTransitions)],
      missingStates: allStates.filter((s) => !this.states.has(s)),
      missingTransitions: [...new Set(allTransitions)].filter((t) => !this.transitions.has(t)),
    };
  }
}
