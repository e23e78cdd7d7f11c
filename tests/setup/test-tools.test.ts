import { describe, expect, it } from 'vitest';
import { MissingTestToolError, provisionTestTools, TEST_TOOLS, type TestTool } from '../support/test-tools';

function tool(program: string, installed: { value: boolean }): TestTool {
  return {
    program,
    debianPackage: `${program}-pkg`,
    usedBy: `the ${program} tests`,
    present: () => installed.value,
  };
}

describe('provisioning the programs the tests need', () => {
  it('does nothing when everything is installed', () => {
    const calls: string[][] = [];
    provisionTestTools({
      tools: [tool('a', { value: true })],
      canInstall: () => true,
      install: (packages) => calls.push([...packages]),
    });
    expect(calls).toEqual([]);
  });

  it('installs only what is missing, when it may', () => {
    const b = { value: false };
    const calls: string[][] = [];
    const lines: string[] = [];
    provisionTestTools({
      tools: [tool('a', { value: true }), tool('b', b)],
      canInstall: () => true,
      install: (packages) => {
        calls.push([...packages]);
        b.value = true;
      },
      log: (line) => lines.push(line),
    });
    expect(calls).toEqual([['b-pkg']]);
    expect(lines.join('\n')).toContain('installing b-pkg');
  });

  it('stops with one message naming the missing programs and the install command when it may not install', () => {
    const run = () =>
      provisionTestTools({
        tools: [tool('a', { value: false }), tool('b', { value: false })],
        canInstall: () => false,
        install: () => expect.unreachable('must not install'),
      });
    expect(run).toThrow(MissingTestToolError);
    expect(run).toThrow(/The tests need a \(the a tests\) and b \(the b tests\)/);
    expect(run).toThrow(/apt-get install -y --no-install-recommends a-pkg b-pkg/);
  });

  it('names the failure when apt-get fails or installs nothing', () => {
    const failing = () =>
      provisionTestTools({
        tools: [tool('a', { value: false })],
        canInstall: () => true,
        install: () => {
          throw new Error('E: Unable to locate package a-pkg\nmore');
        },
        log: () => {},
      });
    expect(failing).toThrow(/apt-get failed \(E: Unable to locate package a-pkg\)/);
    const noop = () =>
      provisionTestTools({
        tools: [tool('a', { value: false })],
        canInstall: () => true,
        install: () => {},
        log: () => {},
      });
    expect(noop).toThrow(/apt-get ran but did not install them/);
  });

  it('finds Chromium and redis-server on this machine (the global setup put them there)', () => {
    expect(TEST_TOOLS.map((t) => [t.program, t.present()])).toEqual([
      ['/usr/bin/chromium', true],
      ['redis-server', true],
    ]);
  });
});
