/** The run viewer's chart section: the path a run took through the statechart, its actors and events (from a trace). */
import { StateId, statePath } from '../../machines/state-ids';
import { esc, formatMs } from './html-format';
import type { ActorView, AgentView, PathView } from './run-model';
import { shortId } from './view-helpers';

const OUTCOMES = [StateId.completed, StateId.stopped, StateId.failed].map(statePath);

export function renderStatePath(agent: AgentView): string {
  if (!agent.statePath) {
    return '<p class="empty-note">Not recorded: this page was made from an AgentState. Record a trace with <code>recordTrace()</code> to see the path through the chart.</p>';
  }
  if (!agent.statePath.length) return '<p class="empty-note">No states recorded.</p>';
  // One line per step of the loop (entered at step.beforeStep), with the states before and after.
  const groups: Array<{ label: string; prefix: string; isStep: boolean; items: PathView[] }> = [];
  const stepPrefix = `${statePath(StateId.step)}.`;
  const inProgress = `${statePath(StateId.inProgress)}.`;
  const beforeStep = statePath(StateId.beforeStep);
  let steps = 0;
  let executions = 0;
  let previous = '';
  for (const item of agent.statePath) {
    // A new execution (a session runs one per user message); without beforeExecution hooks it
    // starts at its first step.
    if (item.path.startsWith(inProgress) && !previous.startsWith(inProgress)) {
      executions++;
      steps = 0;
      if (executions > 1)
        groups.push({ label: `run ${executions}`, prefix: inProgress, isStep: false, items: [] });
    }
    const current = groups[groups.length - 1];
    const entersStep = item.path.startsWith(beforeStep) && !previous.startsWith(beforeStep);
    previous = item.path;
    if (entersStep) {
      steps++;
      groups.push({ label: `step ${steps}`, prefix: stepPrefix, isStep: true, items: [item] });
    } else if (!current || (current.isStep && !item.path.startsWith(stepPrefix))) {
      groups.push({ label: current ? 'end' : 'start', prefix: inProgress, isStep: false, items: [item] });
    } else current.items.push(item);
  }
  const chip = (p: PathView, prefix: string) => {
    const shown = p.path.startsWith(prefix) ? p.path.slice(prefix.length) : p.path;
    const parts = shown.split('.');
    const leaf = parts.pop() ?? '';
    const outcome = OUTCOMES.includes(p.path);
    const t = ` title="${esc(`${p.path}${p.t === null ? '' : ` at ${formatMs(p.t)}`}`)}"`;
    return `<span class="node${outcome ? ` outcome ${esc(p.path)}` : ''}"${t}>${parts.length ? `${esc(parts.join('.'))}.` : ''}<b>${esc(leaf)}</b></span>`;
  };
  return `<div class="path" data-testid="state-path">${groups
    .map(
      (g) =>
        `<div class="path-row"><span class="path-label">${esc(g.label)}</span><span class="path-nodes">${g.items
          .map((p) => chip(p, g.prefix))
          .join('<span class="arrow">→</span>')}</span></div>`,
    )
    .join('')}</div>`;
}

export function actorNode(actor: ActorView): string {
  // Repeated leaf actors of one kind (a driver per step) are shown once with a count.
  const groups = new Map<string, ActorView[]>();
  const nested: ActorView[] = [];
  for (const child of actor.children) {
    if (child.children.length || child.agent) nested.push(child);
    else {
      const list = groups.get(child.src) ?? [];
      list.push(child);
      groups.set(child.src, list);
    }
  }
  const leafs = [...groups.entries()].map(([src, list]) => {
    const total = list.reduce((n, a) => n + (a.durationMs ?? 0), 0);
    const failed = list.filter((a) => a.status === 'error').length;
    return `<li><span class="node-line"><code>${esc(src)}</code> <span class="muted">× ${list.length} · ${esc(formatMs(total))} in all${failed ? ` · ${failed} failed` : ''}</span></span></li>`;
  });
  const label = `<code>${esc(actor.src)}</code> <span class="muted">${esc(actor.actor)}${actor.systemId ? ` · systemId ${esc(actor.systemId)}` : ''}${actor.agent ? ` · agent ${esc(shortId(actor.agent))}` : ''}</span>`;
  const children = [...nested.map(actorNode), ...leafs];
  return `<li><span class="node-line">${label}</span>${children.length ? `<ul>${children.join('')}</ul>` : ''}</li>`;
}

export function eventTable(agent: AgentView): string {
  if (!agent.events) return '';
  return `<details><summary>Events (${agent.events.length})</summary><table class="events"><thead><tr><th>at</th><th>event</th><th></th></tr></thead><tbody>${agent.events
    .map(
      (e) =>
        `<tr><td class="t">${esc(formatMs(e.t))}</td><td class="type">${e.kind === 'event' ? '→ ' : ''}${esc(e.type)}</td><td>${esc(e.summary)}</td></tr>`,
    )
    .join('')}</tbody></table></details>`;
}
