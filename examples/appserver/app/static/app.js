// The chat page. It talks only to its own app server (/login, /api/*); the
// app server adds the runedge token and the user's identity. Plain JS, no
// build step, so the whole client is this file.
'use strict';

// The fixed schema of the structured mode: a small task plan, shown as a
// table when it arrives.
const TASK_PLAN = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'priority', 'due', 'steps'],
  properties: {
    title: { type: 'string', maxLength: 80 },
    priority: { type: 'string', enum: ['high', 'medium', 'low'] },
    due: { type: 'string', format: 'date' },
    steps: {
      type: 'array', minItems: 3, maxItems: 3,
      items: {
        type: 'object', additionalProperties: false, required: ['step', 'minutes'],
        properties: { step: { type: 'string' }, minutes: { type: 'integer', minimum: 5, maximum: 120 } },
      },
    },
  },
};

const HINTS = {
  chat: 'Chat: the answer streams in word by word. Every message continues the same session.',
  structured: 'Task plan: the answer is JSON that matches a fixed schema, checked by runedge and shown as a table.',
};

const $ = (id) => document.getElementById(id);

const state = { user: null, sessionId: '', threadId: '', history: [], controller: null };

// ---- views ---------------------------------------------------------------

function showLogin(message) {
  state.user = null;
  resetConversation();
  $('chat-view').hidden = true;
  $('who').hidden = true;
  $('login-view').hidden = false;
  setLoginError(message || '');
  $('login-user').focus();
}

function showChat(user) {
  state.user = user;
  $('who-name').textContent = user.name;
  $('who-tenant').textContent = user.tenant;
  $('login-view').hidden = true;
  $('who').hidden = false;
  $('chat-view').hidden = false;
  $('prompt').focus();
}

function setLoginError(message) {
  $('login-error').textContent = message;
  $('login-error').hidden = !message;
}

function resetConversation() {
  if (state.controller) state.controller.abort();
  state.sessionId = '';
  state.threadId = '';
  state.history = [];
  $('messages').replaceChildren();
  $('session-id').textContent = 'new';
  $('run-id').textContent = 'none yet';
  $('run-status').textContent = 'idle';
}

function mode() {
  return document.querySelector('input[name=mode]:checked').value;
}

// addMessage appends a message bubble and returns its parts.
function addMessage(role, text) {
  const li = document.createElement('li');
  li.className = 'msg ' + role;
  const meta = document.createElement('div');
  meta.className = 'meta';
  const body = document.createElement('div');
  body.className = 'text';
  body.textContent = text;
  li.append(meta, body);
  $('messages').append(li);
  li.scrollIntoView({ block: 'end' });
  return { li, meta, body };
}

function showError(bubble, message, runId) {
  const p = document.createElement('p');
  p.className = 'error';
  p.setAttribute('role', 'alert');
  p.textContent = runId ? `${message} (reference: ${runId})` : message;
  bubble.li.append(p);
  bubble.li.scrollIntoView({ block: 'end' });
}

// ---- errors --------------------------------------------------------------

// friendly turns an error body into something a person can act on. Only
// known codes get specific words; nothing from the body is shown raw.
function friendly(status, err) {
  switch (err && err.code) {
    case 'login_required': return 'Your session has ended. Please log in again.';
    case 'upstream_unavailable': return 'The assistant service cannot be reached right now. Please try again in a moment.';
    case 'provider_error': return 'The assistant’s model failed to answer. Please try again.';
    case 'timeout': return 'The answer took too long and was stopped. Please try again.';
    case 'rate_limit_exceeded': return 'You are sending messages too quickly. Wait a few seconds and try again.';
    case 'unavailable': return 'The assistant is busy or restarting. Please try again shortly.';
    case 'run_failed': return 'The assistant could not produce a valid answer.';
    case 'run_waiting': return 'This answer needs an approval before it can continue.';
    case 'run_cancelled': return 'This answer was cancelled.';
    case 'invalid_api_key':
    case 'tenant_forbidden': return 'This site is not set up correctly to use the assistant. Please tell the site’s administrator.';
    case 'body_too_large': return 'The message is too long.';
    case 'not_found': return 'This conversation is no longer available. Start a new conversation.';
    case 'cross_origin': return 'The request was refused because it came from another site.';
  }
  if (status >= 500 || !status) return 'Something went wrong on the server. Please try again.';
  return 'The assistant could not accept this message.';
}

