import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium, which the test command provisions (tests/support/test-tools.ts). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Headless Debian Chromium for a test of something that renders (`what` names it for the message).
 * The flags keep it off the network: this machine's closed network refuses Chromium's own calls.
 */
export async function launchChromium(what: string): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: ${what} is tested in a real browser. Install it with "apt-get install -y chromium".`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
