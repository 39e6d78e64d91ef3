import type { Page } from 'playwright-core';

/** Registers `name` through the browser's own form and waits for the home page it lands on. */
export async function registerThrough(page: Page, baseUrl: string, name: string): Promise<void> {
  await page.goto('/register');
  await page.fill('#name', name);
  await page.fill('#password', 'correct horse battery');
  await page.fill('#confirm', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL(`${baseUrl}/`);
}
