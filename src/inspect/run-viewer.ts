import { sha256Base64 } from '../state/content-hash';
import {
  esc,
  formatCost,
  formatDate,
  formatMs,
  formatNumber,
  jsonForScript,
  statusBadge,
  sum,
  truncate,
} from './html-format';
import { type AgentView, buildRunView, type RunInput, type RunView, type StepView } from './run-model';
import { VIEWER_CSS, VIEWER_JS } from './run-viewer-assets';
import { actorNode, eventTable, renderStatePath } from './run-viewer-chart';
import { shortId } from './view-helpers';

export interface RunViewerOptions {
  /** The page title; defaults to the trace's title, else "Run of agent <id>". */
  readonly title?: string;
}

/**
 * Renders a run as one self-contained HTML page (inline CSS and script, no network, no external
 * fonts): summary, a timeline of steps with model and tool calls and their durations, tokens and
 * cost per step, errors and the stop reason, the statechart path and actors (from a trace), the
 * subagent tree, and, on clicking a step, its input and output messages and tool results.
 *
 * Every recorded text is escaped; the page's Content-Security-Policy allows no network and only
 * its own script (by hash), so a tool result holding `<script>` shows as text.
 *
 * @example
 * const recorder = recordTrace();
 * await agent.execute(state, { inspect: recorder.inspect });
 * writeFileSync('run.html', renderRunViewer(recorder.trace()));
 * // or, without a trace: renderRunViewer(finalState) / renderRunViewer(JSON.parse(stateJson))
 */
export function renderRunViewer(input: RunInput, options: RunViewerOptions = {}): string {
  return renderRunView(buildRunView(input, options.title === undefined ? {} : { title: options.title }));
}

