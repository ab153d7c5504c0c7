// The chat page. It talks only to its own app server (/login, /api/*); the
// app server adds the runedge token and the user's identity. Plain JS, no
// build step: the whole client is this file, errors.js, stream.js and
// table.js, loaded as ES modules.
import { UserError, errorOf, friendly } from './errors.js';
import { streamChat, streamResponse } from './stream.js';
import { render } from './table.js';

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
  // runedge checks structured output against the schema before sending
  // it, so it arrives at the end rather than word by word.
  if (structured) bubble.body.dataset.placeholder = 'Preparing the task plan; it is checked against the schema before it is shown…';
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
    const show = (t) => { bubble.body.textContent = t; };
    if (structured) bubble.body.classList.add('json');
    const answer = structured ? await streamResponse(res, show) : await streamChat(res, show);
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

// showTable replaces the streamed JSON with a table of it.
function showTable(bubble, text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new UserError('The answer was not valid JSON.');
  }
  bubble.body.classList.remove('json');
  bubble.body.replaceChildren(render(doc));
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
