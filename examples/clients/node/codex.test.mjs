// The real Codex CLI (npm @openai/codex, pinned in package.json) against
// runedge, with its default tools: nothing disabled, so its first request
// carries function tools, the multi_agent_v1 namespace and a hosted
// web_search (which runedge withholds). The model is scripted-model.mjs
// behind runedge's openai provider, over real sockets both ways.
// Turn one: the model asks for a shell command, Codex runs it in its
// sandbox and sends the output back, the model answers quoting it. Turn
// two: `codex exec resume --last` continues the session. The stored runs
// show both turns.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { marker, startScriptedModel } from './scripted-model.mjs';
import { startRunedge } from './stack.mjs';

const codexBin = createRequire(import.meta.url).resolve('@openai/codex/bin/codex.js');

let model;
let stack;
before(async () => {
  model = await startScriptedModel();
  stack = await startRunedge('codex', { upstream: model.baseURL });
});
after(async () => {
  await stack?.stop();
  await model?.close();
});

// codex runs `codex exec --json …args` in work with home as CODEX_HOME and
// returns its JSONL events (stderr kept for failures).
function codex(home, work, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [codexBin, 'exec', '--json', '--skip-git-repo-check', ...args], {
      cwd: work,
      env: { ...process.env, CODEX_HOME: home, RUNEDGE_TOKEN: stack.token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`codex exited ${code}\nstdout:\n${out}\nstderr:\n${err}`));
        return;
      }
      resolve({ events: out.split('\n').filter(Boolean).map((l) => JSON.parse(l)), stderr: err });
    });
  });
}

test('codex exec with its default tools: a tool call turn, then resume', async () => {
  const home = mkdtempSync(join(tmpdir(), 'runedge-codex-home-'));
  const work = mkdtempSync(join(tmpdir(), 'runedge-codex-work-'));
  // No feature is disabled and no tool is configured away: only where the
  // model lives, and no update check (there is no network but loopback).
  writeFileSync(join(home, 'config.toml'), [
    'model = "service"',
    'model_provider = "runedge"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.runedge]',
    'name = "runedge"',
    `base_url = "${stack.baseURL}"`,
    'wire_api = "responses"',
    'env_key = "RUNEDGE_TOKEN"',
    '',
  ].join('\n'));

  const first = await codex(home, work, ['RUN_TOOL: print the marker']);
  const items = first.events.filter((e) => e.type === 'item.completed').map((e) => e.item);
  const cmd = items.find((i) => i.type === 'command_execution');
  assert.ok(cmd, `no command ran: ${JSON.stringify(first.events)}\n${first.stderr}`);
  assert.equal(cmd.exit_code, 0);
  assert.match(cmd.aggregated_output, new RegExp(marker));
  const said = items.filter((i) => i.type === 'agent_message').map((i) => i.text).join('\n');
  assert.match(said, new RegExp(`The command printed: [\\s\\S]*${marker}`));
  assert.ok(first.events.some((e) => e.type === 'turn.completed'), JSON.stringify(first.events));

  // What reached the model: Codex's default tools, namespaced ones
  // included, and web_search withheld (it is no function).
  const offered = model.requests[0].tools.map((t) => t.function.name);
  for (const name of ['exec_command', 'spawn_agent']) assert.ok(offered.includes(name), offered.join(','));
  assert.ok(!offered.includes('web_search'), offered.join(','));

  const second = await codex(home, work, ['resume', '--last', 'and now the second turn']);
  const answer = second.events.filter((e) => e.type === 'item.completed' && e.item.type === 'agent_message');
  assert.deepEqual(answer.map((e) => e.item.text), ['Second turn answered.'], JSON.stringify(second.events));
  // The resumed turn replays the first: its tool output reached the model.
  const last = model.requests[model.requests.length - 1].messages;
  assert.ok(last.some((m) => m.role === 'tool' && String(m.content).includes(marker)), JSON.stringify(last).slice(0, 2000));

  const res = await fetch(`${stack.baseURL.replace(/\/v1$/, '')}/runner/v1/runs`, { headers: { Authorization: `Bearer ${stack.token}` } });
  assert.equal(res.status, 200);
  const runs = (await res.json()).data.filter((r) => r.endpoint === 'responses');
  // Turn one: the run that ended in the call, the run that answered its
  // result; turn two: one more.
  assert.ok(runs.some((r) => r.status === 'completed' && r.status_reason === 'tool_calls'), JSON.stringify(runs));
  assert.ok(runs.filter((r) => r.status === 'completed').length >= 3, JSON.stringify(runs));
});
