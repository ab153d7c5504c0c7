// operatorStack starts a runedge (the built binary) with its admin
// listener on, for the operator page's browser test: an admin token for
// the page and the CLI, an ordinary token for traffic, the offline provider
// with a token delay long enough to see a run in flight, a fresh SQLite
// file. The admin token reaches the browser only by being typed into the
// login form.
import { createHash, randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifacts, freePort, launch, root, waitFor } from './stack.mjs';

const hash = (t) => 'sha256:' + createHash('sha256').update(t).digest('hex');

export async function startOperatorStack() {
  mkdirSync(artifacts, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'operator-e2e-'));
  const adminToken = 'rk_ops_' + randomBytes(16).toString('hex');
  const appToken = 'rk_app_' + randomBytes(16).toString('hex');
  const port = await freePort();
  const adminPort = await freePort();
  const config = join(dir, 'runedge.yaml');
  writeFileSync(config, [
    `listen: 127.0.0.1:${port}`,
    'tokens:',
    `  - {name: ops, hash: "${hash(adminToken)}", admin: true}`,
    `  - {name: app, hash: "${hash(appToken)}"}`,
    'admin:',
    `  listen: 127.0.0.1:${adminPort}`,
    'store:',
    `  path: ${join(dir, 'runs.db')}`,
    'provider:',
    '  kind: offline',
    '  offline:',
    '    token_delay: 120ms',
    'plugins:',
    `  cache_dir: ${join(tmpdir(), 'runedge-e2e-wazero-cache')}`,
    `  store_dir: ${join(dir, 'plugins')}`,
    'usage:',
    '  prices:',
    '    - {provider: offline, input_per_million: 2, output_per_million: 8}',
    '  budgets:',
    '    - {name: acme-daily, tenant: acme, tokens: 100000, window: day}',
    '    - {name: globex-daily, tenant: globex, tokens: 100, window: day}',
    '  default_max_output_tokens: 64',
    'chains:',
    ...['chat.completions', 'responses'].flatMap((ep) => {
      const wasm = join(root, 'plugins/build/openai.wasm'); // one plugin maps both endpoints
      return [`  ${ep}:`, `    map_request: ${wasm}`, `    translate: ${wasm}`];
    }),
    '',
  ].join('\n'));
  const bin = process.env.RUNEDGE_BIN || join(root, 'bin/runedge');
  const runedge = launch('operator-runedge', bin, ['serve', '--config', config], {});
  const url = `http://127.0.0.1:${port}`;
  const adminURL = `http://127.0.0.1:${adminPort}`;
  try {
    await waitFor(`${url}/v1/models`, { Authorization: `Bearer ${appToken}` }, runedge);
    await waitFor(`${adminURL}/healthz`, {}, runedge);
  } catch (e) {
    await runedge.stop();
    throw e;
  }
  return {
    url, adminURL, adminToken, appToken,
    stop: () => runedge.stop(),
    // chat sends a streamed chat completion as tenant and returns its run
    // id (from the headers, before the answer is read) and the rest of it.
    async chat(text, tenant) {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${appToken}`, 'Content-Type': 'application/json', 'x-service-tenant-id': tenant },
        body: JSON.stringify({ model: 'service', stream: true, messages: [{ role: 'user', content: text }] }),
      });
      if (!res.ok) throw new Error(`chat: ${res.status} ${await res.text()}`);
      return { id: res.headers.get('x-service-run-id'), done: res.text() };
    },
    // swap runs `runedge plugin swap` (the CLI, through the admin API).
    swap(stage, file) {
      return new Promise((res, rej) => {
        const p = spawn(bin, ['plugin', 'swap', '-admin', `127.0.0.1:${adminPort}`, '-token', adminToken, stage, file],
          { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        p.stdout.on('data', (d) => { out += d; });
        p.stderr.on('data', (d) => { out += d; });
        p.on('exit', (code) => (code === 0 ? res(out) : rej(new Error(`plugin swap: exit ${code}: ${out}`))));
      });
    },
  };
}
