#!/usr/bin/env node
/**
 * The `agent-machine` command line.
 *
 *   agent-machine view <trace.json | state.json> [-o run.html] [--title <text>]
 *   agent-machine replay --agent <module>[#<export>] [--tools recorded|live] <store folder | sqlite file | trace folder>
 *   agent-machine verify-upgrade --agent <module>[#<export>] [--strict] <store folder | sqlite file>
 *
 * Exit codes: 0 done (replay: every session equal); 1 a replayed session diverged or failed, or
 * the input could not be used (missing file, invalid JSON, not a trace or
 * an AgentState, a bad field) or the page could not be written; 2 the command line was wrong.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type ReplaySummary, replaySessions } from './inspect/replay-store';
import { buildRunView, NotARunError, type RunInput } from './inspect/run-model';
import { renderRunView } from './inspect/run-viewer';
import { InvalidTraceError } from './inspect/trace-schema';
import { verifyUpgradeCommand } from './inspect/verify-upgrade-cli';
import type { Agent } from './runtime/agent-actor';
import { AgentMachineError, InvalidStateError } from './state/errors';

const HELP = `agent-machine: tools for agent-machine runs

Usage:
  agent-machine view <file.json> [-o <out.html>] [--title <text>]
  agent-machine replay --agent <module>[#<export>] [--tools recorded|live] [--html <folder>] <store folder | sqlite file | trace folder>
  agent-machine verify-upgrade --agent <module>[#<export>] [--strict] <store folder | sqlite file>
  agent-machine --help

Commands:
  view    Render a run as one self-contained HTML page (works offline). The input is either
          a trace written by recordTrace() (recorder.write('trace.json')) or an AgentState
          saved as JSON (JSON.stringify(state)).
  replay  Replay every recorded session with an agent of yours, offline (the model answers
          from the recording, tools are not run unless --tools live), and report where each
          first diverges. The store is opened read-only.
  verify-upgrade  Check that a new version of an agent can go on with every saved session
          (exit 1 on an orphaned one): a CI step before a deploy. See docs/upgrading.md.

Options:
  -o, --out <file>   Where to write the page. Default: the input's name with .html.
      --title <text> The page title. Default: the trace's title, else "Run of agent <id>".
  -h, --help         Show this help.

Exit codes: 0 written (replay: every session replayed equal); 1 the input or output failed
(the message names the problem), or a replayed session diverged; 2 wrong usage.

Example:
  agent-machine view test-output/trace.json -o run.html
`;

const VIEW_HELP = `Usage: agent-machine view <file.json> [-o <out.html>] [--title <text>]

Renders a trace (from recordTrace()) or an AgentState's JSON as one self-contained HTML page:
steps with model and tool calls, durations, tokens and cost, errors and the stop reason, the
statechart path and the subagent tree; click a step to see its messages.

Options:
  -o, --out <file>   Where to write the page. Default: the input's name with .html.
      --title <text> The page title.
  -h, --help         Show this help.
`;

const REPLAY_HELP = `Usage: agent-machine replay --agent <module>[#<export>] [--tools recorded|live] [--html <folder>] <path>

Replays every session recorded at <path> with your agent, offline: the model answers from the
recording and tools are not run (agent.replay(state)). Prints one line per session (ok, DIVERGED
with the step, kind and path of the first difference, or ERROR) and a summary; exits 1 if any
session diverged or failed, or if <path> holds no session, so it can be a CI step.

<path> is a FileSessionStore folder (*.journal), a SqliteSessionStore file, or a folder of
traces (recordTrace) or states saved as JSON (*.json). Stores are opened read-only: nothing is
written into <path>.

Options:
  --agent <module>[#<export>]  The module (a path) and its export: an agent (createAgent) or a
                               function returning one. Default export when #<export> is left out.
                               A .ts module is loaded with tsx when tsx is installed
                               (npm install --save-dev tsx).
  --tools recorded|live        recorded (default): each tool call answers with its recorded
                               result, no tool runs. live: your agent's tools run and their
                               results are compared with the recorded ones.
  --html <folder>              Write each diverged session's recording there as a run viewer
                               page (<session>.html), the divergence beside its step.
  -h, --help                   Show this help.
`;

/** A failure the CLI reports: `code` is stable, `exitCode` is what the process ends with. */
class CliError extends AgentMachineError {
  static override get name(): string {
    return 'CliError';
  }

