// Harness for the TypeScript-v2-client peer tests (@modelcontextprotocol/client 2.4.0 on Node 22).
//
// Every scenario runs over the cells {stdio, http} x {legacy, 2026-07-28}: it starts one of the
// example binaries itself, connects the client with `versionNegotiation: {mode: 'legacy'}`
// (initialize handshake, 2025-11-25) or `{mode: {pin: '2026-07-28'}}` (server/discover, per-request
// _meta, MRTR auto-fulfilled through the same request handlers), answers questions from a script
// and records every question asked.
//
// Binaries: $MCPGEN_PEERS_BIN_DIR (set by peers/run.sh after one cargo build) or, when unset, a
// `cargo build --message-format=json` of the three examples run here once.
// Cells whose 2026-07-28 run goes through multi-round-trip requests are declared with
// `needsMrtr: true` (documentation only: every cell runs).

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '../../..');
export const EXPECTED_TOOLS = JSON.parse(readFileSync(path.join(here, '../expected_tools.json'), 'utf8'));
export const LEGACY = 'legacy';
export const MODERN = '2026-07-28';
const PROTOCOL = { [LEGACY]: '2025-11-25', [MODERN]: '2026-07-28' };
const ERA = { [LEGACY]: 'legacy', [MODERN]: 'modern' };
const CALL_TIMEOUT_MS = 20_000;

export const CELLS = [
  { transport: 'stdio', era: LEGACY },
  { transport: 'stdio', era: MODERN },
  { transport: 'http', era: LEGACY },
  { transport: 'http', era: MODERN },
];

/** Registers `name [transport-era]` for each cell in `cells` (default: all four). */
export function overCells(name, options, body, cells = CELLS) {
  for (const cell of cells) {
    test(`${name} [${cell.transport}-${cell.era}]`, { timeout: 60_000 }, () => body(cell));
  }
}

// --- binaries ------------------------------------------------------------------------------------

let binaries;
export function binary(name) {
  if (!binaries) {
    binaries = {};
    const dir = process.env.MCPGEN_PEERS_BIN_DIR;
    if (dir) {
      for (const n of ['bookshop', 'files', 'bistro']) binaries[n] = path.join(dir, n);
    } else {
      const out = execFileSync('cargo', ['build', '--manifest-path', path.join(ROOT, 'generated-examples/Cargo.toml'),
        '-p', 'bookshop', '-p', 'files', '-p', 'bistro', '--message-format=json'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
      for (const line of out.split('\n')) {
        let msg;
        try { msg = JSON.parse(line); } catch { continue; }
        if (msg.reason === 'compiler-artifact' && msg.executable) binaries[msg.target.name] = msg.executable;
      }
    }
  }
  const exe = binaries[name];
  assert.ok(exe && statSync(exe).isFile(), `no binary for ${name}`);
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

/** Starts `<name> --transport http --bind 127.0.0.1:<free port>`: {url, stop()}. */
export async function startHttp(name) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const child = spawn(binary(name), ['--transport', 'http', '--bind', `127.0.0.1:${port}`, '--log-level', 'error'],
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
      if (await canConnect(port)) return { url: `http://127.0.0.1:${port}/mcp`, stop };
      await new Promise((r) => setTimeout(r, 20));
    }
    await stop();
  }
  throw new Error(`${name}: the HTTP server did not start`);
}

// --- the scripted client -------------------------------------------------------------------------

export const FULL = { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } };

/** Scripted answers and everything the server asked or notified. */
export class Script {
  constructor() {
    this.answers = [];
    this.sampleText = 'unscripted';
    this.asked = []; // {form: {message, schema}} | {url: {message, url, id}} | {sample: params} | 'roots'
    this.notifications = []; // [method, params]
    this.unscripted = 0;
  }
  accept(content) { this.answers.push({ action: 'accept', content }); return this; }
  answer(action) { this.answers.push({ action }); return this; }
  sample(text) { this.sampleText = text; return this; }

