// The OpenAI Agents SDK's OpenAIConversationsSession against runedge's
// Conversations API, unchanged: a multi-turn conversation whose second turn
// is answered from the history the session kept, a tool loop whose call and
// result land in the conversation, popItem and clearSession. Then the
// Responses API's conversation parameter, which continues the same
// conversation on the server.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { Agent, OpenAIConversationsSession, OpenAIResponsesModel, run, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { startRunedge } from './stack.mjs';

setTracingDisabled(true);

let stack;
let client;
before(async () => {
  stack = await startRunedge('conversations');
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.token, maxRetries: 0 });
});
after(async () => { await stack?.stop(); });

async function items(session) {
  return (await session.getItems()).map((it) => `${it.type}:${it.role ?? (it.type === 'function_call' ? it.name : '')}`);
}

test('OpenAIConversationsSession: multi-turn, popItem, clearSession', async () => {
  const session = new OpenAIConversationsSession({ client });
  const agent = new Agent({ name: 'Echo', instructions: 'Answer.', model: new OpenAIResponsesModel(client, 'service') });
  const first = await run(agent, 'my name is Ada', { session });
  assert.equal(first.finalOutput, 'You said: my name is Ada');
  const id = await session.getSessionId();
  assert.match(id, /^conv_/);
  const second = await run(agent, 'what is my name', { session });
  assert.equal(second.finalOutput, 'You said: what is my name');
  // The second run received the first turn from the session: its input
  // tokens count the instructions (1 word), the stored items (4 + 6) and
  // its own (4).
  assert.equal(second.rawResponses.at(-1).usage.inputTokens, 1 + 4 + 6 + 4);
  assert.deepEqual(await items(session),
    ['message:user', 'message:assistant', 'message:user', 'message:assistant']);
  const listed = await client.conversations.items.list(id, { order: 'asc' });
  assert.equal(listed.data[2].content[0].text, 'what is my name');

  const popped = await session.popItem();
  assert.equal(popped.role, 'assistant');
  assert.deepEqual(await items(session), ['message:user', 'message:assistant', 'message:user']);
  await session.clearSession();
  await assert.rejects(client.conversations.retrieve(id), (err) => err.status === 404);
});

test('OpenAIConversationsSession: a tool loop', async () => {
  const session = new OpenAIConversationsSession({ client });
  const calls = [];
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => { calls.push(city); return `sunny in ${city}`; },
  });
  const agent = new Agent({ name: 'Weather', instructions: 'Use get_weather to answer.',
    model: new OpenAIResponsesModel(client, 'service'), tools: [getWeather] });
  const result = await run(agent, 'get_weather Paris', { session });
  assert.deepEqual(calls, ['Paris']);
  assert.equal(result.finalOutput, 'get_weather returned: sunny in Paris');
  assert.deepEqual(await items(session),
    ['message:user', 'function_call:get_weather', 'function_call_result:', 'message:assistant']);
  const again = await run(agent, 'thanks', { session });
  assert.equal(again.finalOutput, 'You said: thanks');
  assert.equal((await session.getItems()).length, 6);
});

test('responses.create with conversation continues it on the server', async () => {
  const conv = await client.conversations.create({ items: [{ role: 'user', content: 'my name is Ada' }] });
  const r1 = await client.responses.create({ model: 'service', input: 'what is my name', conversation: conv.id });
  assert.equal(r1.conversation.id, conv.id);
  assert.equal(r1.usage.input_tokens, 4 + 4);
  const r2 = await client.responses.create({ model: 'service', input: 'again', conversation: { id: conv.id } });
  assert.equal(r2.usage.input_tokens, 8 + r1.output_text.split(' ').length + 1);
  const page = await client.conversations.items.list(conv.id, { order: 'asc' });
  assert.deepEqual(page.data.map((it) => it.role), ['user', 'user', 'assistant', 'user', 'assistant']);
  await assert.rejects(client.responses.create({ model: 'service', input: 'x', conversation: conv.id, previous_response_id: r2.id }),
    (err) => err.status === 400);
});
