// stack starts a real runedge for the SDK tests: the built binary
// (bin/runedge), the offline provider, a fresh SQLite file and the default
// plugins, on a free loopback port. The token is generated here.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const artifacts = join(root, 'artifacts');

// opts: tokenDelay (the offline provider's pause between tokens) and
// sseKeepalive (limits.sse_keepalive), as durations like '250ms';
// upstream, a chat-completions API root (scripted-model.mjs) that the
// openai provider then serves instead of the offline one.
export async function startRunedge(name, opts = {}) {
  mkdirSync(artifacts, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'runedge-node-'));
  const token = 'rk_node_' + randomBytes(16).toString('hex');
  const port = await freePort();
  const config = join(dir, 'runedge.yaml');
  writeFileSync(config, [
    `listen: 127.0.0.1:${port}`,
    'admin:',
    '  listen: 127.0.0.1:0', // never the default 8081: stacks run side by side
    'store:',
    `  path: ${join(dir, 'runs.db')}`,
    'provider:',
    ...(opts.upstream
      ? ['  kind: openai', '  openai:', `    base_url: ${opts.upstream}`, '    model: scripted']
      : ['  kind: offline']),
    ...(opts.tokenDelay ? ['  offline:', `    token_delay: ${opts.tokenDelay}`] : []),
    ...(opts.sseKeepalive ? ['limits:', `  sse_keepalive: ${opts.sseKeepalive}`] : []),
    'plugins:',
    `  cache_dir: ${join(tmpdir(), 'runedge-node-wazero-cache')}`,
    'chains:',
    ...['chat.completions', 'responses'].flatMap((ep) => {
      const wasm = join(root, 'plugins/build/openai.wasm'); // one plugin maps both endpoints
      return [`  ${ep}:`, `    map_request: ${wasm}`, `    translate: ${wasm}`];
    }),
    '',
  ].join('\n'));
  const url = `http://127.0.0.1:${port}`;
  const logPath = join(artifacts, `node-${name}-runedge.log`);
  const log = createWriteStream(logPath);
  const child = spawn(process.env.RUNEDGE_BIN || join(root, 'bin/runedge'), ['serve', '--config', config],
    { cwd: root, env: { ...process.env, SERVICE_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  let exited = false;
  const done = new Promise((res) => child.on('exit', () => { exited = true; res(); }));
  const stack = {
    token,
    baseURL: `${url}/v1`,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      await done;
      clearTimeout(timer);
    },
    // logText is runedge's log so far.
    logText: () => readFileSync(logPath, 'utf8'),
    // accessLog returns the access log lines (msg=request) that match,
    // waiting up to 5 s for at least want of them: a socket turn's line is
    // written after its last event reached the client, so a test that has
    // its answer may be ahead of the line.
    async accessLog(match, want) {
      let lines = [];
      for (let i = 0; i < 50; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 100));
        lines = stack.logText().split('\n').filter((l) => l.includes('msg=request') && match(l));
        if (lines.length >= want) break;
      }
      return lines;
    },
    // run reads a run from the native API.
    async run(id) {
      const res = await fetch(`${url}/runner/v1/runs/${id}`, { headers: { Authorization: `Bearer ${token}` } });
      if (!res.ok) throw new Error(`GET run ${id}: ${res.status} ${await res.text()}`);
      return res.json();
    },
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited) throw new Error(`runedge exited at start; see artifacts/node-${name}-runedge.log`);
    try {
      const res = await fetch(`${url}/v1/models`, { headers: { Authorization: `Bearer ${token}` } });
      if (res.ok) return stack;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stack.stop();
      throw new Error(`runedge not ready after 90 s; see artifacts/node-${name}-runedge.log`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}
