// What the authorization tests of the lending example share (lending.test.mjs): the suite's
// authorization server (peers/authz/start.sh: oidc-provider on loopback), the lending binary
// started as an OAuth resource server for it, raw HTTP requests of both eras, and the exact
// challenges of CONTRACT19 "HTTP answers".
//
// The authorization server must know the MCP server's resource URI before it starts (it issues
// tokens only for that audience), and the MCP server must know the issuer: so a free port P is
// chosen first, the authorization server is started for http://127.0.0.1:P/mcp, and the lending
// server is then started (and restarted, as a test needs other flags) on P.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

import { ROOT } from './harness.mjs';

const AUTHZ = path.join(ROOT, 'peers', 'authz');
export const CLIENTS = Object.fromEntries(
  (await import('../../authz/authz.json', { with: { type: 'json' } })).default.clients.map((c) => [c.client_id, c]),
);

let exe;
/** The lending binary: $MCPGEN_PEERS_BIN_DIR/lending, else a `cargo build -p lending` run once. */
export function lendingBinary() {
  if (!exe) {
    const dir = process.env.MCPGEN_PEERS_BIN_DIR;
    if (dir) {
      exe = path.join(dir, 'lending');
    } else {
      const out = execFileSync('cargo', ['build', '--manifest-path', path.join(ROOT, 'generated-examples/Cargo.toml'),
        '-p', 'lending', '--message-format=json'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
      for (const line of out.split('\n')) {
        let msg;
        try { msg = JSON.parse(line); } catch { continue; }
        if (msg.reason === 'compiler-artifact' && msg.target.name === 'lending') exe = msg.executable;
      }
    }
  }
  assert.ok(exe && statSync(exe).isFile(), 'no lending binary');
  return exe;
}

export function freePort() {
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

/**
 * Starts the authorization server for `resource` (its key written for the token workshop):
 * {issuer, keyFile, stop()}. It also stops when this process goes away (--exit-with-stdin).
 */
export async function startAuthz(resource) {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcpgen-lending-authz-'));
  const keyFile = path.join(dir, 'key.json');
  const child = spawn(path.join(AUTHZ, 'start.sh'), ['0', resource, '--key-out', keyFile, '--exit-with-stdin'],
    { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  let exited = false;
  child.once('exit', () => { exited = true; });
  const issuer = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`authz: no issuer within 15 s; stderr: ${stderr}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`authz: start.sh exited ${code}; stderr: ${stderr}`)));
    createInterface({ input: child.stdout }).once('line', (line) => { clearTimeout(timer); resolve(line); });
  });
  const stop = () => new Promise((resolve) => {
    if (exited) { rmSync(dir, { recursive: true, force: true }); return resolve(); }
    child.once('exit', () => { rmSync(dir, { recursive: true, force: true }); resolve(); });
    child.kill('SIGTERM');
  });
  return { issuer, keyFile, stop };
}

/**
 * Starts `lending --transport http --bind 127.0.0.1:<port> --auth-issuer <issuer>
 * --auth-resource <resource> ...extra` with `env` added: {stop(), stderr()}.
 */
export async function startLending(port, issuer, { extra = [], env = {} } = {}) {
  const resource = `http://127.0.0.1:${port}/mcp`;
  const child = spawn(lendingBinary(), ['--transport', 'http', '--bind', `127.0.0.1:${port}`, '--log-level', 'warn',
    '--auth-issuer', issuer, '--auth-resource', resource, ...extra],
  { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  let exited = false;
  child.once('exit', () => { exited = true; });
  const stop = () => new Promise((resolve) => {
    if (exited) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !exited) {
    if (await canConnect(port)) return { stop, stderr: () => stderr };
    await new Promise((r) => setTimeout(r, 20));
  }
  await stop();
  throw new Error(`lending did not start on port ${port}; stderr: ${stderr}`);
}

// --- the exact answers (CONTRACT19 "HTTP answers") -------------------------------------------------

export function answers(port) {
  const prm = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`;
  const invalidText = 'The access token is invalid or expired';
  return {
    prm,
    /** 401 without a token: RFC 6750 §3.1, no `error`. */
    noToken: (scope) => ({
      status: 401,
      challenge: `Bearer resource_metadata="${prm}", scope="${scope}"`,
      body: { error_description: 'Authentication required' },
    }),
    /** 401 for a token that does not verify: one public text. */
    invalid: (scope) => ({
      status: 401,
      challenge: `Bearer error="invalid_token", error_description="${invalidText}", resource_metadata="${prm}", scope="${scope}"`,
      body: { error: 'invalid_token', error_description: invalidText },
    }),
    /** 400 for a malformed Authorization header, with the reason. */
    invalidRequest: (why, scope) => ({
      status: 400,
      challenge: `Bearer error="invalid_request", error_description="${why}", resource_metadata="${prm}", scope="${scope}"`,
      body: { error: 'invalid_request', error_description: why },
    }),
    /** 503 while the authorization server cannot be reached: no challenge. */
    unavailable: {
      status: 503,
      challenge: null,
      body: { error: 'temporarily_unavailable', error_description: 'The access token cannot be verified now; try again later' },
    },
    /** 403 for a valid token lacking scopes: every scope the operation needs. */
    insufficient: (scope) => ({
      status: 403,
      challenge: `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${prm}", error_description="Required scope: ${scope}"`,
      body: { error: 'insufficient_scope', error_description: `Required scope: ${scope}` },
    }),
  };
}

/** Asserts an authorization answer: status, challenge, JSON body, no-store. */
export async function assertRefused(res, expected, what) {
  const text = await res.text();
  assert.deepEqual(
    { status: res.status, challenge: res.headers.get('www-authenticate'), body: JSON.parse(text) },
    expected,
    what,
  );
  assert.equal(res.headers.get('content-type'), 'application/json', `${what}: content-type`);
  assert.equal(res.headers.get('cache-control'), 'no-store', `${what}: cache-control`);
}

// --- raw requests of both eras ---------------------------------------------------------------------

export const INITIALIZE = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'raw', version: '0' } },
};
export const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };

const bearer = (token) => (token === undefined ? {} : { authorization: `Bearer ${token}` });

/** A legacy POST to `url` (a session id if given): the fetch Response. */
export function legacyPost(url, body, { token, session, headers = {} } = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
      ...bearer(token),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

let nextId = 100;
/** A 2026-07-28 request (with its `_meta` envelope and routing headers): the fetch Response. */
export function modernPost(url, method, params, { token, headers = {} } = {}) {
  const body = {
    jsonrpc: '2.0', id: nextId++, method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
      },
    },
  };
  const name = params.name ?? params.uri;
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
      ...bearer(token),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** The JSON-RPC message of a JSON body, or the last `data:` message of an SSE body. */
export async function rpc(res) {
  const text = await res.text();
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean);
    assert.ok(data.length > 0, `an SSE message: ${text}`);
    return JSON.parse(data.at(-1));
  }
  return JSON.parse(text);
}
