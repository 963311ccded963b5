// Headless Debian chromium for the dashboard's browser specs, driven by playwright-core, and the
// screenshots they save for reviewers under artifacts/screenshots/ (gitignored).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.ORRERY_CHROMIUM ?? '/usr/bin/chromium';
export const INSTALL_CHROMIUM = 'apt-get install -y chromium';
export const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));

/** Why the browser specs cannot run here, or undefined when chromium is installed. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `chromium is not installed at ${CHROMIUM}; install it with: ${INSTALL_CHROMIUM}`;
}

/** `extraArgs`: e.g. `--host-resolver-rules=MAP rebind.example 127.0.0.1`, a name resolved as DNS rebinding would. */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  const missing = chromiumMissing();
  if (missing) throw new Error(missing);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extraArgs] });
}

/** Saves a full-page PNG as artifacts/screenshots/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
