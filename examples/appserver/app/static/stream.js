// Reading runedge's streams as the app server passes them through: SSE
// parsed from fetch's ReadableStream, for both chat chunks and typed
// responses events.
import { UserError, friendly } from './errors.js';

// readEvents calls onEvent(name, data) for each server-sent event as it
// arrives. fetch's ReadableStream hands over bytes in whatever pieces the
// network made, so events are reassembled at blank lines.
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let cut;
    while ((cut = buf.search(/\r?\n\r?\n/)) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(buf[cut] === '\r' ? cut + 4 : cut + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) onEvent(name, data.join('\n'));
    }
  }
}


// streamChat reads chat.completion.chunk events until [DONE], calling
// onText with the text so far, and returns the whole text.
export async function streamChat(res, onText) {
  let text = '';
  let done = false;
  let failure = null;
  await readEvents(res.body, (name, data) => {
    if (data === '[DONE]') { done = true; return; }
    const msg = JSON.parse(data);
    if (msg.error) { failure = msg.error; return; }
    const delta = msg.choices && msg.choices[0] && msg.choices[0].delta;
    if (delta && delta.content) {
      text += delta.content;
      onText(text);
    }
  });
  if (failure) throw new UserError('The answer was interrupted: ' + lower(friendly(500, failure)));
  if (!done) throw new UserError('The connection was lost before the answer finished.');
  return text;
}

// streamResponse reads typed responses events until response.completed,
// calling onText with the text so far, and returns the final output text.
export async function streamResponse(res, onText) {
  let text = '';
  let final = null;
  let failure = null;
  await readEvents(res.body, (name, data) => {
    const ev = JSON.parse(data);
    switch (ev.type || name) {
      case 'response.output_text.delta':
        text += ev.delta;
        onText(text);
        break;
      case 'response.completed':
        final = outputText(ev.response);
        break;
      case 'response.failed':
        failure = ev.response && ev.response.error;
        break;
      case 'error':
        failure = ev.error || ev;
        break;
    }
  });
  if (failure) throw new UserError('The answer was interrupted: ' + lower(friendly(500, failure)));
  if (final === null) throw new UserError('The connection was lost before the answer finished.');
  return final;
}

function outputText(response) {
  for (const item of response.output || []) {
    for (const part of item.content || []) {
      if (part.type === 'output_text') return part.text;
    }
  }
  return '';
}

function lower(s) {
  return s.charAt(0).toLowerCase() + s.slice(1);
}
