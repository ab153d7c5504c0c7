// The real Codex CLI (npm @openai/codex, pinned in package.json) as the
// Codex tests drive it: a CODEX_HOME whose config.toml points its one model
// provider at runedge, and `codex exec --json` runs that return the JSONL
// events.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { startScriptedModel } from './scripted-model.mjs';
import { startRunedge } from './stack.mjs';

const codexBin = createRequire(import.meta.url).resolve('@openai/codex/bin/codex.js');

// codexHome makes a CODEX_HOME and a working directory for a Codex session
// against the runedge at baseURL. No feature is disabled and no tool is
// configured away: only where the model lives, and no update check (there
// is no network but loopback). providerLines are added to the provider's
// table (e.g. supports_websockets = true).
export function codexHome(baseURL, providerLines = []) {
  const home = mkdtempSync(join(tmpdir(), 'runedge-codex-home-'));
  const work = mkdtempSync(join(tmpdir(), 'runedge-codex-work-'));
  writeFileSync(join(home, 'config.toml'), [
    'model = "service"',
    'model_provider = "runedge"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.runedge]',
    'name = "runedge"',
    `base_url = "${baseURL}"`,
    'wire_api = "responses"',
    'env_key = "RUNEDGE_TOKEN"',
    ...providerLines,
    '',
  ].join('\n'));
  return { home, work };
}

// codex runs `codex exec --json …args` in work with home as CODEX_HOME and
// token as the provider's key, and returns its JSONL events (stderr kept
// for failures).
export function codex({ home, work }, token, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [codexBin, 'exec', '--json', '--skip-git-repo-check', ...args], {
      cwd: work,
      env: { ...process.env, CODEX_HOME: home, RUNEDGE_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`codex exited ${code}\nstdout:\n${out}\nstderr:\n${err}`));
        return;
      }
      resolve({ events: out.split('\n').filter(Boolean).map((l) => JSON.parse(l)), stderr: err });
    });
  });
}

// codexStack registers the hooks every Codex test file needs: a scripted
// model (scripted-model.mjs) and a runedge of its own in front of it, whose
// access log holds only that file's turns. Its model and stack are set
// before the tests run.
export function codexStack(name) {
  const env = { model: undefined, stack: undefined };
  before(async () => {
    env.model = await startScriptedModel();
    env.stack = await startRunedge(name, { upstream: env.model.baseURL });
  });
  after(async () => {
    await env.stack?.stop();
    await env.model?.close();
  });
  return env;
}
