/**
 * The run viewer's stylesheet and script, inlined into the page. The script builds the step
 * details from the page's JSON data with `textContent` only (never innerHTML), so recorded text
 * cannot become markup; the page's Content-Security-Policy also allows this script alone (by hash).
 */

export const VIEWER_CSS = `
:root {
  --bg: #f6f7f9; --panel: #ffffff; --ink: #1b1f24; --muted: #5b6570; --faint: #8a94a0; --line: #e3e7ec;
  --accent: #3b5bdb; --accent-soft: #e8edff; --model: #5b6ee1; --tool: #12a594; --fail: #d9363e;
  --warn: #c27c0e; --ok: #1f8a4c; --chip: #eef1f5; --sel: #f0f4ff;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body { background: var(--bg); color: var(--ink); font: 14px/1.45 var(--sans); }
code, pre, .mono { font-family: var(--mono); font-size: 12.5px; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
h1 { font-size: 20px; margin: 0; font-weight: 650; letter-spacing: -0.01em; }
h2 { font-size: 16px; margin: 0; font-weight: 650; }
h3 { font-size: 12px; margin: 18px 0 8px; font-weight: 650; color: var(--muted); text-transform: uppercase; letter-spacing: 0.06em; }
.top { background: var(--panel); border-bottom: 1px solid var(--line); padding: 18px 28px 16px; }
.title-row { display: flex; align-items: baseline; gap: 14px; flex-wrap: wrap; }
.subtitle { color: var(--muted); font-size: 13px; }
.cards { display: flex; gap: 10px; margin-top: 14px; flex-wrap: wrap; }
.card { border: 1px solid var(--line); border-radius: 10px; padding: 8px 14px; min-width: 112px; background: #fbfcfd; }
.card .label { font-size: 11px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--faint); }
.card .value { font-size: 18px; font-weight: 650; margin-top: 2px; white-space: nowrap; }
.card .hint { font-size: 12px; color: var(--muted); max-width: 320px; }
.layout { display: grid; grid-template-columns: minmax(0, 1fr) minmax(360px, 40%); gap: 20px; padding: 20px 28px 40px; align-items: start; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 12px; padding: 16px 18px; margin-bottom: 16px; }
.col-detail { position: sticky; top: 16px; max-height: calc(100vh - 32px); overflow: auto; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; background: var(--chip); color: var(--muted); white-space: nowrap; }
.badge.s-completed, .badge.t-final_response { background: #e3f5ea; color: var(--ok); }
.badge.s-failed, .badge.t-error { background: #fde8e8; color: var(--fail); }
.badge.s-stopped { background: #fff3dc; color: var(--warn); }
.badge.s-in_progress, .badge.t-in_flight { background: var(--accent-soft); color: var(--accent); }
.badge.t-tool_execution { background: #e0f5f2; color: #0d7c6f; }
.agent-head { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
.agent-head .rel { color: var(--muted); font-size: 13px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 12px 0 0; font-size: 13px; }
.facts dt { color: var(--faint); }
.facts dd { margin: 0; }
.final { margin-top: 12px; border-left: 3px solid var(--ok); background: #f3faf6; padding: 8px 12px; border-radius: 0 8px 8px 0; white-space: pre-wrap; }
.final.none { border-color: var(--line); background: #f7f8fa; color: var(--muted); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; color: var(--muted); margin: -2px 0 8px; }
.legend span { white-space: nowrap; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
.steps { list-style: none; margin: 0; padding: 0; }
.step { border: 1px solid var(--line); border-radius: 10px; padding: 9px 12px 10px; margin-bottom: 8px; cursor: pointer; background: #fff; outline: none; transition: border-color .12s, background .12s; }
.step:hover { border-color: #c5cde0; }
.step:focus-visible { box-shadow: 0 0 0 3px var(--accent-soft); border-color: var(--accent); }
.step.selected { border-color: var(--accent); background: var(--sel); box-shadow: inset 3px 0 0 var(--accent); }
.step.is-error { border-left: 3px solid var(--fail); }
.step-line { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
.step-num { font-weight: 650; min-width: 52px; }
.step-tools { display: flex; gap: 6px; flex-wrap: wrap; flex: 1; }
.chip { display: inline-flex; align-items: center; gap: 4px; padding: 1px 8px; border-radius: 6px; font: 12px var(--mono); background: #e8f6f4; color: #0d6f63; }
.chip.fail { background: #fdecec; color: var(--fail); }
.chip.blocked { background: #fff3dc; color: var(--warn); }
.chip.model { background: var(--accent-soft); color: var(--accent); }
.step-meta { display: flex; gap: 12px; color: var(--muted); font-size: 12px; white-space: nowrap; margin-left: auto; }
.step-meta b { color: var(--ink); font-weight: 600; }
.step-note { margin-top: 6px; color: var(--fail); font-size: 12.5px; }
.step-context { margin-top: 4px; color: var(--faint); font-size: 12px; }
.step-divergence { margin-top: 6px; padding: 4px 8px; border-left: 3px solid #d97706; background: rgba(217, 119, 6, 0.08); font-size: 12px; }
.step-text { margin-top: 6px; color: var(--muted); font-size: 12.5px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.track { position: relative; height: 10px; margin-top: 8px; background: #f0f2f5; border-radius: 4px; }
.bar { position: absolute; top: 0; bottom: 0; min-width: 3px; background: #d5dae3; border-radius: 4px; overflow: hidden; }
.bar .seg.model { top: 0; height: 100%; }
.seg { position: absolute; top: 0; bottom: 0; min-width: 2px; }
.seg.model { background: var(--model); }
.seg.tool { background: var(--tool); opacity: .9; }
.seg.tool.fail { background: var(--fail); }
.errors { list-style: none; margin: 0; padding: 0; }
.errors li { padding: 6px 10px; border-radius: 8px; background: #fdf1f1; margin-bottom: 6px; color: #8f1d22; }
.errors .where { color: var(--muted); font-size: 12px; margin-right: 6px; }
.path { max-height: 320px; overflow: auto; padding: 2px; }
.path-row { display: flex; gap: 10px; align-items: baseline; padding: 3px 0; border-bottom: 1px solid #f2f4f7; }
.path-row:last-child { border-bottom: 0; }
.path-label { flex: 0 0 56px; font-size: 12px; color: var(--faint); text-align: right; }
.path-nodes { display: flex; flex-wrap: wrap; gap: 4px 2px; align-items: center; }
.path .node { font: 12px var(--mono); padding: 2px 7px; border-radius: 6px; background: var(--chip); color: var(--muted); }
.path .node b { color: var(--ink); font-weight: 600; }
.path .node.outcome { background: #e3f5ea; color: var(--ok); }
.path .node.outcome.failed { background: #fde8e8; color: var(--fail); }
.path .node.outcome.stopped { background: #fff3dc; color: var(--warn); }
.path .arrow { color: var(--faint); font-size: 11px; padding: 0 2px; }
.muted { color: var(--muted); }
.tree, .tree ul { list-style: none; margin: 0; padding-left: 18px; }
.tree { padding-left: 0; }
.tree li { margin: 3px 0; }
.tree .node-line { display: inline-flex; gap: 8px; align-items: center; }
.tree ul { border-left: 1px dashed var(--line); margin-left: 6px; padding-left: 14px; }
details > summary { cursor: pointer; color: var(--muted); font-weight: 600; font-size: 13px; margin: 14px 0 6px; }
table.events { width: 100%; border-collapse: collapse; font-size: 12.5px; }
table.events td, table.events th { text-align: left; padding: 3px 8px; border-bottom: 1px solid #f0f2f5; vertical-align: top; }
table.events th { color: var(--faint); font-weight: 600; }
table.events td.t { color: var(--faint); white-space: nowrap; font-family: var(--mono); }
table.events td.type { font-family: var(--mono); white-space: nowrap; }
.detail .placeholder { color: var(--muted); text-align: center; padding: 40px 10px; }
.detail-head { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
.detail-sub { color: var(--muted); font-size: 12.5px; margin-top: 4px; }
.kv { display: flex; gap: 16px; flex-wrap: wrap; margin-top: 10px; font-size: 13px; }
.kv span { color: var(--muted); }
.kv b { color: var(--ink); font-weight: 600; }
.msg { border: 1px solid var(--line); border-radius: 10px; margin-bottom: 8px; overflow: hidden; }
.msg-head { display: flex; gap: 8px; align-items: center; padding: 5px 10px; background: #f7f8fa; font-size: 12px; color: var(--muted); border-bottom: 1px solid var(--line); }
.msg-head .role { font-weight: 700; text-transform: uppercase; letter-spacing: .05em; font-size: 11px; }
.msg.r-user .role { color: #7b3fd1; } .msg.r-assistant .role { color: var(--accent); }
.msg.r-tool .role { color: #0d7c6f; } .msg.r-system .role { color: var(--warn); }
.msg.err { border-color: #f3c2c4; } .msg.err .msg-head { background: #fdf1f1; }
.msg-body { padding: 8px 10px; white-space: pre-wrap; word-break: break-word; font-size: 13px; }
.msg-body.empty { color: var(--faint); font-style: italic; }
.msg-calls { padding: 0 10px 8px; }
.msg-calls code { display: block; white-space: pre-wrap; word-break: break-word; background: #f4f6fb; padding: 4px 8px; border-radius: 6px; margin-top: 4px; }
.tool { border: 1px solid var(--line); border-radius: 10px; padding: 8px 10px; margin-bottom: 8px; }
.tool.fail { border-color: #f3c2c4; background: #fffafa; }
.tool-head { display: flex; gap: 8px; align-items: center; }
.tool-head .name { font: 600 13px var(--mono); }
.tool-head .dur { margin-left: auto; color: var(--muted); font-size: 12px; }
.tool pre { margin: 6px 0 0; padding: 6px 8px; background: #f6f7f9; border-radius: 6px; white-space: pre-wrap; word-break: break-word; max-height: 260px; overflow: auto; }
.tool pre.err { background: #fdf1f1; color: #8f1d22; }
.tool .lbl { font-size: 11px; color: var(--faint); text-transform: uppercase; letter-spacing: .05em; margin-top: 6px; }
.signals { margin: 8px 0 0; padding: 6px 10px; background: #fff8e8; border-radius: 8px; font-size: 12.5px; color: #7a4d00; }
.signals.step-error { background: #fdf1f1; color: #8f1d22; }
.empty-note { color: var(--faint); font-size: 13px; }
footer { color: var(--faint); font-size: 12px; text-align: center; padding: 0 0 24px; }
@media (max-width: 980px) { .layout { grid-template-columns: 1fr; } .col-detail { position: static; max-height: none; } }
`;