/** Renders an already built RunView (see `buildRunView`). */
export function renderRunView(view: RunView): string {
  const root = view.agents[0];
  const scriptHash = sha256Base64(VIEWER_JS);
  const csp = [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `script-src 'sha256-${scriptHash}'`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">
<meta name="generator" content="agent-machine run viewer">
<title>${esc(view.title)}</title>
<style>${VIEWER_CSS}</style>
</head>
<body>
${header(view)}
<main class="layout">
<div class="col-main">
${view.notes.length ? `<section class="panel"><h3>Notes</h3><ul class="errors">${view.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></section>` : ''}
${agentTree(view)}
${view.agents.map((agent) => agentSection(agent, view)).join('\n')}
${root ? '' : '<section class="panel"><p class="muted">This run has no agent state.</p></section>'}
</div>
<aside class="col-detail"><div class="panel detail" id="detail" aria-live="polite"><p class="placeholder">Select a step to see its messages, tool calls and results.</p></div></aside>
</main>
<footer>agent-machine run viewer · ${view.source === 'trace' ? 'from a recorded trace' : 'from an AgentState'} · a self-contained page: it works offline</footer>
<script type="application/json" id="run-data">${jsonForScript(clientData(view))}</script>
<script>${VIEWER_JS}</script>
</body>
</html>
`;
}

// ---- sections ----------------------------------------------------------------------------------

function header(view: RunView): string {
  const root = view.agents[0];
  // Each agent's own spending: a parent's usage includes its subagents', which are agents here too.
  const totalTokens = sum(view.agents, (a) => a.ownUsage.totalTokens);
  const inTokens = sum(view.agents, (a) => a.ownUsage.inputTokens);
  const outTokens = sum(view.agents, (a) => a.ownUsage.outputTokens);
  const totalCost = sum(view.agents, (a) => a.ownUsage.cost);
  const errorCount = sum(view.agents, (a) => a.errors.length);
  const steps = root?.stepCount ?? 0;
  const when = view.startedAt ? formatDate(view.startedAt) : '';
  const sub = [
    view.source === 'trace' ? 'recorded trace' : 'AgentState',
    when ? `started ${when}` : '',
    root?.executionId ? `execution ${shortId(root.executionId)}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const card = (label: string, value: string, hint = '', testId = '') =>
    `<div class="card"${testId ? ` data-testid="${testId}"` : ''}><div class="label">${esc(label)}</div><div class="value">${value}</div>${hint ? `<div class="hint">${hint}</div>` : ''}</div>`;
  const multi = view.agents.length > 1;
  return `<header class="top">
<div class="title-row"><h1>${esc(view.title)}</h1><span class="subtitle">${esc(sub)}</span></div>
<div class="cards">
${card('Status', root ? statusBadge(root.status) : '—', '', 'status')}
${card('Stop reason', root?.stopReason ? `<code>${esc(root.stopReason)}</code>` : '—', root?.stopMessage ? esc(root.stopMessage) : '', 'stop-reason')}
${card('Steps', `${steps}`, multi ? esc(`${sum(view.agents, (a) => a.stepCount)} in all agents`) : '', 'steps')}
${card('Tokens', esc(formatNumber(totalTokens)), esc(`${formatNumber(inTokens)} in · ${formatNumber(outTokens)} out${multi ? ' · all agents' : ''}`), 'tokens')}
${card('Cost', esc(formatCost(totalCost)), '', 'cost')}
${card('Duration', esc(formatMs(root?.durationMs ?? null)), '', 'duration')}
${card('Errors', `${errorCount}`, '', 'errors')}
${card('Agents', `${view.agents.length}`, multi ? esc(`${view.agents.length - 1} subagent${view.agents.length === 2 ? '' : 's'}`) : 'no subagents', 'agents')}
</div>
</header>`;
}

function agentTree(view: RunView): string {
  // One agent: the header says "no subagents"; the tree starts to matter with children.
  if (view.agents.length < 2) return '';
  const byKey = new Map(view.agents.map((a) => [a.key, a]));
  const node = (agent: AgentView): string => {
    const children = agent.childKeys.map((k) => byKey.get(k)).filter((a): a is AgentView => a !== undefined);
    const via = agent.spawnedBy
      ? ` <span class="muted">via ${esc(agent.spawnedBy.toolName)} in step ${agent.spawnedBy.stepNumber}</span>`
      : '';
    return `<li><span class="node-line"><a href="#agent-${esc(agent.key)}"><code>${esc(shortId(agent.agentId))}</code></a> ${statusBadge(agent.status)} <span class="muted">${agent.stepCount} step${agent.stepCount === 1 ? '' : 's'} · ${esc(formatNumber(agent.usage.totalTokens))} tokens</span>${via}</span>${
      children.length ? `<ul>${children.map(node).join('')}</ul>` : ''
    }</li>`;
  };
  const roots = view.agents.filter((a) => a.parentKey === null);
  return `<section class="panel" id="agents"><h3 style="margin-top:0">Agents</h3><ul class="tree" data-testid="agent-tree">${roots.map(node).join('')}</ul></section>`;
}

function agentSection(agent: AgentView, view: RunView): string {
  const parent = agent.parentKey ? view.agents.find((a) => a.key === agent.parentKey) : undefined;
  const relation = parent
    ? `<span class="rel">subagent of <a href="#agent-${esc(parent.key)}"><code>${esc(shortId(parent.agentId))}</code></a>${
        agent.spawnedBy
          ? ` via <code>${esc(agent.spawnedBy.toolName)}</code> in step ${agent.spawnedBy.stepNumber}`
          : ''
      }</span>`
    : agent.parentAgentId
      ? `<span class="rel">parent <code>${esc(shortId(agent.parentAgentId))}</code> (not in this data)</span>`
      : view.agents.length > 1
        ? '<span class="rel">root agent</span>'
        : '';
  const facts: Array<[string, string]> = [
    ['agent id', `<code>${esc(agent.agentId)}</code>`],
    [
      'stop reason',
      agent.stopReason
        ? `<code>${esc(agent.stopReason)}</code>${agent.stopMessage ? ` — ${esc(agent.stopMessage)}` : ''}${agent.stopSource ? ` <span class="muted">(${esc(agent.stopSource)})</span>` : ''}`
        : '—',
    ],
    ['steps', `${agent.stepCount}`],
    [
      'tokens',
      `${esc(formatNumber(agent.usage.totalTokens))} <span class="muted">(${esc(formatNumber(agent.usage.inputTokens))} in · ${esc(formatNumber(agent.usage.outputTokens))} out)</span>`,
    ],
    ['cost', esc(formatCost(agent.usage.cost))],
    ['duration', esc(formatMs(agent.durationMs))],
  ];
  if (agent.executionCount > 1) facts.push(['executions', `${agent.executionCount} (this is the last)`]);
  if (agent.systemPrompt) facts.push(['system prompt', esc(truncate(agent.systemPrompt, 300))]);
  const span = timelineSpan(agent);
  const final = agent.finalResponse
    ? `<div class="final" data-testid="final-response">${esc(agent.finalResponse)}</div>`
    : `<div class="final none">No final response${agent.status === 'pending' ? ' (no execution yet)' : ''}.</div>`;

  return `<section class="panel agent" id="agent-${esc(agent.key)}" data-agent-id="${esc(agent.agentId)}">
<div class="agent-head"><h2>${agent.depth === 0 ? 'Agent' : 'Subagent'} <code>${esc(shortId(agent.agentId))}</code></h2>${statusBadge(agent.status)}${relation}</div>
<dl class="facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl>
${final}
${pendingApprovals(agent)}
<h3>Steps</h3>
${agent.steps.length ? `<div class="legend"><span><i style="background:var(--model)"></i>model call</span><span><i style="background:var(--tool)"></i>tool call</span><span><i style="background:var(--fail)"></i>failed tool call</span><span class="muted">bars: time within the execution; click a step for its messages</span></div>` : ''}
${agent.steps.length ? `<ol class="steps">${agent.steps.map((s) => stepRow(agent, s, span)).join('')}</ol>` : '<p class="empty-note">No steps recorded.</p>'}
${errorList(agent)}
<h3>Statechart path</h3>
${renderStatePath(agent)}
${agent.actorTree ? `<details><summary>Actors</summary><ul class="tree">${actorNode(agent.actorTree)}</ul></details>` : ''}
${eventTable(agent)}
</section>`;
}

/** The calls the run waits for decisions on, with the subagents that lead to each. */
function pendingApprovals(agent: AgentView): string {
  if (agent.pendingApprovals.length === 0) return '';
  const items = agent.pendingApprovals.map(
    (p) =>
      `<li><code>${esc(p.toolName)}</code> <span class="mono">${esc(p.toolCallId)}</span>${
        p.path.length
          ? ` <span class="muted">in ${p.path.map((name) => `<code>${esc(name)}</code>`).join(' › ')}</span>`
          : ''
      } <span class="reason" data-reason="${p.reason}">${
        p.reason === 'interrupted'
          ? 'interrupted by a crash: decide approve / reject / complete'
          : 'needs approval: decide approve / reject / edit'
      }</span><pre>${esc(p.args)}</pre></li>`,
  );
  return `<div class="signals" data-testid="pending-approvals"><b>Waiting for approval</b> of ${agent.pendingApprovals.length} tool call${agent.pendingApprovals.length === 1 ? '' : 's'}<ul>${items.join('')}</ul></div>`;
}

/** The time the step bars are drawn against: the execution, or the steps if they run longer. */
function timelineSpan(agent: AgentView): number {
  let end = agent.durationMs ?? 0;
  for (const s of agent.steps) end = Math.max(end, s.offsetMs + s.durationMs);
  return Math.max(end, 0.001);
}

/** How a call a crash interrupted was resolved, as the page says it. */
const resolutions = {
  approved: 'approved: ran again',
  rejected: 'rejected: recorded as not run',
  completed: 'completed: result given by a person',
  reconciled: "reconciled: settled by the tool's reconcile",
} as const;

function stepRow(agent: AgentView, step: StepView, total: number): string {
  const pct = (v: number) => `${Math.max(0, Math.min(100, (v / total) * 100)).toFixed(3)}%`;
  const inner = (offset: number, duration: number) =>
    step.durationMs > 0
      ? `left:${((offset / step.durationMs) * 100).toFixed(3)}%;width:${((duration / step.durationMs) * 100).toFixed(3)}%`
      : 'left:0;width:100%';
  // Parallel tool calls get a lane each, so none hides another.
  const lanes = Math.max(1, step.tools.length);
  const lane = (i: number) => `;top:${((i / lanes) * 100).toFixed(2)}%;height:${(100 / lanes).toFixed(2)}%`;
  const tools = step.tools
    .map((t) => {
      const cls = t.blocked || t.waiting ? 'chip blocked' : t.error ? 'chip fail' : 'chip';
      const mark = t.error ? ' ✗' : t.waiting ? ' …' : ' ✓';
      const title = t.error
        ? `${t.error.name}: ${t.error.message}`
        : t.waiting
          ? 'waiting for approval in its subagent'
          : `${formatMs(t.durationMs)}`;
      const resolved = t.resolution
        ? ` <span class="resolution">interrupted, ${resolutions[t.resolution]}</span>`
        : '';
      return `<span class="${cls}" title="${esc(title)}">${esc(t.name)}${mark}${resolved}</span>`;
    })
    .join('');
  const segments = [
    `<i class="seg model" style="${inner(step.model.offsetMs, step.model.durationMs)}" title="model call ${esc(formatMs(step.model.durationMs))}"></i>`,
    ...step.tools.map(
      (t, i) =>
        `<i class="seg tool${t.error ? ' fail' : ''}" style="${inner(t.offsetMs, t.durationMs)}${lane(i)}" title="${esc(`${t.name} ${formatMs(t.durationMs)}`)}"></i>`,
    ),
  ].join('');
  const notes = [
    ...step.errors.map((e) => `${e.name}: ${e.message}`),
    ...step.tools.filter((t) => t.error).map((t) => `${t.name}: ${t.error?.message ?? ''}`),
  ];
  const preview =
    !notes.length && step.text ? `<div class="step-text">${esc(truncate(step.text, 200))}</div>` : '';
  return `<li class="step${step.type === 'error' ? ' is-error' : ''}" id="${esc(agent.key)}-s${step.number}" data-agent="${esc(agent.key)}" data-step="${step.number}" tabindex="0" role="button" aria-pressed="false" aria-controls="detail">
<div class="step-line"><span class="step-num">Step ${step.number}</span><span class="badge t-${esc(step.type)}">${esc(step.type.replace('_', ' '))}</span><span class="step-tools">${
    tools ||
    (step.errors.length
      ? '<span class="chip fail">no answer ✗</span>'
      : step.text
        ? '<span class="chip model">answer</span>'
        : '')
  }</span><span class="step-meta"><span><b>${esc(formatMs(step.durationMs))}</b></span><span><b>${esc(formatNumber(step.usage.totalTokens))}</b> tokens</span><span>cost <b>${esc(formatCost(step.usage.cost))}</b></span></span></div>
<div class="track"><div class="bar" style="left:${pct(step.offsetMs)};width:${pct(step.durationMs)}">${segments}</div></div>
${notes.length ? `<div class="step-note">${notes.map(esc).join('<br>')}</div>` : ''}${preview}${step.compaction ? `<div class="step-context" data-testid="compaction">Context compacted · ${esc(step.compaction)}</div>` : ''}${divergenceNote(step)}
</li>`;
}

/** A replay's divergence, beside the recorded step it names. */
function divergenceNote(step: StepView): string {
  const d = step.divergence;
  if (!d) return '';
  return `<div class="step-divergence" data-testid="divergence"><b>Replay diverged</b> (${esc(d.kind)}) at <code>${esc(d.path)}</code><br>- recorded: <code>${esc(d.recorded)}</code><br>+ replayed: <code>${esc(d.replayed)}</code></div>`;
}

function errorList(agent: AgentView): string {
  if (!agent.errors.length) return '';
  return `<h3>Errors (${agent.errors.length})</h3><ul class="errors" data-testid="errors">${agent.errors
    .map((e) => {
      const where = [e.stepNumber ? `step ${e.stepNumber}` : '', e.toolName ? `tool ${e.toolName}` : '']
        .filter(Boolean)
        .join(', ');
      return `<li>${where ? `<span class="where">${esc(where)}</span> ` : ''}<b>${esc(e.name)}</b>${e.code ? ` <code>${esc(e.code)}</code>` : ''}: ${esc(e.message)}</li>`;
    })
    .join('')}</ul>`;
}

// ---- data for the script -----------------------------------------------------------------------

function clientData(view: RunView) {
  return {
    agents: view.agents.map((a) => ({ key: a.key, agentId: a.agentId, steps: a.steps })),
    messages: view.messages,
  };
}