async function errorOf(res) {
  try {
    const body = await res.json();
    return body && body.error;
  } catch {
    return null;
  }
}

// ---- SSE -----------------------------------------------------------------

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

// ---- sending -------------------------------------------------------------

function request(text, structured) {
  if (structured) {
    return {
      path: '/api/responses',
      body: {
        model: 'service', stream: true, input: text,
        text: { format: { type: 'json_schema', name: 'task_plan', strict: true, schema: TASK_PLAN } },
      },
    };
  }
  return {
    path: '/api/chat',
    body: { model: 'service', stream: true, messages: [...state.history, { role: 'user', content: text }] },
  };
}

async function send(text) {
  const structured = mode() === 'structured';
  const { path, body } = request(text, structured);
  const headers = { 'Content-Type': 'application/json', Accept: 'text/event-stream' };
  // Session continuation: runedge answered with these ids; sending them
  // back puts the next run in the same session (and, in chat, thread).
  if (state.sessionId) headers['x-service-session-id'] = state.sessionId;
  if (state.threadId && !structured) headers['x-service-thread-id'] = state.threadId;

  addMessage('user', text);
  const bubble = addMessage('assistant', '');
  bubble.li.classList.add('streaming');
  setBusy(true);
  state.controller = new AbortController();
  let runId = '';
  try {
    let res;
    try {
      res = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body), signal: state.controller.signal });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      throw new UserError('Cannot reach this site’s server. Check your connection and try again.');
    }
    runId = noteRun(res, structured, bubble);
    if (!res.ok) {
      const err = await errorOf(res);
      if (err && err.code === 'login_required') {
        showLogin(friendly(res.status, err));
        return;
      }
      throw new UserError(friendly(res.status, err));
    }
    const answer = structured ? await streamResponse(res, bubble) : await streamChat(res, bubble);
    if (structured) {
      showTable(bubble, answer);
    } else {
      state.history.push({ role: 'user', content: text }, { role: 'assistant', content: answer });
    }
    $('run-status').textContent = 'completed';
  } catch (e) {
    if (e.name === 'AbortError') {
      $('run-status').textContent = 'stopped';
      showError(bubble, 'Stopped. The rest of this answer was cancelled.', runId);
    } else {
      $('run-status').textContent = 'failed';
      showError(bubble, e instanceof UserError ? e.message : 'Something went wrong on this page. Please reload it.', runId);
    }
  } finally {
    bubble.li.classList.remove('streaming');
    state.controller = null;
    setBusy(false);
  }
}

class UserError extends Error {}

// noteRun records the run headers runedge sent (the app server passes
// them through) and shows them.
function noteRun(res, structured, bubble) {
  const runId = res.headers.get('x-service-run-id') || '';
  const sessionId = res.headers.get('x-service-session-id');
  if (sessionId) state.sessionId = sessionId;
  if (!structured && res.headers.get('x-service-thread-id')) state.threadId = res.headers.get('x-service-thread-id');
  if (runId) {
    $('run-id').textContent = runId;
    bubble.meta.textContent = runId;
    bubble.li.dataset.runId = runId;
  }
  $('session-id').textContent = state.sessionId || 'new';
  $('run-status').textContent = res.ok ? 'streaming' : 'failed';
  return runId;
}

// streamChat reads chat.completion.chunk events until [DONE].
async function streamChat(res, bubble) {
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
      bubble.body.textContent = text;
    }
  });
  if (failure) throw new UserError('The answer was interrupted: ' + lower(friendly(500, failure)));
  if (!done) throw new UserError('The connection was lost before the answer finished.');
  return text;
}

