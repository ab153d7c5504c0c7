// The OpenAI Agents SDK runs an agent with one function tool against
// runedge, with its Responses model and with its Chat Completions model:
// the model (the offline provider) calls the tool, the SDK runs it and sends
// the result back, and the final answer quotes it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { OpenAIChatCompletionsModel, OpenAIResponsesModel, run, setTracingDisabled } from '@openai/agents';
import { startRunedge } from './stack.mjs';
import { weatherAgent } from './weather.mjs';

setTracingDisabled(true);

let stack;
let client;
before(async () => {
  stack = await startRunedge('agents');
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.token, maxRetries: 0 });
});
after(async () => { await stack?.stop(); });

for (const [name, make] of [
  ['Responses model', () => new OpenAIResponsesModel(client, 'service')],
  ['Chat Completions model', () => new OpenAIChatCompletionsModel(client, 'service')],
]) {
  for (const stream of [false, true]) {
    test(`agent with a function tool, ${name}, stream ${stream}`, async () => {
      const calls = [];
      const agent = weatherAgent(make(), calls);
      let result;
      if (stream) {
        result = await run(agent, 'get_weather Paris', { stream: true });
        for await (const _ of result) { /* drain */ }
        await result.completed;
      } else {
        result = await run(agent, 'get_weather Paris');
      }
      assert.deepEqual(calls, ['Paris']);
      assert.equal(result.finalOutput, 'get_weather returned: sunny in Paris');
    });
  }
}