export const VIEWER_JS = `
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('run-data').textContent);
  var agents = {};
  data.agents.forEach(function (a) { agents[a.key] = a; });
  var detail = document.getElementById('detail');

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function ms(v) {
    if (v === null || v === undefined) return '\\u2014';
    if (v < 1) return v.toFixed(2) + ' ms';
    if (v < 100) return v.toFixed(1) + ' ms';
    if (v < 1000) return Math.round(v) + ' ms';
    if (v < 60000) return (v / 1000).toFixed(2) + ' s';
    return Math.floor(v / 60000) + ' min ' + Math.round((v % 60000) / 1000) + ' s';
  }
  function num(v) { return Number(v).toLocaleString('en-US'); }
  function cost(v) { return v ? (v < 0.01 ? v.toPrecision(2) : v.toFixed(4)) : '0'; }

  function message(m) {
    var box = el('div', 'msg r-' + m.role + (m.isError ? ' err' : ''));
    var head = add(box, el('div', 'msg-head'));
    add(head, el('span', 'role', m.role));
    if (m.toolName) add(head, el('code', null, m.toolName));
    if (m.toolCallId) add(head, el('span', 'mono', m.toolCallId));
    if (m.isError) add(head, el('span', 'badge t-error', 'error'));
    add(box, el('div', 'msg-body' + (m.content ? '' : ' empty'), m.content || '(no text)'));
    if (m.toolCalls && m.toolCalls.length) {
      var calls = add(box, el('div', 'msg-calls'));
      m.toolCalls.forEach(function (c) { add(calls, el('code', null, '\\u2192 ' + c.name + ' ' + c.args)); });
    }
    return box;
  }

  function messagesOf(step) {
    var out = [];
    step.input.forEach(function (r) { for (var i = r[0]; i < r[1]; i++) out.push(data.messages[i]); });
    return out;
  }

  function render(agent, step) {
    detail.textContent = '';
    var head = add(detail, el('div', 'detail-head'));
    add(head, el('h2', null, 'Step ' + step.number));
    add(head, el('span', 'badge t-' + step.type, step.type.replace('_', ' ')));
    var sub = add(detail, el('div', 'detail-sub'));
    sub.textContent = 'agent ' + agent.agentId.slice(0, 8) + (data.agents.length > 1 ? ' (' + agent.key + ')' : '') +
      ' \\u00b7 ' + ms(step.durationMs) + (step.finishReason ? ' \\u00b7 finish reason ' + step.finishReason : '');

    var kv = add(detail, el('div', 'kv'));
    function pair(label, value) { var s = add(kv, el('span', null, label + ' ')); add(s, el('b', null, value)); }
    pair('tokens', num(step.usage.totalTokens) + ' (' + num(step.usage.inputTokens) + ' in \\u00b7 ' + num(step.usage.outputTokens) + ' out)');
    pair('cost', cost(step.usage.cost));
    pair('model call', ms(step.model.durationMs) + (step.model.measured ? '' : ' (est.)'));

    if (step.stopSignals.length) add(detail, el('div', 'signals', 'Stop signal: ' + step.stopSignals.join('; ')));
    step.errors.forEach(function (e) { add(detail, el('div', 'signals step-error', e.name + (e.code ? ' [' + e.code + ']' : '') + ': ' + e.message)); });

    if (step.text) {
      add(detail, el('h3', null, 'Model output'));
      add(detail, el('div', 'msg-body', step.text));
    }
    if (step.tools.length) {
      add(detail, el('h3', null, 'Tool calls (' + step.tools.length + ')'));
      step.tools.forEach(function (t) {
        var box = add(detail, el('div', 'tool' + (t.error ? ' fail' : '')));
        var th = add(box, el('div', 'tool-head'));
        add(th, el('span', 'name', t.name));
        add(th, el('span', 'badge ' + (t.error ? 't-error' : t.waiting ? 't-in_flight' : 't-final_response'), t.blocked ? 'blocked' : t.error ? 'failed' : t.waiting ? 'waiting for approval' : 'ok'));
        if (t.resolution) add(th, el('span', 'badge t-in_flight resolution', 'interrupted by a crash, ' + (t.resolution === 'approved' ? 'approved: ran again' : t.resolution === 'rejected' ? 'rejected: recorded as not run' : t.resolution === 'reconciled' ? "reconciled: settled by the tool's reconcile" : 'completed: result given by a person')));
        add(th, el('span', 'dur', ms(t.durationMs)));
        add(box, el('div', 'lbl', 'Arguments'));
        add(box, el('pre', null, t.args || '{}'));
        if (t.waiting) {
          add(box, el('div', 'lbl', 'Result'));
          add(box, el('pre', null, 'none yet: its subagent waits for decisions on its tool calls'));
        } else if (t.error) {
          add(box, el('div', 'lbl', 'Error'));
          add(box, el('pre', 'err', t.error.name + (t.error.code ? ' [' + t.error.code + ']' : '') + ': ' + t.error.message));
        } else {
          add(box, el('div', 'lbl', 'Result'));
          add(box, el('pre', null, t.result));
        }
        if (t.childAgent && agents[t.childAgent]) {
          var link = add(box, el('a', null, 'ran subagent ' + agents[t.childAgent].agentId.slice(0, 8) + ' \\u2192'));
          link.href = '#agent-' + t.childAgent;
        }
      });
    }

    var input = messagesOf(step);
    add(detail, el('h3', null, 'Input messages (' + input.length + ')'));
    if (!input.length) add(detail, el('div', 'empty-note', 'none'));
    var older = input.slice(0, step.newFrom);
    if (older.length) {
      var more = add(detail, el('details'));
      add(more, el('summary', null, older.length + ' earlier message' + (older.length === 1 ? '' : 's') + ' (seen by the previous step)'));
      older.forEach(function (m) { add(more, message(m)); });
    }
    input.slice(step.newFrom).forEach(function (m) { add(detail, message(m)); });

    add(detail, el('h3', null, 'Output messages (' + step.output.length + ')'));
    if (!step.output.length) add(detail, el('div', 'empty-note', 'none'));
    step.output.forEach(function (i) { add(detail, message(data.messages[i])); });
  }

  var rows = Array.prototype.slice.call(document.querySelectorAll('.step'));
  function select(row, focus) {
    var agent = agents[row.getAttribute('data-agent')];
    var step = agent && agent.steps[Number(row.getAttribute('data-step')) - 1];
    if (!step) return;
    rows.forEach(function (r) { r.classList.remove('selected'); r.setAttribute('aria-pressed', 'false'); });
    row.classList.add('selected');
    row.setAttribute('aria-pressed', 'true');
    if (focus) row.focus();
    render(agent, step);
    if (history.replaceState) history.replaceState(null, '', '#' + row.id);
  }
  rows.forEach(function (row, i) {
    row.addEventListener('click', function () { select(row, false); });
    row.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(row, false); }
      if (e.key === 'ArrowDown' && rows[i + 1]) { e.preventDefault(); select(rows[i + 1], true); }
      if (e.key === 'ArrowUp' && rows[i - 1]) { e.preventDefault(); select(rows[i - 1], true); }
    });
  });
  var initial = location.hash && document.getElementById(location.hash.slice(1));
  if (initial && initial.classList.contains('step')) select(initial, false);
})();
`;
