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
import { test } from 'node:test';
import { codex, codexHome, codexStack } from './codex-cli.mjs';
import { marker } from './scripted-model.mjs';

const env = codexStack('codex');

test('codex exec with its default tools: a tool call turn, then resume', async () => {
  const session = codexHome(env.stack.baseURL);

  const first = await codex(session, env.stack.token, ['RUN_TOOL: print the marker']);
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
  const offered = env.model.requests[0].tools.map((t) => t.function.name);
  for (const name of ['exec_command', 'spawn_agent']) assert.ok(offered.includes(name), offered.join(','));
  assert.ok(!offered.includes('web_search'), offered.join(','));

  const second = await codex(session, env.stack.token, ['resume', '--last', 'and now the second turn']);
  const answer = second.events.filter((e) => e.type === 'item.completed' && e.item.type === 'agent_message');
  assert.deepEqual(answer.map((e) => e.item.text), ['Second turn answered.'], JSON.stringify(second.events));
  // The resumed turn replays the first: its tool output reached the env.model.
  const last = env.model.requests[env.model.requests.length - 1].messages;
  assert.ok(last.some((m) => m.role === 'tool' && String(m.content).includes(marker)), JSON.stringify(last).slice(0, 2000));

  const res = await fetch(`${env.stack.baseURL.replace(/\/v1$/, '')}/runner/v1/runs`, { headers: { Authorization: `Bearer ${env.stack.token}` } });
  assert.equal(res.status, 200);
  const runs = (await res.json()).data.filter((r) => r.endpoint === 'responses');
  // Turn one: the run that ended in the call, the run that answered its
  // result; turn two: one more.
  assert.ok(runs.some((r) => r.status === 'completed' && r.status_reason === 'tool_calls'), JSON.stringify(runs));
  assert.ok(runs.filter((r) => r.status === 'completed').length >= 3, JSON.stringify(runs));
});
