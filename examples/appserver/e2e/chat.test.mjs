// The app server example in a real browser: headless Debian Chromium driven
// by playwright-core. It logs in, streams a chat, checks the run in
// runedge's history, shows structured output as a table, explains a failed
// run, cancels a run by closing the page, and explains runedge being down.
// Tests run in order and share one browser and one stack.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { artifacts, startStack } from './stack.mjs';

// The demo user of examples/appserver/users.json.
const USER = { login: 'ada', password: 'analytical-engine', id: 'u-ada', name: 'Ada Lovelace', tenant: 'acme' };

let stack;
let browser;
let page; // the page of the conversation tests
const seen = []; // every response header block the browser received

before(async () => {
  stack = await startStack();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // Without the background-networking flags Chromium keeps trying to
    // reach Google, which this machine's closed network refuses.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const p = await context.newPage();
  p.on('response', async (res) => { seen.push(JSON.stringify(await res.allHeaders())); });
  await p.goto(stack.appURL);
  await p.locator('#login-view').waitFor({ state: 'visible' });
  return p;
}

async function logIn(p) {
  await p.fill('#login-user', USER.login);
  await p.fill('#login-password', USER.password);
  await p.click('#login-submit');
  await p.locator('#chat-view').waitFor({ state: 'visible' });
}

// send types a message and waits until the answer has started streaming
// (the bubble has text and is still marked streaming); it returns that
// first partial text.
async function send(p, text) {
  const n = await p.locator('.msg.assistant').count();
  await p.fill('#prompt', text);
  await p.press('#prompt', 'Enter');
  const bubble = p.locator('.msg.assistant').nth(n);
  await bubble.waitFor();
  const partial = await p.waitForFunction((i) => {
    const b = document.querySelectorAll('.msg.assistant')[i];
    const t = b && b.querySelector('.text').textContent;
    return b && b.classList.contains('streaming') && t ? t : false;
  }, n);
  return { bubble, partial: await partial.jsonValue() };
}

async function finished(bubble) {
  await bubble.and(bubble.page().locator(':not(.streaming)')).waitFor({ timeout: 30_000 });
}

test('a wrong password is refused with a plain message', async () => {
  page = await newPage();
  await page.fill('#login-user', USER.login);
  await page.fill('#login-password', 'not-the-password');
  await page.click('#login-submit');
  const err = page.locator('#login-error');
  await err.waitFor({ state: 'visible' });
  assert.equal(await err.textContent(), 'Wrong user name or password.');
  assert.equal(await page.locator('#chat-view').isVisible(), false);
  await page.screenshot({ path: join(artifacts, 'appserver-login.png') });
});

test('a chat streams in and is recorded as the user\'s run', async () => {
  await logIn(page);
  const said = 'Hello from a real browser, streamed word by word';
  const { bubble, partial } = await send(page, said);
  await finished(bubble);
  const full = await bubble.locator('.text').textContent();
  assert.equal(full, `You said: ${said}`);
  assert.ok(partial.length < full.length && full.startsWith(partial), `partial ${JSON.stringify(partial)} seen before the end`);

  const runId = await page.textContent('#run-id');
  const sessionId = await page.textContent('#session-id');
  assert.match(runId, /^run_/);
  assert.equal(await bubble.getAttribute('data-run-id'), runId);
  const run = await stack.run(runId, USER.tenant);
  assert.deepEqual(run.actor, { id: USER.id, type: 'user', name: USER.name });
  assert.equal(run.tenant_id, USER.tenant);
  assert.equal(run.status, 'completed');
  assert.equal(run.session_id, sessionId);
  assert.equal(run.endpoint, 'chat.completions');

  // The conversation goes on in the same session and thread.
  const next = await send(page, 'And a second message');
  await finished(next.bubble);
  const runId2 = await page.textContent('#run-id');
  assert.notEqual(runId2, runId);
  assert.equal(await page.textContent('#session-id'), sessionId);
  const run2 = await stack.run(runId2, USER.tenant);
  assert.equal(run2.session_id, sessionId);
  assert.equal(run2.thread_id, run.thread_id);

  const cookies = await page.context().cookies();
  assert.equal(cookies.length, 1);
  assert.equal(cookies[0].httpOnly, true);
  assert.equal(cookies[0].sameSite, 'Lax');
});

test('structured output is shown as a table', async () => {
  await page.check('input[name=mode][value=structured]');
  // runedge validates structured output before sending it, so it comes in
  // one piece at the end: wait for the answer rather than for a stream.
  const n = await page.locator('.msg.assistant').count();
  await page.fill('#prompt', 'Plan the launch party for Friday');
  await page.press('#prompt', 'Enter');
  const bubble = page.locator('.msg.assistant').nth(n);
  await bubble.waitFor();
  await finished(bubble);
  const table = bubble.locator('table.result').first();
  await table.waitFor();
  assert.equal(await table.locator(':scope > tbody > tr:has(th:text-is("Priority")) > td').textContent(), 'high');
  assert.equal(await table.locator(':scope > tbody > tr:has(th:text-is("Title")) > td').textContent(), 'Plan the launch party for Friday');
  const steps = table.locator(':scope > tbody > tr:has(th:text-is("Steps")) table.result tbody tr');
  assert.equal(await steps.count(), 3);
  const run = await stack.run(await page.textContent('#run-id'), USER.tenant);
  assert.equal(run.endpoint, 'responses');
  assert.equal(run.status, 'completed');
});

test('a failed run is explained without internals', async () => {
  await page.check('input[name=mode][value=chat]');
  const n = await page.locator('.msg.assistant').count();
  await page.fill('#prompt', '/fail please');
  await page.press('#prompt', 'Enter');
  const err = page.locator('.msg.assistant').nth(n).locator('.error');
  await err.waitFor();
  const text = await err.textContent();
  assert.match(text, /model failed to answer/);
  assert.match(text, /reference: run_/);
  assert.doesNotMatch(text, /provider_error|offline|simulated|Error:|\n\s+at /);
  const run = await stack.run(await page.textContent('#run-id'), USER.tenant);
  assert.equal(run.status, 'failed');

  await page.screenshot({ path: join(artifacts, 'appserver-chat.png'), fullPage: true });

  // Nothing the browser holds or received carries the token.
  assert.ok(!(await page.content()).includes(stack.token));
  assert.ok(!JSON.stringify(await page.context().cookies()).includes(stack.token));
  assert.ok(seen.length > 5 && !seen.join('\n').includes(stack.token));
  assert.ok(!(await page.evaluate(() => document.cookie)).includes('appserver_session'), 'the session cookie is HttpOnly');
});

test('closing the page mid-answer cancels the run', async () => {
  const p = await newPage();
  await logIn(p);
  const long = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
  await send(p, long);
  const runId = await p.textContent('#run-id');
  assert.equal((await stack.run(runId, USER.tenant)).status, 'running');
  await p.close();
  let run;
  for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
    run = await stack.run(runId, USER.tenant);
    if (run.status !== 'running') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(run.status, 'cancelled');
  assert.equal(run.status_reason, 'client_disconnect');
});

test('runedge being down is explained', async () => {
  await stack.stopRunedge();
  const n = await page.locator('.msg.assistant').count();
  await page.fill('#prompt', 'Anyone there?');
  await page.press('#prompt', 'Enter');
  const err = page.locator('.msg.assistant').nth(n).locator('.error');
  await err.waitFor();
  assert.match(await err.textContent(), /cannot be reached right now/);
  await page.screenshot({ path: join(artifacts, 'appserver-down.png') });
});
