// The operator page (/ui/ on runedge's admin listener) in headless
// Chromium: a wrong token is refused, the admin token logs in (and is
// nowhere on the page afterwards), a chat completion appears in the run
// history live while it runs and turns completed, its detail shows the
// input as text (markup and all), the charts draw, the usage view charts
// each tenant's tokens and cost and lists budgets, and a plugin swapped
// with the CLI shows in the plugins table and the swap history.
// Screenshots go to artifacts/operator-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { artifacts, root } from './stack.mjs';
import { startOperatorStack } from './operator-stack.mjs';

let stack;
let browser;
let page;
const sent = []; // every request URL the browser made

before(async () => {
  stack = await startOperatorStack();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('request', (r) => sent.push(r.url()));
  page.on('pageerror', (e) => { throw e; });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

test('a wrong token is refused at the login form', async () => {
  await page.goto(`${stack.adminURL}/ui/`);
  await page.locator('#login-token').waitFor();
  await page.fill('#login-token', 'not-a-token');
  await page.click('#login-submit');
  await page.locator('#login-error').waitFor();
  assert.match(await page.locator('#login-error').textContent(), /not an admin token/);
  await page.screenshot({ path: join(artifacts, 'operator-login.png') });
});

test('the admin token logs in; it is in no URL, script or readable cookie', async () => {
  await page.fill('#login-token', stack.adminToken);
  await page.click('#login-submit');
  await page.locator('#runs-table').waitFor();
  await page.locator('#live.on').waitFor({ timeout: 10_000 });
  assert.equal(await page.evaluate(() => document.cookie), '', 'the session cookie is HttpOnly');
  const html = await page.content();
  assert.ok(!html.includes(stack.adminToken));
  assert.ok(!sent.some((u) => u.includes(stack.adminToken)), 'token in a URL');
  const cookies = await page.context().cookies();
  const c = cookies.find((x) => x.name === 'runedge_ui');
  assert.ok(c && c.httpOnly && c.sameSite === 'Strict' && c.value !== stack.adminToken);
});

let runID;
const words = Array.from({ length: 25 }, (_, i) => `word${i}`).join(' ');
const markup = '<b id="injected">bold</b>';

test('a chat completion appears live while it runs, then completes', async () => {
  const { id, done } = await stack.chat(`${markup} ${words}`, 'acme');
  runID = id;
  const row = page.locator(`#runs tr[data-id="${id}"]`);
  // No reload: the row arrives through the live stream.
  await row.waitFor({ timeout: 10_000 });
  assert.match(await row.locator('td').nth(1).textContent(), /running/);
  await page.screenshot({ path: join(artifacts, 'operator-runs-live.png') });
  await done;
  await page.waitForFunction((i) => {
    const r = document.querySelector(`#runs tr[data-id="${i}"]`);
    return r && r.children[1].textContent.startsWith('completed');
  }, id, { timeout: 10_000 });
  assert.equal(await row.locator('td').nth(3).textContent(), 'acme');
  assert.match(await row.locator('td').nth(7).textContent(), /\d+(\.\d+)? (ms|s)/);

  // Filters: another tenant hides it, its own shows it.
  await page.fill('#f-tenant', 'other');
  await page.press('#f-tenant', 'Enter');
  await row.waitFor({ state: 'detached' });
  await page.fill('#f-tenant', 'acme');
  await page.press('#f-tenant', 'Enter');
  await row.waitFor();
  await page.screenshot({ path: join(artifacts, 'operator-runs.png') });
});

test("a run's detail shows attribution, timings, usage, input as text and output", async () => {
  await page.locator(`#runs tr[data-id="${runID}"]`).click();
  await page.locator('#view-run').waitFor();
  await page.waitForFunction((i) => document.querySelector('#run-id').textContent === i, runID);
  const attribution = await page.locator('#run-attribution').textContent();
  assert.match(attribution, /acme/);
  assert.match(attribution, /app/);
  assert.match(await page.locator('#run-timings').textContent(), /duration\d+(\.\d+)? (ms|s)/);
  assert.match(await page.locator('#run-usage').textContent(), /output tokens\d+/);
  // The markup the client sent is shown, not rendered.
  assert.equal(await page.locator('#injected').count(), 0);
  assert.ok((await page.locator('#run-input').textContent()).includes(markup));
  assert.ok((await page.locator('#run-output').textContent()).includes('word24'));
  await page.screenshot({ path: join(artifacts, 'operator-run.png'), fullPage: true });
});

test('the charts draw request rate, latency and histograms', async () => {
  // Traffic between two readings of the registry gives the rate a slope.
  await page.click('#nav-charts');
  await page.locator('#view-charts').waitFor();
  await (await stack.chat('short one', 'acme')).done;
  await page.locator('#chart-rate polyline').waitFor({ timeout: 15_000 });
  await page.locator('#chart-latency polyline').waitFor();
  assert.ok(await page.locator('#hist-duration rect').count() > 5);
  assert.ok(await page.locator('#hist-ttft rect').count() > 5);
  await page.waitForFunction(() => /requests: chat\.completions2/.test(document.querySelector('#totals').textContent), null, { timeout: 10_000 });
  await page.screenshot({ path: join(artifacts, 'operator-charts.png') });
});

test('the usage view charts tokens and cost per tenant and lists budgets, nearest their limits first', async () => {
  await (await stack.chat('spend some of the globex budget now', 'globex')).done;
  await page.click('#nav-usage');
  await page.locator('#view-usage').waitFor();
  // One line per tenant in both charts (acme and globex have runs by now).
  await page.locator('#chart-usage-tokens polyline[data-tenant="globex"]').waitFor({ timeout: 15_000 });
  await page.locator('#chart-usage-tokens polyline[data-tenant="acme"]').waitFor();
  await page.locator('#chart-usage-cost polyline[data-tenant="globex"]').waitFor();
  const legend = await page.locator('#usage-legend').textContent();
  assert.match(legend, /globex: [\d,]+ tokens, [\d.e-]+ cost, 1 runs/);
  // globex has used a share of its 100 tokens, acme little of its 100,000:
  // globex is first in both lists.
  const first = page.locator('#budgets-table tbody tr').first();
  assert.equal(await first.locator('td').first().textContent(), 'globex-daily');
  assert.equal(await page.locator('#budgets-table tbody tr').count(), 2);
  assert.match(await page.locator('#nearest li').first().textContent(), /^globex: \d+% of globex-daily used/);
  // The day view reads the same ledger.
  await page.selectOption('#usage-bucket', 'day');
  await page.locator('#chart-usage-tokens polyline[data-tenant="globex"]').waitFor();
  await page.screenshot({ path: join(artifacts, 'operator-usage.png'), fullPage: true });
});

test('a plugin swapped with the CLI shows in the plugins table and swap history', async () => {
  await stack.swap('chat.completions/translate', join(root, 'examples/plugins/build/metadata.wasm'));
  await page.click('#nav-plugins');
  await page.locator('#view-plugins').waitFor();
  const stageRow = page.locator('#plugins-table tbody tr', { hasText: 'chat.completions/translate' });
  await stageRow.waitFor();
  // Uploaded plugins are stored under their digest: the version tells it.
  assert.match(await stageRow.textContent(), /1\.0\.0/);
  const swap = page.locator('#swaps-table tbody tr').first();
  assert.match(await swap.textContent(), /CLI, token ops/);
  assert.match(await swap.textContent(), /chat\.completions\/translate: openai sha256:\w+ \(\w+\) → \w+ 1\.0\.0/);
  await page.screenshot({ path: join(artifacts, 'operator-plugins.png'), fullPage: true });
});

test('logging out ends the session on the server', async () => {
  const { value } = (await page.context().cookies()).find((x) => x.name === 'runedge_ui');
  await page.click('#logout');
  await page.locator('#login-token').waitFor();
  const res = await fetch(`${stack.adminURL}/ui/api/runs`, { headers: { Cookie: `runedge_ui=${value}` } });
  assert.equal(res.status, 401);
});