  constructor(
    code: 'USAGE' | 'FILE_NOT_FOUND' | 'READ_FAILED' | 'INVALID_JSON' | 'INVALID_INPUT' | 'WRITE_FAILED',
    message: string,
    readonly exitCode: 1 | 2,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

interface Io {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Runs the command line and resolves with the exit code.
 *
 * @example
 * process.exitCode = await main(['view', 'trace.json', '-o', 'run.html']);
 */
async function main(argv: readonly string[], io: Io = defaultIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`agent-machine: ${error.message}\n`);
      if (error.exitCode === 2) io.err('Run "agent-machine --help" for usage.\n');
      return error.exitCode;
    }
    throw error;
  }
}

async function run(argv: readonly string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    io.err(HELP);
    return 2;
  }
  if (command === '-h' || command === '--help' || command === 'help') {
    io.out(HELP);
    return 0;
  }
  if (command === 'replay') return replayCommand(rest, io);
  if (command === 'verify-upgrade') return verifyUpgradeCommand(rest, io, loadAgent);
  if (command !== 'view') throw new CliError('USAGE', `unknown command "${command}"`, 2);

  let input: string | undefined;
  let output: string | undefined;
  let title: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === '-h' || arg === '--help') {
      io.out(VIEW_HELP);
      return 0;
    }
    if (arg === '-o' || arg === '--out' || arg === '--title') {
      const value = rest[++i];
      if (value === undefined || value === '') throw new CliError('USAGE', `${arg} needs a value`, 2);
      if (arg === '--title') title = value;
      else output = value;
    } else if (arg.startsWith('--out=')) output = arg.slice('--out='.length);
    else if (arg.startsWith('--title=')) title = arg.slice('--title='.length);
    else if (arg.startsWith('-') && arg !== '-') throw new CliError('USAGE', `unknown option "${arg}"`, 2);
    else if (input === undefined) input = arg;
    else throw new CliError('USAGE', `one input file only (got "${input}" and "${arg}")`, 2);
  }
  if (input === undefined)
    throw new CliError('USAGE', 'view needs an input file: a trace or a state JSON', 2);

  const text = await readInput(input);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CliError('INVALID_JSON', `${input} is not valid JSON: ${(error as Error).message}`, 1, {
      cause: error,
    });
  }

  let html: string;
  let summary: string;
  try {
    const view = buildRunView(data as RunInput, title === undefined ? {} : { title });
    html = renderRunView(view);
    const root = view.agents[0];
    summary = root
      ? `${view.source === 'trace' ? 'trace' : 'state'}, ${root.stepCount} step${root.stepCount === 1 ? '' : 's'}, ${root.status}${root.stopReason ? ` (${root.stopReason})` : ''}${view.agents.length > 1 ? `, ${view.agents.length} agents` : ''}`
      : 'no agents';
  } catch (error) {
    if (
      error instanceof NotARunError ||
      error instanceof InvalidTraceError ||
      error instanceof InvalidStateError
    )
      throw new CliError('INVALID_INPUT', `${input}: ${error.message}`, 1, { cause: error });
    throw error;
  }

  const target = output ?? defaultOutput(input);
  try {
    await mkdir(dirname(resolve(target)), { recursive: true });
    await writeFile(target, html);
  } catch (error) {
    throw new CliError('WRITE_FAILED', `cannot write ${target}: ${(error as Error).message}`, 1, {
      cause: error,
    });
  }
  io.out(`Wrote ${target} (${summary})\n`);
  return 0;
}

