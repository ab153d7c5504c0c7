// SSE keepalive comments (": keepalive") with openai-node: a runedge whose
// offline provider pauses 250 ms between tokens and whose streams comment
// after 100 ms of silence. The raw stream must carry the comments (or this
// test proves nothing); the SDK must read the same stream as if they were
// not there.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startRunedge } from './stack.mjs';

let stack;
let client;
before(async () => {
  stack = await startRunedge('keepalive', { tokenDelay: '250ms', sseKeepalive: '100ms' });
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.token, maxRetries: 0 });
});
after(async () => { await stack?.stop(); });

const messages = [{ role: 'user', content: 'one two three' }];

test('the raw stream carries keepalive comments', async () => {
  const res = await fetch(`${stack.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${stack.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'service', stream: true, messages }),
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  const comments = text.split('\n').filter((l) => l === ': keepalive').length;
  assert.ok(comments >= 3, `only ${comments} keepalives in:\n${text}`);
});

test('chat completions stream: comments are ignored', async () => {
  const stream = await client.chat.completions.create({ model: 'service', stream: true, messages });
  let text = '';
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  assert.equal(text, 'You said: one two three');
  assert.equal(chunks, 7); // role, five tokens, finish
});

test('responses stream: comments are ignored', async () => {
  const stream = await client.responses.create({ model: 'service', stream: true, input: 'one two three' });
  let text = '';
  const types = [];
  for await (const ev of stream) {
    assert.ok(ev.type, `an event without a type: ${JSON.stringify(ev)}`);
    types.push(ev.type);
    if (ev.type === 'response.output_text.delta') text += ev.delta;
  }
  assert.equal(text, 'You said: one two three');
  assert.equal(types.at(-1), 'response.completed');
});
