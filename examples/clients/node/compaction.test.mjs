// Compaction on POST /v1/responses, as the official clients ask for it: the
// Agents SDK's modelSettings.contextManagement (server-side compaction over
// a threshold) and Codex's compaction_trigger input item sent with
// openai-node, streamed. The compaction item comes back in the output, the
// SDK carries it into the next turn, and the agent answers from its
// summary (the offline provider names it).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { Agent, OpenAIResponsesModel, run, setTracingDisabled } from '@openai/agents';
import { startRunedge } from './stack.mjs';

setTracingDisabled(true);

let stack;
let client;
before(async () => {
  stack = await startRunedge('compaction');
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.token, maxRetries: 0 });
});
after(async () => { await stack?.stop(); });

const long = 'my name is Ada ' + 'blah '.repeat(1000).trim();

test('Agents SDK: contextManagement compacts over the threshold and the item carries on', async () => {
  const agent = new Agent({
    name: 'Echo', instructions: 'Answer.',
    model: new OpenAIResponsesModel(client, 'service'),
    modelSettings: { contextManagement: [{ type: 'compaction', compactThreshold: 1000 }] },
  });
  const first = await run(agent, [
    { role: 'user', content: long },
    { role: 'user', content: 'what is my name' },
  ]);
  const out = first.rawResponses.at(-1).output;
  assert.equal(out[0].type, 'compaction');
  assert.match(out[0].id, /^cmp_/);
  assert.match(out[0].encrypted_content ?? out[0].providerData?.encrypted_content ?? '', /^rc1\./);
  assert.match(first.finalOutput, /^You said: what is my name \(earlier: Summary: my name is Ada blah/);
  assert.ok(first.history.some((it) => it.type === 'compaction'), 'the SDK keeps the compaction item in its history');

  const second = await run(agent, [...first.history, { role: 'user', content: 'who am I' }]);
  assert.match(second.finalOutput, /^You said: who am I \(earlier: Summary: my name is Ada blah/);
});

test('openai-node: a compaction_trigger turn streams one compaction item', async () => {
  const stream = await client.responses.create({
    model: 'service', store: false, stream: true,
    input: [
      { role: 'user', content: 'my name is Ada' },
      { role: 'user', content: 'I like tea' },
      { type: 'compaction_trigger' },
    ],
  });
  const types = [];
  let item;
  let final;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === 'response.output_item.done') item = ev.item;
    if (ev.type === 'response.completed') final = ev.response;
  }
  assert.deepEqual(types, ['response.created', 'response.output_item.added', 'response.output_item.done', 'response.completed']);
  assert.equal(item.type, 'compaction');
  assert.deepEqual(final.output, [item]);
  assert.equal(final.output_text, '');

  const next = await client.responses.create({
    model: 'service', store: false,
    input: [item, { role: 'user', content: 'who am I' }],
  });
  assert.equal(next.output_text, 'You said: who am I (earlier: Summary: my name is Ada | I like tea)');
});
