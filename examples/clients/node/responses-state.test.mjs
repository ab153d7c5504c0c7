// Conversations that remember: the Vercel AI SDK's default
// Responses provider sends its second turn with the first answer as an
// item_reference; openai-node continues by previous_response_id, reads a
// stored response back and polls a background one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { startRunedge } from './stack.mjs';

let stack;
let client;
before(async () => {
  stack = await startRunedge('responses-state');
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.token, maxRetries: 0 });
});
after(async () => { await stack?.stop(); });

// recordingProvider is the Vercel AI SDK's OpenAI provider for runedge,
// keeping every request body it sends in sent.
function recordingProvider(sent) {
  return createOpenAI({
    baseURL: stack.baseURL,
    apiKey: stack.token,
    fetch: async (url, init) => {
      if (init?.body) sent.push(JSON.parse(init.body));
      return fetch(url, init);
    },
  });
}

test('Vercel AI SDK: two turns with openai.responses (default settings)', async () => {
  const sent = [];
  const openai = recordingProvider(sent);
  const model = openai.responses('service');
  const messages = [{ role: 'user', content: 'my name is Ada' }];
  const first = await generateText({ model, messages });
  assert.equal(first.text, 'You said: my name is Ada');
  messages.push(...first.response.messages, { role: 'user', content: 'what is my name' });
  const second = await generateText({ model, messages });
  assert.equal(second.text, 'You said: what is my name');
  // The SDK referenced the first answer instead of repeating it...
  const refs = sent[1].input.filter((item) => item.type === 'item_reference');
  assert.equal(refs.length, 1, JSON.stringify(sent[1].input));
  assert.match(refs[0].id, /^msg_/);
  // ...and the agent received it: 4 + 6 + 4 words of input.
  assert.equal(second.usage.inputTokens, 14);
});

test('Vercel AI SDK: a tool loop with openai.responses (store on) references the call', async () => {
  const sent = [];
  const openai = recordingProvider(sent);
  const calls = [];
  const result = await generateText({
    model: openai.responses('service'),
    prompt: 'get_weather Paris',
    tools: {
      get_weather: tool({
        description: 'The weather in a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => { calls.push(city); return 'sunny'; },
      }),
    },
    stopWhen: stepCountIs(3),
  });
  assert.equal(calls.length, 1);
  assert.equal(result.steps.length, 2);
  assert.match(result.text, /^get_weather returned: /);
  // The second step named the model's call by reference (its fc_ item),
  // then sent the call's output.
  const input = sent[1].input;
  const ref = input.find((item) => item.type === 'item_reference');
  assert.ok(ref, JSON.stringify(input));
  assert.match(ref.id, /^fc_/);
  assert.ok(input.some((item) => item.type === 'function_call_output'), JSON.stringify(input));
});

test('openai-node: previous_response_id, retrieve, input items, background', async () => {
  const { data: r1, response: raw } = await client.responses
    .create({ model: 'service', input: 'my name is Ada', metadata: { ticket: 'T-1' } })
    .withResponse();
  assert.equal(r1.output_text, 'You said: my name is Ada');
  assert.equal(r1.metadata.ticket, 'T-1');
  assert.deepEqual(r1.metadata.service, {
    session_id: raw.headers.get('x-service-session-id'),
    run_id: raw.headers.get('x-service-run-id'),
  });
  const r2 = await client.responses.create({ model: 'service', input: 'what is my name', previous_response_id: r1.id });
  assert.equal(r2.previous_response_id, r1.id);
  assert.equal(r2.usage.input_tokens, 14);
  assert.equal(r2.metadata.service.session_id, r1.metadata.service.session_id);

  const again = await client.responses.retrieve(r1.id);
  assert.deepEqual(again, r1);
  const items = await client.responses.inputItems.list(r2.id);
  assert.equal(items.data.length, 1);
  assert.equal(items.data[0].content[0].text, 'what is my name');

  await assert.rejects(
    client.responses.create({ model: 'service', input: 'x', previous_response_id: 'resp_unknown' }),
    (err) => err.status === 400 && err.code === 'previous_response_not_found',
  );

  let bg = await client.responses.create({ model: 'service', input: 'in the background', background: true });
  assert.ok(['queued', 'in_progress'].includes(bg.status), bg.status);
  const deadline = Date.now() + 20_000;
  while (bg.status !== 'completed') {
    assert.ok(Date.now() < deadline, `still ${bg.status}`);
    await new Promise((r) => setTimeout(r, 20));
    bg = await client.responses.retrieve(bg.id);
  }
  assert.equal(bg.output_text, 'You said: in the background');
});