async function replayCommand(args: readonly string[], io: Io): Promise<number> {
  let spec: string | undefined;
  let input: string | undefined;
  let html: string | undefined;
  let tools: 'recorded' | 'live' | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-h' || arg === '--help') {
      io.out(REPLAY_HELP);
      return 0;
    }
    if (arg === '--agent') {
      spec = args[++i];
      if (spec === undefined || spec === '') throw new CliError('USAGE', '--agent needs a value', 2);
    } else if (arg.startsWith('--agent=')) spec = arg.slice('--agent='.length);
    else if (arg === '--html') {
      html = args[++i];
      if (html === undefined || html === '') throw new CliError('USAGE', '--html needs a folder', 2);
    } else if (arg.startsWith('--html=')) html = arg.slice('--html='.length);
    else if (arg === '--tools' || arg.startsWith('--tools=')) {
      const value = arg === '--tools' ? args[++i] : arg.slice('--tools='.length);
      if (value !== 'recorded' && value !== 'live')
        throw new CliError('USAGE', `--tools takes recorded or live (got ${JSON.stringify(value ?? '')})`, 2);
      tools = value;
    } else if (arg.startsWith('-')) throw new CliError('USAGE', `unknown option "${arg}"`, 2);
    else if (input === undefined) input = arg;
    else throw new CliError('USAGE', `one path only (got "${input}" and "${arg}")`, 2);
  }
  if (!spec) throw new CliError('USAGE', 'replay needs --agent <module>[#<export>]', 2);
  if (input === undefined)
    throw new CliError('USAGE', 'replay needs a path: a store folder, a SQLite file or a trace folder', 2);
  const agent = await loadAgent(spec);
  let summary: ReplaySummary;
  try {
    summary = await replaySessions(agent, input, (line) => io.out(`${line}\n`), {
      ...(html && { html }),
      ...(tools && { tools }),
    });
  } catch (error) {
    throw new CliError('INVALID_INPUT', (error as Error).message, 1, { cause: error });
  } finally {
    await agent.close();
  }
  return summary.diverged + summary.failed > 0 ? 1 : 0;
}

/** The agent a `--agent <module>#<export>` names: the export itself, or what it returns when called. */
async function loadAgent(spec: string): Promise<Agent> {
  const hash = spec.lastIndexOf('#');
  const file = hash > 0 ? spec.slice(0, hash) : spec;
  const name = hash > 0 ? spec.slice(hash + 1) : 'default';
  let module: Record<string, unknown>;
  const url = pathToFileURL(resolve(file)).href;
  try {
    module = await import(url);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !TYPESCRIPT.test(file))
      throw new CliError('INVALID_INPUT', `cannot import ${file}: ${(error as Error).message}`, 1, {
        cause: error,
      });
    module = await importTypeScript(url, file);
  }
  if (!Object.hasOwn(module, name))
    throw new CliError(
      'INVALID_INPUT',
      `${file} has no export "${name}" (it exports: ${Object.keys(module).join(', ') || 'nothing'})`,
      1,
    );
  const exported = module[name];
  const agent = typeof exported === 'function' ? await exported() : exported;
  if (typeof (agent as Partial<Agent> | null)?.replay !== 'function')
    throw new CliError(
      'INVALID_INPUT',
      `the export "${name}" of ${file} is not an agent (createAgent(...)) nor a function returning one`,
      1,
    );
  return agent as Agent;
}

const TYPESCRIPT = /\.[mc]?tsx?$/;
/** Not a literal: the build leaves it to be resolved where the CLI runs (tsx is the user's, optional). */
const TSX_API = 'tsx/esm/api';

/** A TypeScript module Node cannot load by itself, loaded through tsx (when the project has it). */
async function importTypeScript(url: string, file: string): Promise<Record<string, unknown>> {
  let tsx: { register(): unknown };
  try {
    tsx = await import(TSX_API);
  } catch (error) {
    throw new CliError(
      'INVALID_INPUT',
      `cannot import ${file}: Node does not load TypeScript by itself here, and tsx is not installed. ` +
        'Install it (npm install --save-dev tsx) and run again, run the CLI under a loader ' +
        '(node --import tsx node_modules/.bin/agent-machine ...), or point --agent at the compiled .js module.',
      1,
      { cause: error },
    );
  }
  try {
    // registered for the process (not a scoped tsImport): the module then shares this CLI's
    // instance of the library, so the states it loads are the agent's own classes
    tsx.register();
    // another URL than the failed import's, which the module map keeps as failed
    return await import(`${url}?tsx`);
  } catch (error) {
    throw new CliError('INVALID_INPUT', `cannot import ${file} (with tsx): ${(error as Error).message}`, 1, {
      cause: error,
    });
  }
}

async function readInput(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new CliError('FILE_NOT_FOUND', `no such file: ${path}`, 1, { cause: error });
    if (code === 'EISDIR')
      throw new CliError('READ_FAILED', `${path} is a folder, not a file`, 1, { cause: error });
    throw new CliError('READ_FAILED', `cannot read ${path}: ${(error as Error).message}`, 1, {
      cause: error,
    });
  }
}

function defaultOutput(input: string): string {
  const ext = extname(input);
  return join(dirname(input), `${basename(input, ext)}.html`);
}

const defaultIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`agent-machine: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