  /** Registers handlers for the declared capabilities (the SDK refuses the others). */
  install(client, capabilities) {
    if (capabilities.elicitation) client.setRequestHandler('elicitation/create', async (request) => {
      const p = request.params;
      if (p.mode === 'url') this.asked.push({ url: { message: p.message, url: p.url, id: p.elicitationId } });
      else this.asked.push({ form: { message: p.message, schema: p.requestedSchema } });
      if (this.answers.length) return this.answers.shift();
      this.unscripted += 1;
      return { action: 'decline' };
    });
    if (capabilities.sampling) client.setRequestHandler('sampling/createMessage', async (request) => {
      const { _meta, ...params } = request.params;
      this.asked.push({ sample: params });
      return { role: 'assistant', content: { type: 'text', text: this.sampleText }, model: 'fake-model', stopReason: 'endTurn' };
    });
    if (capabilities.roots) client.setRequestHandler('roots/list', async () => {
      this.asked.push('roots');
      return { roots: [{ uri: 'file:///home/user/proj' }] };
    });
    client.setNotificationHandler('notifications/elicitation/complete', async (notification) => {
      this.notifications.push([notification.method, notification.params]);
    });
  }
}

function withTimeout(promise, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} timed out`)), CALL_TIMEOUT_MS); }),
  ]);
}

export class Session {
  constructor(client, stop) { this.client = client; this.stop = stop; }

  call(tool, args) { return withTimeout(this.client.callTool({ name: tool, arguments: args }), `tools/call ${tool}`); }

  /** A successful call: one text block, structuredContent {result: text}. */
  async text(tool, args) {
    const r = await this.call(tool, args);
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.equal(r.content.length, 1, JSON.stringify(r));
    assert.equal(r.content[0].type, 'text');
    assert.deepEqual(r.structuredContent, { result: r.content[0].text });
    return r.content[0].text;
  }

  /** An isError result: one text block, no structuredContent. */
  async errorText(tool, args) {
    const r = await this.call(tool, args);
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(r.structuredContent, undefined);
    assert.equal(r.content.length, 1, JSON.stringify(r));
    assert.equal(r.content[0].type, 'text');
    return r.content[0].text;
  }

  /** A JSON-RPC error: {code, message, data}. */
  async protocolError(tool, args) {
    let r;
    try {
      r = await this.call(tool, args);
    } catch (e) {
      if (e.code === undefined) throw e;
      return { code: e.code, message: e.message, data: e.data };
    }
    assert.fail(`expected a JSON-RPC error, got ${JSON.stringify(r)}`);
  }

  async tools() {
    const r = await withTimeout(this.client.listTools(), 'tools/list');
    return r.tools;
  }

  async close() {
    await this.client.close();
    if (this.stop) await this.stop();
  }
}

/** Starts `server` over `transport` and connects the TS v2 client in `era`, declaring `capabilities`. */
export async function connect(server, { transport, era }, script, capabilities = FULL) {
  const versionNegotiation = era === LEGACY ? { mode: 'legacy' } : { mode: { pin: MODERN } };
  const client = new Client({ name: 'mcpgen-peer-ts', version: '0.0.1' }, { capabilities, versionNegotiation });
  script.install(client, capabilities);
  let stop = null;
  let clientTransport;
  if (transport === 'stdio') {
    clientTransport = new StdioClientTransport({ command: binary(server), args: ['--log-level', 'error'], stderr: 'inherit' });
  } else {
    const http = await startHttp(server);
    stop = http.stop;
    clientTransport = new StreamableHTTPClientTransport(new URL(http.url));
  }
  try {
    await withTimeout(client.connect(clientTransport), 'connect');
    assert.equal(client.getNegotiatedProtocolVersion(), PROTOCOL[era]);
    assert.equal(client.getProtocolEra(), ERA[era]);
  } catch (e) {
    await client.close().catch(() => {});
    if (stop) await stop();
    throw e;
  }
  return new Session(client, stop);
}

/** Runs `body(session)` on a fresh server and always closes it. */
export async function withSession(server, cell, script, body, capabilities = FULL) {
  const session = await connect(server, cell, script, capabilities);
  try {
    await body(session);
  } finally {
    await session.close();
  }
}

/** Waits up to two seconds for `condition()`. */
export async function eventually(condition) {
  for (let i = 0; i < 100; i++) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return condition();
}