// streamResponse reads typed responses events until response.completed and
// returns the final output text.
async function streamResponse(res, bubble) {
  let text = '';
  let final = null;
  let failure = null;
  bubble.body.className = 'json';
  await readEvents(res.body, (name, data) => {
    const ev = JSON.parse(data);
    switch (ev.type || name) {
      case 'response.output_text.delta':
        text += ev.delta;
        bubble.body.textContent = text;
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

// ---- the table -----------------------------------------------------------

function showTable(bubble, text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new UserError('The answer was not valid JSON.');
  }
  bubble.body.className = 'text';
  bubble.body.replaceChildren(render(doc));
}

// render builds DOM for a JSON value: objects as two-column tables, arrays
// of objects as tables with a column per key. textContent only, so a value
// can never become markup.
function render(v) {
  if (Array.isArray(v)) {
    if (v.length && v.every(isObject)) {
      const keys = [...new Set(v.flatMap(Object.keys))];
      const table = el('table', 'result');
      const head = table.createTHead().insertRow();
      for (const k of keys) head.append(el('th', '', label(k)));
      const tbody = table.createTBody();
      for (const row of v) {
        const tr = tbody.insertRow();
        for (const k of keys) tr.append(cell(row[k]));
      }
      return table;
    }
    return document.createTextNode(v.map((x) => (isObject(x) ? JSON.stringify(x) : String(x))).join(', '));
  }
  if (isObject(v)) {
    const table = el('table', 'result');
    const tbody = table.createTBody();
    for (const [k, x] of Object.entries(v)) {
      const tr = tbody.insertRow();
      tr.append(el('th', '', label(k)), cell(x));
    }
    return table;
  }
  return document.createTextNode(v === null ? '—' : String(v));
}

function cell(v) {
  const td = el('td', typeof v === 'number' ? 'num' : '');
  td.append(render(v));
  return td;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function label(key) {
  const s = key.replace(/_/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// ---- wiring --------------------------------------------------------------

function setBusy(busy) {
  $('send').disabled = busy;
  $('stop').hidden = !busy;
  document.querySelectorAll('input[name=mode]').forEach((r) => { r.disabled = busy; });
}

async function login(ev) {
  ev.preventDefault();
  const user = $('login-user').value.trim();
  const password = $('login-password').value;
  if (!user || !password) {
    setLoginError('Enter your user name and password.');
    return;
  }
  $('login-submit').disabled = true;
  try {
    const res = await fetch('/login', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ login: user, password }),
    });
    if (res.status === 401) {
      setLoginError('Wrong user name or password.');
      $('login-password').select();
      return;
    }
    if (!res.ok) {
      setLoginError(friendly(res.status, await errorOf(res)));
      return;
    }
    $('login-password').value = '';
    setLoginError('');
    showChat((await res.json()).user);
  } catch {
    setLoginError('Cannot reach this site’s server. Check your connection and try again.');
  } finally {
    $('login-submit').disabled = false;
  }
}

async function logout() {
  try {
    await fetch('/logout', { method: 'POST' });
  } finally {
    showLogin('');
  }
}

async function start() {
  $('login-form').addEventListener('submit', login);
  $('logout').addEventListener('click', logout);
  $('new-conversation').addEventListener('click', () => { resetConversation(); $('prompt').focus(); });
  $('stop').addEventListener('click', () => { if (state.controller) state.controller.abort(); });
  document.querySelectorAll('input[name=mode]').forEach((r) => r.addEventListener('change', () => {
    $('mode-hint').textContent = HINTS[mode()];
  }));
  $('composer').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = $('prompt').value.trim();
    if (!text || state.controller) return;
    $('prompt').value = '';
    send(text);
  });
  $('prompt').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey) {
      ev.preventDefault();
      $('composer').requestSubmit();
    }
  });
  try {
    const res = await fetch('/api/me');
    if (res.ok) {
      showChat((await res.json()).user);
      return;
    }
  } catch {
    // fall through to the login form, which reports connection problems
  }
  showLogin('');
}

start();
