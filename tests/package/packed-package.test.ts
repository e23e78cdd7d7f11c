/**
 * The library as a user gets it: `npm pack` (its `prepack` builds it), the tarball installed into a
 * fresh project beside AI SDK 6 or 7 from the registry, an ES module and a CommonJS file run, and
 * a file type-checked under nodenext, node16 and bundler with `skipLibCheck: false`; README's quick example
 * copied as written, type-checked and run; the moved names typed @deprecated. The build runs
 * on a copy of the sources in a temporary directory (the worktree's dist/ and node_modules are left
 * as they are); the installs use npm's cache. The one slow test of the suite: real installs.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, textReply, toolCallReply } from '../support/openai-server';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '../..');
const fixtures = join(repo, 'tests/package/consumer');
const tsc = join(repo, 'node_modules/.bin/tsc');
const tsx = join(repo, 'node_modules/.bin/tsx');
const INSTALL_TIMEOUT_MS = 240_000;
const TYPECHECK_TIMEOUT_MS = 120_000;

/** The two projects: each AI SDK major with its OpenAI-compatible provider. */
const majors = [
  { ai: '^6.0.0', provider: '^2.0.0', spec: 'v3' },
  { ai: '^7.0.0', provider: '^3.0.0', spec: 'v4' },
] as const;

/** Every subpath entry loads, and its names are the main entry's own values (ESM and CommonJS). */
const EVERY_SUBPATH_SAME = Object.fromEntries(
  ['stores', 'distributed', 'inspect', 'ui', 'mcp', 'telemetry', 'testing', 'internal'].map((name) => [
    name,
    true,
  ]),
);

