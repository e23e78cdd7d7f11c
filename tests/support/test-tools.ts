/**
 * What the test suite needs from outside npm, and how it gets it on a fresh machine.
 *
 * Some tests use real parts from Debian's packages: Chromium (the run viewer and the chat page, driven
 * by playwright-core) and redis-server (the Redis store and the BullMQ worker pool). `npm test` runs
 * `provisionTestTools()` once, as vitest's global setup: a missing program is installed with apt-get
 * when the suite runs as root on a Debian-like system; otherwise the run stops at once with one message
 * naming what is missing and the command that installs it (never a wall of failing tests, never a
 * silent skip).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

export interface TestTool {
  /** The program the tests run. */
  readonly program: string;
  /** Debian's package that installs it. */
  readonly debianPackage: string;
  /** What needs it, for the messages. */
  readonly usedBy: string;
  /** Whether it is installed. */
  present(): boolean;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(program: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;
}

export const TEST_TOOLS: readonly TestTool[] = [
  {
    program: '/usr/bin/chromium',
    debianPackage: 'chromium',
    usedBy: 'the run viewer and chat page tests (headless, through playwright-core)',
    present: () => isExecutable('/usr/bin/chromium'),
  },
  {
    program: 'redis-server',
    debianPackage: 'redis-server',
    usedBy: 'the Redis store and worker pool tests',
    present: () => onPath('redis-server'),
  },
];

/** Thrown when a program the tests need is missing and cannot be installed here. */
export class MissingTestToolError extends Error {
  readonly code = 'MISSING_TEST_TOOL';
  constructor(
    readonly missing: readonly TestTool[],
    reason: string,
  ) {
    const packages = missing.map((tool) => tool.debianPackage).join(' ');
    super(
      [
        `The tests need ${missing.map((tool) => `${tool.program} (${tool.usedBy})`).join(' and ')}, and ${reason}.`,
        `Install ${missing.length > 1 ? 'them' : 'it'}, then run npm test again:`,
        `  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${packages}`,
      ].join('\n'),
    );
    this.name = 'MissingTestToolError';
  }
}

export interface ProvisionOptions {
  readonly tools?: readonly TestTool[];
  /** Whether this process may install system packages (root with apt-get). */
  readonly canInstall?: () => boolean;
  /** Runs the install; throws when it fails. */
  readonly install?: (packages: readonly string[]) => void;
  readonly log?: (line: string) => void;
}

function rootWithApt(): boolean {
  return process.getuid?.() === 0 && onPath('apt-get');
}

function aptInstall(packages: readonly string[]): void {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], {
    stdio: 'inherit',
    env,
  });
}

/** Makes sure every program the tests need is there; installs what is missing when it can. */
export function provisionTestTools(options: ProvisionOptions = {}): void {
  const tools = options.tools ?? TEST_TOOLS;
  const log = options.log ?? ((line: string) => console.log(line));
  const missing = tools.filter((tool) => !tool.present());
  if (missing.length === 0) return;
  if (!(options.canInstall ?? rootWithApt)()) {
    throw new MissingTestToolError(missing, 'this process cannot install them (it needs root and apt-get)');
  }
  const packages = missing.map((tool) => tool.debianPackage);
  log(`agent-machine tests: installing ${packages.join(' ')} from Debian's packages (one time)...`);
  try {
    (options.install ?? aptInstall)(packages);
  } catch (error) {
    throw new MissingTestToolError(missing, `apt-get failed (${(error as Error).message.split('\n')[0]})`);
  }
  const stillMissing = missing.filter((tool) => !tool.present());
  if (stillMissing.length > 0) {
    throw new MissingTestToolError(stillMissing, 'apt-get ran but did not install them');
  }
}
