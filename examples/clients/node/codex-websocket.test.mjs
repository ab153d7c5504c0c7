// The real Codex CLI (codex-cli.mjs) against runedge with its provider's
// `supports_websockets = true` (the key in Codex's [model_providers.<id>]
// table, as its config reference and the binary name it): Codex then opens
// GET /v1/responses upgraded (header OpenAI-Beta:
// responses_websockets=2026-02-06) and sends its turns as response.create
// events, a `generate: false` pre-warm first and `stream: true` inside each
// create; it falls back to POST /v1/responses only if the socket fails.
// Same session as codex.test.mjs (the scripted model behind runedge's
// openai provider): a turn with a shell tool call, then
// `codex exec resume --last`. runedge's access log shows every model turn
// came over a socket (method WEBSOCKET) and none over POST /v1/responses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codex, codexHome, codexStack } from './codex-cli.mjs';
import { marker } from './scripted-model.mjs';

const env = codexStack('codex-websocket');

test('codex exec over the Responses WebSocket: a tool call turn, then resume, no HTTP fallback', async () => {
  const session = codexHome(env.stack.baseURL, ['supports_websockets = true']);

  const first = await codex(session, env.stack.token, ['RUN_TOOL: print the marker']);
  const items = first.events.filter((e) => e.type === 'item.completed').map((e) => e.item);
  const cmd = items.find((i) => i.type === 'command_execution');
  assert.ok(cmd, `no command ran: ${JSON.stringify(first.events)}\n${first.stderr}`);
  assert.equal(cmd.exit_code, 0);
  assert.match(cmd.aggregated_output, new RegExp(marker));
  const said = items.filter((i) => i.type === 'agent_message').map((i) => i.text).join('\n');
  assert.match(said, new RegExp(`The command printed: [\\s\\S]*${marker}`));

  const second = await codex(session, env.stack.token, ['resume', '--last', 'and now the second turn']);
  const answer = second.events.filter((e) => e.type === 'item.completed' && e.item.type === 'agent_message');
  assert.deepEqual(answer.map((e) => e.item.text), ['Second turn answered.'], JSON.stringify(second.events));
  const last = env.model.requests[env.model.requests.length - 1].messages;
  assert.ok(last.some((m) => m.role === 'tool' && String(m.content).includes(marker)), JSON.stringify(last).slice(0, 2000));

  // Three model turns (the call, the answer to its result, the resumed
  // turn), each a completed run over a socket. A turn's access log line is
  // written after its last event reached the client: wait for the third.
  const turns = await env.stack.accessLog((l) => l.includes('method=WEBSOCKET') && l.includes('status=200'), 3);
  assert.equal(turns.length, 3, `socket turns in the access log:\n${env.stack.logText()}`);
  const posts = await env.stack.accessLog((l) => l.includes('method=POST') && l.includes('path=/v1/responses'), 0);
  assert.deepEqual(posts, [], 'a turn fell back to HTTP');
  // One socket per Codex process, every upgrade accepted (a refused one
  // would cost Codex a retry before its fallback).
  const upgrades = await env.stack.accessLog((l) => l.includes('method=GET') && l.includes('path=/v1/responses '), 2);
  assert.equal(upgrades.length, 2, upgrades.join('\n'));
  for (const line of upgrades) assert.match(line, / status=101 /);
  for (const line of turns) {
    const runID = /run_id=(\S+)/.exec(line)?.[1];
    assert.ok(runID, line);
    const r = await env.stack.run(runID);
    assert.equal(r.status, 'completed');
    assert.equal(r.endpoint, 'responses');
  }
});
