// stack starts what the browser test needs: a runedge (the built binary,
// offline provider with a visible token delay, a fresh SQLite file) and the
// example app server in front of it, each on a free loopback port. The
// runedge token is generated here and handed to the app server through its
// environment, as `make example` does; the browser never sees it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const artifacts = join(root, 'artifacts');

// Time between streamed tokens: long enough to see text grow and to close
// the page mid-answer, short enough to keep the test quick.
const TOKEN_DELAY = '80ms';

export async function startStack() {
  mkdirSync(artifacts, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'appserver-e2e-'));
  const token = 'rk_e2e_' + randomBytes(16).toString('hex');
  const runedgePort = await freePort();
  const appPort = await freePort();
  const config = join(dir, 'runedge.yaml');
  writeFileSync(config, [
    `listen: 127.0.0.1:${runedgePort}`,
    // The admin listener on a free port: its default (8081) may be taken.
    'admin:',
    '  listen: 127.0.0.1:0',
    'store:',
    `  path: ${join(dir, 'runs.db')}`,
    'provider:',
    '  kind: offline',
    '  offline:',
    `    token_delay: ${TOKEN_DELAY}`,
    'plugins:',
    `  cache_dir: ${join(tmpdir(), 'runedge-e2e-wazero-cache')}`,
    'chains:',
    ...['chat.completions', 'responses'].flatMap((ep) => {
      const wasm = join(root, 'plugins/build/openai.wasm'); // one plugin maps both endpoints
      return [`  ${ep}:`, `    map_request: ${wasm}`, `    translate: ${wasm}`];
    }),
    '',
  ].join('\n'));

  const runedgeURL = `http://127.0.0.1:${runedgePort}`;
  const appURL = `http://127.0.0.1:${appPort}`;
  const runedge = launch('runedge', process.env.RUNEDGE_BIN || join(root, 'bin/runedge'),
    ['serve', '--config', config], { SERVICE_TOKEN: token });
  const app = launch('appserver', process.env.APPSERVER_BIN || join(root, 'bin/appserver'),
    ['-listen', `127.0.0.1:${appPort}`, '-runedge', runedgeURL, '-users', join(root, 'examples/appserver/users.json')],
    { RUNEDGE_TOKEN: token });
  const stack = {
    token, runedgeURL, appURL,
    async stopRunedge() { await runedge.stop(); },
    async stop() { await Promise.all([app.stop(), runedge.stop()]); },
    // run reads a run from runedge's history, acting for tenant, as the
    // app server's operators would.
    async run(id, tenant) {
      const res = await fetch(`${runedgeURL}/runner/v1/runs/${id}`, {
        headers: { Authorization: `Bearer ${token}`, 'x-service-tenant-id': tenant },
      });
      if (!res.ok) throw new Error(`GET run ${id}: ${res.status} ${await res.text()}`);
      return res.json();
    },
  };
  try {
    await waitFor(`${runedgeURL}/v1/models`, { Authorization: `Bearer ${token}` }, runedge);
    await waitFor(`${appURL}/`, {}, app);
  } catch (e) {
    await stack.stop();
    throw e;
  }
  return stack;
}

// launch starts a binary with its output in artifacts/, so a failed CI run
// can be read afterwards.
export function launch(name, bin, args, env) {
  const log = createWriteStream(join(artifacts, `e2e-${name}.log`));
  const child = spawn(bin, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  let exited = false;
  const done = new Promise((res) => child.on('exit', () => { exited = true; res(); }));
  child.on('error', (e) => log.write(`spawn ${bin}: ${e.message}\n`));
  return {
    name,
    get exited() { return exited; },
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      await done;
      clearTimeout(timer);
    },
  };
}

export async function waitFor(url, headers, proc) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (proc.exited) throw new Error(`${proc.name} exited at start; see artifacts/e2e-${proc.name}.log`);
    try {
      const res = await fetch(url, { headers });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready after 90 s; see artifacts/e2e-${proc.name}.log`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function freePort() {
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
