// The OpenAI Agents SDK's Responses WebSocket session against runedge: an
// agent with a function tool runs its tool loop over one socket to
// GET /v1/responses (upgraded), every turn a response.create that runedge
// runs as a run. runedge's access log shows the turns came over the socket
// (method WEBSOCKET) and none over POST /v1/responses.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTracingDisabled, withResponsesWebSocketSession } from '@openai/agents';
import { startRunedge } from './stack.mjs';
import { weatherAgent } from './weather.mjs';

setTracingDisabled(true);

let stack;
before(async () => { stack = await startRunedge('websocket'); });
after(async () => { await stack?.stop(); });

test('agent tool loop over the Responses WebSocket session', async () => {
  const calls = [];
  const agent = weatherAgent('service', calls);
  const result = await withResponsesWebSocketSession(
    async ({ run }) => run(agent, 'get_weather Paris'),
    { providerOptions: { apiKey: stack.token, baseURL: stack.baseURL } },
  );
  assert.deepEqual(calls, ['Paris']);
  assert.equal(result.finalOutput, 'get_weather returned: sunny in Paris');

  // Two turns (the call, then the answer), each a completed run.
  assert.equal(result.rawResponses.length, 2);
  const turns = await stack.accessLog((l) => l.includes('method=WEBSOCKET') && l.includes('status=200'), 2);
  const posts = await stack.accessLog((l) => l.includes('method=POST') && l.includes('path=/v1/responses'), 0);
  const log = stack.logText();
  assert.equal(turns.length, 2, `socket turns in the access log:\n${log}`);
  assert.equal(posts.length, 0, 'a turn fell back to HTTP');
  for (const line of turns) {
    const runID = /run_id=(\S+)/.exec(line)?.[1];
    assert.ok(runID, line);
    const r = await stack.run(runID);
    assert.equal(r.status, 'completed');
    assert.equal(r.endpoint, 'responses');
  }
});