let work: string;
const projects = new Map<string, string>();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'agent-machine-package-'));
  const source = join(work, 'source');
  for (const entry of [
    'package.json',
    'README.md',
    'tsup.config.ts',
    'tsconfig.json',
    'tsconfig.build.json',
  ]) {
    cpSync(join(repo, entry), join(source, entry));
  }
  for (const directory of ['src', 'machines', 'scripts']) {
    cpSync(join(repo, directory), join(source, directory), { recursive: true });
  }
  // The build tools, read from the repo's node_modules (nothing is installed there).
  symlinkSync(join(repo, 'node_modules'), join(source, 'node_modules'), 'dir');
  await npm(['pack', '--pack-destination', work], source);
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball in ${work}`);

  await Promise.all(
    majors.map(async (major) => {
      const project = join(work, `ai-${major.spec}`);
      mkdirSync(project);
      for (const name of readdirSync(fixtures)) cpSync(join(fixtures, name), join(project, name));
      writeFileSync(join(project, 'readme-quick.ts'), readmeQuickExample());
      writeFileSync(
        join(project, 'package.json'),
        JSON.stringify({
          name: `consumer-${major.spec}`,
          private: true,
          type: 'module',
          dependencies: {
            'agent-machine': `file:${join(work, tarball)}`,
            ai: major.ai,
            '@ai-sdk/openai-compatible': major.provider,
            '@types/node': '^20.0.0',
            // @ai-sdk/provider's own types import 'json-schema' (checked with skipLibCheck false)
            '@types/json-schema': '^7.0.0',
          },
        }),
      );
      await npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], project);
      projects.set(major.spec, project);
    }),
  );
}, 2 * INSTALL_TIMEOUT_MS);

afterAll(async () => {
  // Two projects' node_modules: slow to delete on a loaded machine.
  if (work) await rm(work, { recursive: true, force: true });
}, INSTALL_TIMEOUT_MS);

describe.each(majors)('the packed package with ai@$ai', (major) => {
  const project = () => projects.get(major.spec) as string;

  it('runs an agent from an ES module over HTTP, generated and streamed, with class names intact', async () => {
    const server = await startOpenAIServer([
      toolCallReply([{ id: 'c1', name: 'add', arguments: { a: 2, b: 3 } }]),
      textReply('5'),
      toolCallReply([{ id: 'c2', name: 'add', arguments: { a: 2, b: 3 } }]),
      textReply('it is 5'),
    ]);
    try {
      const { stdout } = await run(process.execPath, ['run.mjs'], {
        cwd: project(),
        env: { ...process.env, BASE_URL: server.baseURL },
      });
      expect(JSON.parse(stdout)).toEqual({
        specificationVersion: major.spec,
        runs: [
          { status: 'completed', answer: '5', steps: 2 },
          { status: 'completed', answer: 'it is 5', steps: 2 },
        ],
        streamed: 'it is 5',
        errorName: 'InvalidDefinitionError',
        stopErrorClass: 'AgentStopError',
        misnamedClasses: [],
        subpaths: EVERY_SUBPATH_SAME,
        testingWithoutGraph: 'TESTING_DEPENDENCY_MISSING',
      });
      expect(server.requests).toHaveLength(4);
    } finally {
      await server.close();
    }
  });

  it('runs an agent from a CommonJS file', async () => {
    const { stdout } = await run(process.execPath, ['run.cjs'], {
      cwd: project(),
      env: { ...process.env, SPEC: major.spec },
    });
    expect(JSON.parse(stdout)).toEqual({
      status: 'completed',
      answer: 'hello from cjs',
      errorClass: 'AgentRuntimeError',
      misnamedClasses: [],
      subpaths: EVERY_SUBPATH_SAME,
    });
  });

  it("runs README's quick example as written", async () => {
    const { stdout } = await run(tsx, ['readme-quick.ts'], { cwd: project() });
    expect(stdout.trim()).toBe('completed 5 2');
  });

  it('keeps the moved names on the main entry, each typed @deprecated in the packed declarations', async () => {
    const folder = join(project(), 'node_modules/agent-machine/dist/types/src/deprecated');
    const files = readdirSync(folder).filter((name) => name !== 'index.d.ts' && name !== 'index.d.cts');
    expect(files.length).toBeGreaterThanOrEqual(16);
    const undocumented: string[] = [];
    let names = 0;
    for (const name of files) {
      const lines = readFileSync(join(folder, name), 'utf8').split('\n');
      lines.forEach((line, index) => {
        if (!line.startsWith('export ')) return;
        names++;
        if (!lines[index - 1]?.includes('@deprecated')) undocumented.push(`${name}: ${line}`);
      });
    }
    expect(undocumented).toEqual([]);
    expect(names).toBeGreaterThan(100);
    const main = readFileSync(
      join(project(), 'node_modules/agent-machine/dist/types/src/index.d.ts'),
      'utf8',
    );
    expect(main).toContain("export * from './deprecated/index.js';");
  });

  it.each([
    { module: 'nodenext', moduleResolution: 'nodenext', files: ['check.ts', 'check.cts', 'readme-quick.ts'] },
    { module: 'node16', moduleResolution: 'node16', files: ['check.ts', 'check.cts', 'readme-quick.ts'] },
    { module: 'esnext', moduleResolution: 'bundler', files: ['check.ts', 'readme-quick.ts'] },
  ])(
    'type-checks under moduleResolution $moduleResolution with skipLibCheck false',
    async (options) => {
      const config = `tsconfig.${options.moduleResolution}.json`;
      writeFileSync(
        join(project(), config),
        JSON.stringify({
          compilerOptions: {
            module: options.module,
            moduleResolution: options.moduleResolution,
            target: 'ES2022',
            lib: ['ES2023', 'DOM'],
            types: ['node'],
            strict: true,
            skipLibCheck: false,
            noEmit: true,
          },
          files: options.files,
        }),
      );
      const result = await run(tsc, ['-p', config], { cwd: project() }).catch(
        (error: { stdout: string; stderr: string }) => error,
      );
      expect(`${result.stdout}${result.stderr}`).toBe('');
      // a safety net: tsc over the packed types took 19-28 s with both cores busy (load average 16-20)
    },
    TYPECHECK_TIMEOUT_MS,
  );
});

async function npm(args: string[], cwd: string): Promise<void> {
  // npm_config_* of the running npm (a `npm test`) would point these commands at the repo.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  await run('npm', args, { cwd, env, timeout: INSTALL_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
}

/** README.md's quick example, as a user copies it (the first ```ts block after `## Quick example`). */
function readmeQuickExample(): string {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick example'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error("README.md has no ```ts block under '## Quick example'");
  return block[1];
}
