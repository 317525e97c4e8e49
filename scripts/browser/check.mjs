// Drives headless Chromium (Debian's /usr/bin/chromium) for make browser-check: opens the
// console of a live gateway at 1280 px, opens one dead-letter queue's page (its messages,
// peeked) and then clicks its redrive button,
// waits until the console reports the move task COMPLETED, checks that the console's
// matrix (levels and operational properties) is the one in sqlite.json beside REPORT_HTML,
// and saves screenshots of the console and of the compatibility page. scripts/browser-check.sh starts the gateway, fills
// the DLQ and checks afterwards, through the SQS API, that the messages moved.
//
//   node check.mjs CONSOLE_URL KEY SECRET DLQ REPORT_HTML OUT_DIR
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { readFileSync } from 'node:fs';

const [consoleURL, key, secret, dlq, reportHTML, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node check.mjs CONSOLE_URL KEY SECRET DLQ REPORT_HTML OUT_DIR');
  process.exit(2);
}
const width = 1280;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const ctx = await browser.newContext({
    viewport: { width, height: 900 },
    httpCredentials: { username: key, password: secret },
  });
  const page = await ctx.newPage();
  await page.goto(consoleURL);

  // The DLQ's name opens its queue page: its messages, listed without receiving them.
  await Promise.all([page.waitForURL(/\/console\/queue\?name=/), page.getByRole('link', { name: dlq, exact: true }).click()]);
  const listed = await page.locator('tr.visible').count();
  console.log(`console: ${dlq}'s page lists ${listed} visible messages`);
  if (listed !== 3) throw new Error(`${dlq}'s page lists ${listed} visible messages, want 3`);
  await page.screenshot({ path: path.join(outDir, 'console-queue-1280.png'), fullPage: true });
  console.log(`saved ${path.join(outDir, 'console-queue-1280.png')}`);
  await page.goto(consoleURL);

  // The DLQ's row offers "Redrive N to SOURCE"; click it as a person would.
  const row = page.locator('tr', { has: page.locator('td', { hasText: new RegExp(`^${dlq}$`) }) });
  const button = row.getByRole('button', { name: /^Redrive \d+ to / });
  const label = (await button.textContent()).trim();
  console.log(`console: clicking "${label}"`);
  await Promise.all([page.waitForURL(/msg=/), button.click()]);
  const msg = (await page.locator('p.msg, p.err').first().textContent()).trim();
  console.log(`console: ${msg}`);
  if (!msg.startsWith('started a redrive')) throw new Error(`redrive not started: ${msg}`);

  // The console shows the task's progress; reload until it says COMPLETED (bounded).
  for (let i = 0; ; i++) {
    const cell = (await row.locator('td').last().textContent()).trim();
    if (/COMPLETED/.test(cell)) { console.log(`console: ${dlq}: ${cell}`); break; }
    if (/FAILED|CANCELLED/.test(cell) || i === 60) throw new Error(`move task did not complete: ${cell}`);
    await page.waitForTimeout(500);
    await page.reload();
  }
  // The console's matrix as the browser shows it, against the report's sqlite.json.
  const compatJSON = path.join(path.dirname(reportHTML), 'sqlite.json');
  const rep = JSON.parse(readFileSync(compatJSON, 'utf8'));
  const shown = await page.$$eval('tr', (trs) => trs.filter((tr) => tr.className && tr.cells.length === 3)
    .map((tr) => [tr.cells[0].innerText.trim(), tr.cells[1].innerText.trim()]));
  const levels = new Map(shown);
  const wrong = rep.capabilities.filter((c) => levels.get(c.id) !== c.level).map((c) => `${c.id}: console ${levels.get(c.id)}, report ${c.level}`);
  if (wrong.length || levels.size !== rep.capabilities.length) {
    throw new Error(`the console's matrix (${levels.size}) is not ${compatJSON}'s (${rep.capabilities.length}): ${wrong.join('; ')}`);
  }
  if (!rep.operations) throw new Error(`${compatJSON} has no operational properties: regenerate it`);
  const ops = new Map(await page.$$eval('table.ops tr', (trs) => trs.map((tr) => [tr.cells[0].innerText.trim(), tr.cells[1].innerText.trim()])));
  const keys = { 'what runs where': 'runs_where', 'scale-out': 'scale_out', durability: 'durability',
    'high availability': 'availability', 'ordering guarantees': 'ordering', 'throughput class': 'throughput', 'cost drivers': 'cost_drivers' };
  for (const [title, key] of Object.entries(keys)) {
    if (ops.get(title) !== rep.operations[key]) throw new Error(`console ${title}: "${ops.get(title)}", ${compatJSON}: "${rep.operations[key]}"`);
  }
  console.log(`console: its matrix (${levels.size} capabilities, ${ops.size} operational properties) is ${compatJSON}'s`);
  await page.screenshot({ path: path.join(outDir, 'console-1280.png'), fullPage: true });
  console.log(`saved ${path.join(outDir, 'console-1280.png')}`);

  const report = await ctx.newPage();
  await report.setViewportSize({ width, height: 1800 }); // the first table whole: how each backend runs
  await report.goto(pathToFileURL(path.resolve(reportHTML)).href);
  const overflow = await report.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 0) throw new Error(`${reportHTML} is ${overflow} px wider than ${width} px`);
  await report.screenshot({ path: path.join(outDir, 'compat-page-1280.png') });
  console.log(`saved ${path.join(outDir, 'compat-page-1280.png')} (the top 1800 px; no horizontal scrolling at ${width} px)`);
} finally {
  await browser.close();
}
