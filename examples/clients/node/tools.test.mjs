// Function tool loops with openai-node on both endpoints, streamed and not,
// against the offline provider: a user message naming a tool gets a call
// with arguments generated from the tool's schema; the tool result sent back
// gets a final answer quoting it (runner/provider/offline/README.md).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startRunedge } from './stack.mjs';

let stack;
let client;
before(async () => {
  stack = await startRunedge('tools');
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.token, maxRetries: 0 });
});
after(async () => { await stack?.stop(); });

const parameters = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};
const weather = (city) => JSON.stringify({ city, sky: 'sunny', celsius: 21 });

const chatTools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters, strict: true } }];

for (const stream of [false, true]) {
  test(`chat completions tool loop, stream ${stream}`, async () => {
    const messages = [{ role: 'user', content: 'get_weather Paris' }];
    let first;
    if (stream) {
      const s = client.chat.completions.stream({ model: 'service', messages, tools: chatTools });
      first = await s.finalChatCompletion();
    } else {
      first = await client.chat.completions.create({ model: 'service', messages, tools: chatTools });
    }
    const choice = first.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.tool_calls.length, 1);
    const call = choice.message.tool_calls[0];
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.match(call.id, /^call_/);
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });

    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: weather('Paris') });
    const final = await client.chat.completions.create({ model: 'service', messages, tools: chatTools, stream: false });
    assert.equal(final.choices[0].finish_reason, 'stop');
    assert.equal(final.choices[0].message.content, `get_weather returned: ${weather('Paris')}`);
  });
}

test('chat completions runTools helper drives the loop', async () => {
  const seen = [];
  const runner = client.chat.completions.runTools({
    model: 'service',
    messages: [{ role: 'user', content: 'get_weather Oslo' }],
    tools: [{
      type: 'function',
      function: {
        name: 'get_weather',
        parameters,
        parse: JSON.parse,
        function: (args) => { seen.push(args); return weather(args.city); },
      },
    }],
  });
  const content = await runner.finalContent();
  assert.deepEqual(seen, [{ city: 'Oslo' }]);
  assert.equal(content, `get_weather returned: ${weather('Oslo')}`);
});

const responseTools = [{ type: 'function', name: 'get_weather', description: 'Weather in a city', parameters, strict: true }];

for (const stream of [false, true]) {
  test(`responses tool loop, stream ${stream}`, async () => {
    const input = [{ role: 'user', content: 'get_weather Rome' }];
    let first;
    const events = [];
    if (stream) {
      const s = client.responses.stream({ model: 'service', input, tools: responseTools });
      s.on('event', (e) => events.push(e.type));
      first = await s.finalResponse();
    } else {
      first = await client.responses.create({ model: 'service', input, tools: responseTools });
    }
    assert.equal(first.status, 'completed');
    assert.equal(first.output_text, '');
    const calls = first.output.filter((i) => i.type === 'function_call');
    assert.equal(calls.length, 1);
    const call = calls[0];
    assert.match(call.id, /^fc_/);
    assert.match(call.call_id, /^call_/);
    assert.equal(call.name, 'get_weather');
    assert.equal(call.status, 'completed');
    assert.deepEqual(JSON.parse(call.arguments), { city: 'Rome' });
    if (stream) {
      assert.deepEqual(events.filter((t) => !t.endsWith('.delta')), [
        'response.created', 'response.output_item.added', 'response.function_call_arguments.done',
        'response.output_item.done', 'response.completed']);
      assert.ok(events.includes('response.function_call_arguments.delta'));
    }

    const next = [...input, call, { type: 'function_call_output', call_id: call.call_id, output: weather('Rome') }];
    const final = await client.responses.create({ model: 'service', input: next, tools: responseTools });
    assert.equal(final.output_text, `get_weather returned: ${weather('Rome')}`);
  });
}

test('a run that ends in tool calls is completed with reason tool_calls', async () => {
  const { data, response } = await client.chat.completions
    .create({ model: 'service', messages: [{ role: 'user', content: 'get_weather Lima' }], tools: chatTools })
    .withResponse();
  const run = await stack.run(response.headers.get('x-service-run-id'));
  assert.equal(run.status, 'completed');
  assert.equal(run.status_reason, 'tool_calls');
  assert.deepEqual(run.tool_calls.map((c) => [c.id, c.name, c.arguments]),
    data.choices[0].message.tool_calls.map((c) => [c.id, c.function.name, c.function.arguments]));
});

// Hosted tools (web_search …) cannot run here: withheld from the model, the
// request served and the tools echoed as sent; forcing one is refused.
test('hosted tools are withheld, and refused when forced', async () => {
  const tools = [{ type: 'web_search' }];
  const r = await client.responses.create({ model: 'service', input: 'hello', tools });
  assert.equal(r.status, 'completed');
  assert.equal(r.output_text, 'You said: hello');
  assert.equal(r.tools[0].type, 'web_search');
  await assert.rejects(
    client.responses.create({ model: 'service', input: 'x', tools, tool_choice: { type: 'web_search' } }),
    (e) => e.status === 400 && e.code === 'unsupported_parameter' && e.param === 'tool_choice');
});

// Codex's tool kinds: a namespace of functions and a custom tool, each
// round-tripped (call out, result back in the next turn).
test('namespace and custom tools round-trip', async () => {
  const tools = [
    { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents.', tools: [{ type: 'function', name: 'spawn_agent', parameters }] },
    { type: 'custom', name: 'apply_patch', description: 'Patch files.' },
  ];
  const ask = [{ role: 'user', content: 'spawn_agent Lima' }];
  let r = await client.responses.create({ model: 'service', input: ask, tools, store: false });
  const fc = r.output[0];
  assert.equal(fc.type, 'function_call');
  assert.equal(fc.namespace, 'multi_agent_v1');
  assert.equal(fc.name, 'spawn_agent');
  r = await client.responses.create({ model: 'service', tools, store: false,
    input: [...ask, fc, { type: 'function_call_output', call_id: fc.call_id, output: 'spawned' }] });
  assert.equal(r.output_text, 'spawn_agent returned: spawned');

  const patch = [{ role: 'user', content: 'apply_patch fix it' }];
  r = await client.responses.create({ model: 'service', input: patch, tools, store: false });
  const cc = r.output[0];
  assert.equal(cc.type, 'custom_tool_call');
  assert.equal(cc.input, 'fix it');
  r = await client.responses.create({ model: 'service', tools, store: false,
    input: [...patch, cc, { type: 'custom_tool_call_output', call_id: cc.call_id, output: 'patched' }] });
  assert.equal(r.output_text, 'apply_patch returned: patched');
});
