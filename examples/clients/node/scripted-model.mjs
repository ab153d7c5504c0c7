// scriptedModel is a model upstream for runedge's openai provider: a real
// chat-completions endpoint on loopback, streamed (SSE chunks) or whole as
// asked, that plays a fixed script instead of a model:
//   - a conversation that ends in a tool result gets a text answer quoting it;
//   - a user message containing RUN_TOOL gets a call of the shell tool the
//     client offered (Codex's exec_command), to run `echo <marker>`;
//   - any other user message gets a plain text answer.
// Each request body is kept in requests, so a test can check what arrived.
import { createServer } from 'node:http';

export const marker = 'runedge-codex-ok';

export async function startScriptedModel() {
  const requests = [];
  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not JSON"}}');
      return;
    }
    requests.push(body);
    const msgs = body.messages ?? [];
    const last = msgs[msgs.length - 1] ?? {};
    const text = (m) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join(''));
    let answer;
    if (last.role === 'tool') {
      answer = { text: `The command printed: ${text(last).trim()}` };
    } else if (text(last).includes('RUN_TOOL')) {
      const names = (body.tools ?? []).map((t) => t.function?.name);
      if (names.includes('exec_command')) {
        answer = { call: { name: 'exec_command', arguments: JSON.stringify({ cmd: `echo ${marker}` }) } };
      } else if (names.includes('shell')) {
        answer = { call: { name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', `echo ${marker}`] }) } };
      } else {
        answer = { text: `no shell tool offered: ${names.join(',')}` };
      }
    } else {
      answer = { text: 'Second turn answered.' };
    }
    reply(res, body.stream === true, answer, requests.length);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseURL: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    close: () => new Promise((r) => server.close(r)),
  };
}

function reply(res, stream, answer, n) {
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const call = answer.call && { index: 0, id: `call_scripted_${n}`, type: 'function', function: answer.call };
  const finish = call ? 'tool_calls' : 'stop';
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    const message = call ? { role: 'assistant', content: null, tool_calls: [call] } : { role: 'assistant', content: answer.text };
    res.end(JSON.stringify({ id: `chatcmpl-${n}`, object: 'chat.completion', created: 0, model: 'scripted',
      choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta, finishReason = null) => `data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: 'chat.completion.chunk',
    created: 0, model: 'scripted', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
  if (call) {
    const args = call.function.arguments;
    res.write(chunk({ role: 'assistant', tool_calls: [{ ...call, function: { name: call.function.name, arguments: '' } }] }));
    res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 8) } }] }));
    res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(8) } }] }));
  } else {
    const words = answer.text.split(/(?= )/);
    res.write(chunk({ role: 'assistant', content: '' }));
    for (const w of words) res.write(chunk({ content: w }));
  }
  res.write(chunk({}, finish));
  res.end('data: [DONE]\n\n');
}
