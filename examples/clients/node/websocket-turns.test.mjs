// The WebSocket mode of /v1/responses from Node's own WebSocket client
// (undici), turn by turn as the Responses API's WebSocket mode specifies:
// sequential turns, a store:false continuation from the socket's own state
// and previous_response_not_found for it on another socket, a failed
// continuation that evicts that state, an error event followed by a good
// turn, closing the socket mid-turn cancels exactly that run (the native
// API shows it), and the upgrade refused (401, JSON) without a token.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { startRunedge } from './stack.mjs';

let stack;
before(async () => { stack = await startRunedge('websocket-turns'); });
after(async () => { await stack?.stop(); });

// open connects to /v1/responses of st (default: the file's stack) with
// its token.
function open(st = stack) {
  const ws = new WebSocket(st.baseURL.replace(/^http/, 'ws') + '/responses',
    { headers: { Authorization: `Bearer ${st.token}` } });
  const queue = [];
  let wake = null;
  ws.onmessage = (m) => { queue.push(JSON.parse(m.data)); wake?.(); };
  ws.onclose = () => { queue.push({ type: 'closed' }); wake?.(); };
  ws.onerror = () => {};
  const next = async () => {
    while (queue.length === 0) await new Promise((r) => { wake = r; });
    wake = null;
    return queue.shift();
  };
  // turn sends one response.create and returns its events up to the
  // terminal one.
  const turn = async (fields) => {
    ws.send(JSON.stringify({ type: 'response.create', model: 'service', ...fields }));
    const events = [];
    for (;;) {
      const ev = await next();
      events.push(ev);
      if (['response.completed', 'response.failed', 'response.incomplete', 'error', 'closed'].includes(ev.type)) return events;
    }
  };
  const opened = new Promise((res, rej) => {
    ws.onopen = res;
    ws.addEventListener('close', () => rej(new Error('closed before open')));
  });
  return { ws, turn, next, opened };
}

const last = (events) => events[events.length - 1];

test('sequential turns, store:false state on its socket only, eviction, errors', async () => {
  const a = open();
  await a.opened;
  const first = await a.turn({ input: 'Hello socket' });
  first.forEach((ev, i) => assert.equal(ev.sequence_number, i, `${ev.type} numbered ${ev.sequence_number}`));
  assert.equal(first[0].type, 'response.created');
  const r1 = last(first).response;
  assert.equal(last(first).type, 'response.completed');
  assert.equal(r1.output_text, 'You said: Hello socket');

  // Stored: continued from the store on the same socket.
  const r2 = last(await a.turn({ input: 'again', previous_response_id: r1.id })).response;
  assert.equal(r2.previous_response_id, r1.id);
  assert.equal(r2.metadata.service.session_id, r1.metadata.service.session_id);

  // store:false: continued from the socket's own state.
  const local = last(await a.turn({ input: 'Remember teal', store: false })).response;
  const cont = last(await a.turn({ input: 'What colour?', store: false, previous_response_id: local.id }));
  assert.equal(cont.type, 'response.completed', JSON.stringify(cont));
  assert.equal(cont.response.previous_response_id, local.id);

  // Another socket does not have it.
  const b = open();
  await b.opened;
  const missing = last(await b.turn({ input: 'What colour?', previous_response_id: local.id }));
  assert.equal(missing.type, 'error');
  assert.equal(missing.status, 400);
  assert.equal(missing.error.code, 'previous_response_not_found');

  // A failed continuation evicts the state it continued.
  const bad = last(await a.turn({ store: false, previous_response_id: local.id,
    input: [{ type: 'function_call_output', call_id: 'call_nope', output: 'x' }] }));
  assert.equal(bad.type, 'error');
  assert.equal(bad.status, 400);
  const gone = last(await a.turn({ input: 'hi', store: false, previous_response_id: local.id }));
  assert.equal(gone.error?.code, 'previous_response_not_found', JSON.stringify(gone));

  // An error event, then a good turn on the same socket.
  const unknown = last(await a.turn({ model: 'gpt-nope', input: 'x' }));
  assert.equal(unknown.type, 'error');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.error.code, 'model_not_found');
  const ok = last(await a.turn({ input: 'still here' }));
  assert.equal(ok.response.output_text, 'You said: still here');

  // Every turn is a run of the native API.
  const run = await stack.run(ok.response.metadata.service.run_id);
  assert.equal(run.status, 'completed');
  a.ws.close();
  b.ws.close();
});

test('the upgrade is refused before it happens without a token', async () => {
  const { status, body } = await new Promise((res, rej) => {
    const req = request(stack.baseURL + '/responses', {
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' },
    }, (r) => {
      let b = '';
      r.on('data', (c) => { b += c; });
      r.on('end', () => res({ status: r.statusCode, body: b }));
    });
    req.on('upgrade', () => rej(new Error('upgraded without a token')));
    req.on('error', rej);
    req.end();
  });
  assert.equal(status, 401);
  assert.equal(JSON.parse(body).error.code, 'invalid_api_key', body);
});

test('closing the socket mid-turn cancels that run, not another socket\'s', async () => {
  const slow = await startRunedge('websocket-close', { tokenDelay: '30ms' });
  try {
    const long = { type: 'response.create', model: 'service', input: 'word '.repeat(300) };
    const first = async (s) => {
      await s.opened;
      s.ws.send(JSON.stringify(long));
      const ev = await s.next();
      assert.equal(ev.type, 'response.created');
      return ev.response.metadata.service.run_id;
    };
    const other = open(slow);
    const otherID = await first(other);
    const closing = open(slow);
    const id = await first(closing);
    closing.ws.close(1000, 'bye');
    let r;
    for (let i = 0; i < 100; i++) {
      r = await slow.run(id);
      if (!['queued', 'running'].includes(r.status)) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.equal(r.status, 'cancelled', JSON.stringify(r));
    assert.equal(r.status_reason, 'client_disconnect');
    assert.equal((await slow.run(otherID)).status, 'running');
    other.ws.close();
  } finally {
    await slow.stop();
  }
});
