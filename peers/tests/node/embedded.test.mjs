// The embedded example (generated-examples/embedded: an axum application with routes of its own
// that merges `generated::router(state)`, serving the conformance spec) through the TypeScript v2
// client, over HTTP in both eras: the handshake, tools/list equal to the spec's tools, a tool call,
// one elicitation round, and the application's own `GET /healthz` answering alongside.
//
// The binary is $MCPGEN_PEERS_BIN_DIR/embedded (peers/run.sh builds it) or, when unset, a
// `cargo build -p embedded` run here once. It takes `--bind` only: it is an application, not the
// command line of a generated server.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { FULL, LEGACY, MODERN, ROOT, Script, Session } from './harness.mjs';

const SPEC = JSON.parse(readFileSync(path.join(ROOT, 'specs/conformance.json'), 'utf8'));
const PROTOCOL = { [LEGACY]: '2025-11-25', [MODERN]: '2026-07-28' };

let exe;
function embeddedBinary() {
  if (!exe) {
    const dir = process.env.MCPGEN_PEERS_BIN_DIR;
    if (dir) {
      exe = path.join(dir, 'embedded');
    } else {
      const out = execFileSync('cargo', ['build', '--manifest-path', path.join(ROOT, 'generated-examples/Cargo.toml'),
        '-p', 'embedded', '--message-format=json'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
      for (const line of out.split('\n')) {
        let msg;
        try { msg = JSON.parse(line); } catch { continue; }
        if (msg.reason === 'compiler-artifact' && msg.target.name === 'embedded') exe = msg.executable;
      }
    }
  }
  assert.ok(exe && statSync(exe).isFile(), 'no embedded binary');
  return exe;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/** Starts `embedded --bind 127.0.0.1:<free port>`: {base, stop()}. */
async function startApplication() {
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const child = spawn(embeddedBinary(), ['--bind', `127.0.0.1:${port}`, '--log-level', 'error'],
      { stdio: ['ignore', 'ignore', 'inherit'] });
    let exited = false;
    child.once('exit', () => { exited = true; });
    const stop = () => new Promise((resolve) => {
      if (exited) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && !exited) {
      if (await canConnect(port)) return { base: `http://127.0.0.1:${port}`, stop };
      await new Promise((r) => setTimeout(r, 20));
    }
    await stop();
  }
  throw new Error('embedded: the application did not start');
}

for (const era of [LEGACY, MODERN]) {
  test(`embedded serves MCP beside its own routes [http-${era}]`, { timeout: 60_000 }, async () => {
    const app = await startApplication();
    const script = new Script().accept({ username: 'ada', email: 'ada@example.com' });
    const versionNegotiation = era === LEGACY ? { mode: 'legacy' } : { mode: { pin: MODERN } };
    const client = new Client({ name: 'mcpgen-peer-ts', version: '0.0.1' }, { capabilities: FULL, versionNegotiation });
    script.install(client, FULL);
    const session = new Session(client, app.stop);
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${app.base}/mcp`)));
      assert.equal(client.getNegotiatedProtocolVersion(), PROTOCOL[era]);
      // The application's own route answers while the MCP session is open.
      const health = await fetch(`${app.base}/healthz`);
      assert.equal(health.status, 200);
      assert.equal(await health.text(), 'ok\n');
      const tools = await session.tools();
      assert.deepEqual(tools.map((t) => t.name).sort(), Object.keys(SPEC.tools).sort());
      const simple = await session.call('test_simple_text', {});
      assert.deepEqual(simple.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
      const asked = await session.call('test_elicitation', { message: 'Who are you?' });
      assert.notEqual(asked.isError, true, JSON.stringify(asked));
      assert.deepEqual(asked.content, [{ type: 'text', text: 'User response: action=accept, username=ada, email=ada@example.com' }]);
      const index = await fetch(`${app.base}/`);
      assert.equal(index.status, 200);
      assert.equal(await index.text(), 'An axum application; MCP is served at /mcp.\n');
    } finally {
      await session.close();
    }
    assert.deepEqual(script.asked, [{ form: { message: 'Who are you?', schema: SPEC.$defs.UserInfo } }]);
    assert.equal(script.unscripted, 0);
  });
}
