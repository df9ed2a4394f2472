// Proof that the suite's authorization server (server.mjs) and token workshop (workshop.mjs) are
// what the resource-server tests need: run by selftest.sh (node --test on Node 22).
//
// * The server, started by start.sh, issues RS256 `at+jwt` access tokens by client credentials
//   whose claims are exact and which verify against its JWKS with jose; refuses what it must;
//   introspects opaque tokens (RFC 7662).
// * Every workshop case is rejected by jose's verification (issuer, audience, algorithm
//   allow-list, typ, required claims, remote JWKS) with the exact error for its stated reason,
//   and passes once that one check is relaxed (so it is wrong in that way only).
// * The real clients' auth code goes from a 401 through discovery to a token from this server:
//   the TypeScript v2 client's `auth()` with `ClientCredentialsProvider`, and the Python SDK's
//   `ClientCredentialsOAuthProvider` under httpx2, against a minimal resource server written
//   here (RFC 9728 metadata, RFC 6750 challenges, jose verification), including the 403
//   insufficient_scope step-up.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { auth, ClientCredentialsProvider, extractWWWAuthenticateParams } from '@modelcontextprotocol/client';
import * as jose from 'jose';

import { discover, mintAll, requestToken, SKEW } from './workshop.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const PYTHON = process.env.PEERS_PYTHON ?? join(ROOT, '.cache', 'peers', 'venv', 'bin', 'python');
const CLIENTS = Object.fromEntries(
  (await import('./authz.json', { with: { type: 'json' } })).default.clients.map((c) => [c.client_id, c]),
);
const ALL = 'catalog:read loans:read loans:write';

/** Starts start.sh; resolves to {issuer, child} once it printed the issuer. */
function startServer(args) {
  const child = spawn(join(HERE, 'start.sh'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no issuer within 15 s; stderr: ${stderr}`)), 15000);
    child.once('exit', (code) => reject(new Error(`start.sh exited ${code}; stderr: ${stderr}`)));
    createInterface({ input: child.stdout }).once('line', (issuer) => {
      clearTimeout(timer);
      resolve({ issuer, child, stderr: () => stderr });
    });
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.kill('SIGTERM');
  });
}

// --- a minimal resource server, the shape the generated servers must have -----------------------
// GET /mcp?need=<scopes>: no token -> 401 challenge naming the server-wide scope catalog:read;
// bad token -> the same with error="invalid_token"; a token lacking `need` or catalog:read -> 403
// insufficient_scope naming both; else 200 with the verified principal.
const SERVER_WIDE = ['catalog:read'];

async function startResourceServer() {
  const http = createServer();
  await new Promise((r) => http.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${http.address().port}`;
  const rs = { origin, resource: `${origin}/mcp`, metadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp` };
  rs.close = () => new Promise((r) => {
    http.close(r);
    http.closeAllConnections();
  });
  rs.configure = ({ issuer, jwksUri }) => {
    rs.issuer = issuer;
    rs.jwks = jose.createRemoteJWKSet(new URL(jwksUri));
  };
  http.on('request', async (req, res) => {
    const url = new URL(req.url, origin);
    if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        resource: rs.resource,
        authorization_servers: [rs.issuer],
        scopes_supported: ALL.split(' '),
        bearer_methods_supported: ['header'],
      }));
      return;
    }
    if (url.pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const needed = [...new Set([...SERVER_WIDE, ...(url.searchParams.get('need') ?? '').split(' ').filter(Boolean)])];
    // 401 names the server-wide scopes (checked before the request is read), 403 all it needs
    const challenge = (status, extra) => {
      const scope = (status === 401 ? SERVER_WIDE : needed).join(' ');
      res.writeHead(status, {
        'www-authenticate': `Bearer ${extra}resource_metadata="${rs.metadataUrl}", scope="${scope}"`,
      }).end();
    };
    const header = req.headers.authorization ?? '';
    if (!header.startsWith('Bearer ')) {
      challenge(401, '');
      return;
    }
    let payload;
    try {
      ({ payload } = await jose.jwtVerify(header.slice(7), rs.jwks, {
        issuer: rs.issuer,
        audience: rs.resource,
        algorithms: ['RS256'],
        typ: 'at+jwt',
        requiredClaims: ['exp', 'sub', 'client_id'],
        clockTolerance: 30,
      }));
    } catch {
      challenge(401, 'error="invalid_token", ');
      return;
    }
    const granted = new Set((payload.scope ?? '').split(' '));
    if (!needed.every((s) => granted.has(s))) {
      challenge(403, 'error="insufficient_scope", ');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      sub: payload.sub,
      client_id: payload.client_id,
      scope: payload.scope,
    }));
  });
  return rs;
}

let as;
let rs;
let metadata;
let keyDir;
let minted;

const startedAt = Math.floor(Date.now() / 1000);

before(async () => {
  rs = await startResourceServer();
  keyDir = mkdtempSync(join(tmpdir(), 'mcpgen-authz-'));
  as = await startServer(['0', rs.resource, '--key-out', join(keyDir, 'key.json')]);
  metadata = await discover(as.issuer);
  rs.configure({ issuer: as.issuer, jwksUri: metadata.jwks_uri });
  minted = await mintAll({ issuer: as.issuer, resource: rs.resource, keyFile: join(keyDir, 'key.json') });
});

after(async () => {
  await rs?.close();
  if (as) {
    const stopped = await stopServer(as.child);
    assert.deepEqual(stopped, { code: 0, signal: null }, `the server stops cleanly on SIGTERM; stderr: ${as.stderr()}`);
  }
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
});

const verifyOptions = () => ({
  issuer: as.issuer,
  audience: rs.resource,
  algorithms: ['RS256'],
  typ: 'at+jwt',
  requiredClaims: ['exp', 'iat', 'sub', 'client_id', 'jti'],
  clockTolerance: 30,
});
const remoteJwks = () => jose.createRemoteJWKSet(new URL(metadata.jwks_uri));

describe('the authorization server', () => {
  test('prints the loopback issuer; discovery names its endpoints under it, at both well-known paths', async () => {
    assert.match(as.issuer, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(metadata.issuer, as.issuer);
    for (const [key, path] of [
      ['jwks_uri', '/jwks'],
      ['token_endpoint', '/token'],
      ['introspection_endpoint', '/token/introspection'],
      ['revocation_endpoint', '/token/revocation'],
    ]) {
      assert.equal(metadata[key], `${as.issuer}${path}`, key);
    }
    assert.deepEqual(metadata.scopes_supported, ['openid', ...ALL.split(' ')]);
    assert.ok(metadata.grant_types_supported.includes('client_credentials'));
    const rfc8414 = await fetch(`${as.issuer}/.well-known/oauth-authorization-server`).then((r) => r.json());
    assert.deepEqual(rfc8414, metadata);
  });

  test('the JWKS holds one public RS256 signing key and nothing private', async () => {
    const { keys } = await fetch(metadata.jwks_uri).then((r) => r.json());
    assert.equal(keys.length, 1);
    assert.deepEqual(Object.keys(keys[0]).sort(), ['alg', 'e', 'kid', 'kty', 'n', 'use']);
    assert.equal(keys[0].alg, 'RS256');
    assert.equal(keys[0].use, 'sig');
    assert.equal(keys[0].kid, await jose.calculateJwkThumbprint(keys[0]));
  });

  test('client credentials with resource and scope: an at+jwt access token with exact claims that verifies', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { status, body } = await requestToken(metadata, CLIENTS['mcp-machine'], {
      resource: rs.resource,
      scope: 'catalog:read loans:write',
    });
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 600);
    assert.equal(body.scope, 'catalog:read loans:write');
    const { payload, protectedHeader } = await jose.jwtVerify(body.access_token, remoteJwks(), verifyOptions());
    const { keys: [key] } = await fetch(metadata.jwks_uri).then((r) => r.json());
    assert.deepEqual(protectedHeader, { alg: 'RS256', typ: 'at+jwt', kid: key.kid });
    assert.deepEqual(Object.keys(payload).sort(), ['aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'scope', 'sub']);
    assert.equal(payload.iss, as.issuer);
    assert.equal(payload.aud, rs.resource);
    assert.equal(payload.sub, 'mcp-machine');
    assert.equal(payload.client_id, 'mcp-machine');
    assert.equal(payload.scope, 'catalog:read loans:write');
    assert.equal(payload.exp - payload.iat, 600);
    assert.ok(payload.iat >= before - 1 && payload.iat <= before + 5, `iat ${payload.iat} is now (${before})`);
  });

  test('client_secret_post clients and every configured client get their tokens', async () => {
    for (const id of ['mcp-machine', 'mcp-narrow', 'mcp-machine-post']) {
      const { payload } = await jose.jwtVerify(minted.tokens[`valid_${id}`], remoteJwks(), verifyOptions());
      assert.equal(payload.client_id, id);
      assert.equal(payload.sub, id);
      assert.equal(payload.scope, CLIENTS[id].scope);
    }
    assert.match(minted.tokens['valid_mcp-opaque'], /^[A-Za-z0-9_-]{43}$/, 'opaque, not a JWT');
    // x-token-typ: the same claims, the header typed JWT.
    const { payload, protectedHeader } = await jose.jwtVerify(minted.tokens['valid_mcp-jwt-typ'], remoteJwks(),
      { ...verifyOptions(), typ: 'JWT' });
    const { keys: [key] } = await fetch(metadata.jwks_uri).then((r) => r.json());
    assert.deepEqual(protectedHeader, { alg: 'RS256', typ: 'JWT', kid: key.kid });
    assert.equal(payload.client_id, 'mcp-jwt-typ');
    assert.equal(payload.scope, CLIENTS['mcp-jwt-typ'].scope);
  });

  test('refuses a scope beyond the client, an unknown resource, a bad secret, and a fragment', async () => {
    assert.deepEqual(
      await requestToken(metadata, CLIENTS['mcp-narrow'], { resource: rs.resource, scope: 'catalog:read loans:write' }),
      { status: 400, body: { error: 'invalid_scope', error_description: 'requested scope is not allowed', scope: 'loans:write' } },
    );
    assert.deepEqual(
      await requestToken(metadata, CLIENTS['mcp-machine'], { resource: `${rs.resource}/`, scope: 'catalog:read' }),
      { status: 400, body: { error: 'invalid_target', error_description: `unknown resource ${rs.resource}/` } },
    );
    assert.deepEqual(
      await requestToken(metadata, { ...CLIENTS['mcp-machine'], client_secret: 'wrong' }, { resource: rs.resource }),
      { status: 401, body: { error: 'invalid_client', error_description: 'client authentication failed' } },
    );
    assert.deepEqual(
      await requestToken(metadata, CLIENTS['mcp-machine'], { resource: `${rs.resource}#x` }),
      { status: 400, body: { error: 'invalid_target', error_description: 'resource indicator must not contain a fragment component' } },
    );
  });
});

describe('server options', () => {
  test('--alg ES256 --discovery openid; a restart on the same port is a key rotation (new kid)', async () => {
    const first = await startServer(['0', rs.resource, '--alg', 'ES256', '--discovery', 'openid']);
    const port = new URL(first.issuer).port;
    const status = async (path) => (await fetch(`${first.issuer}${path}`)).status;
    assert.equal(await status('/.well-known/openid-configuration'), 200);
    assert.equal(await status('/.well-known/oauth-authorization-server'), 404);
    const meta = await discover(first.issuer);
    const { body } = await requestToken(meta, CLIENTS['mcp-machine'], { resource: rs.resource, scope: 'loans:read' });
    const { protectedHeader, payload } = await jose.jwtVerify(body.access_token, jose.createRemoteJWKSet(new URL(meta.jwks_uri)), {
      ...verifyOptions(),
      issuer: first.issuer,
      algorithms: ['ES256'],
    });
    assert.equal(protectedHeader.alg, 'ES256');
    assert.equal(payload.scope, 'loans:read');
    assert.deepEqual(await stopServer(first.child), { code: 0, signal: null });

    const second = await startServer([port, rs.resource]);
    assert.equal(second.issuer, first.issuer);
    const { keys } = await fetch(meta.jwks_uri).then((r) => r.json());
    assert.equal(keys.length, 1);
    assert.equal(keys[0].alg, 'RS256');
    assert.notEqual(keys[0].kid, protectedHeader.kid);
    assert.deepEqual(await stopServer(second.child), { code: 0, signal: null });
  });

  test('--exit-with-stdin: it stops when its stdin closes (the harness went away)', async () => {
    const child = spawn(join(HERE, 'start.sh'), ['0', rs.resource, '--exit-with-stdin'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const issuer = await new Promise((r) => createInterface({ input: child.stdout }).once('line', r));
    assert.equal((await fetch(`${issuer}/jwks`)).status, 200);
    const exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
    child.stdin.end();
    assert.deepEqual(await exited, { code: 0, signal: null });
  });

  test('refuses to start with a resource that is not an absolute URI or has a fragment, or a client beyond the scopes', async () => {
    for (const [args, message] of [
      [['0', rs.resource, '--scopes', 'x y'], 'authz: client mcp-machine: scope must only contain Authorization Server supported scope values\n'],
      [['0', 'mcp'], 'authz: resource "mcp" is not an absolute URI\n'],
      [['0', 'http://127.0.0.1:9/mcp#frag'], 'authz: resource http://127.0.0.1:9/mcp#frag must not have a fragment (RFC 8707)\n'],
    ]) {
      const child = spawn(join(HERE, 'start.sh'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d) => { stderr += d; });
      assert.equal(await new Promise((r) => child.once('exit', r)), 2);
      // (oidc-provider's own warning about its in-memory store may come first)
      assert.equal(stderr.replace(/^oidc-provider WARNING: .*\n/m, ''), message);
    }
  });
});

describe('introspection (RFC 7662) for the opaque-token path', () => {
  const introspect = async (token, client = CLIENTS['mcp-resource-server']) => {
    const headers = { 'content-type': 'application/x-www-form-urlencoded' };
    if (client) headers.authorization = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const res = await fetch(metadata.introspection_endpoint, { method: 'POST', headers, body: new URLSearchParams({ token }) });
    return { status: res.status, body: await res.json() };
  };

  test('an issued opaque token is active with its client, scope and audience', async () => {
    const { status, body } = await introspect(minted.tokens['valid_mcp-opaque']);
    assert.equal(status, 200);
    const { exp, iat, ...rest } = body;
    assert.deepEqual(rest, {
      active: true,
      client_id: 'mcp-opaque',
      iss: as.issuer,
      aud: rs.resource,
      scope: ALL,
      token_type: 'Bearer',
    });
    assert.equal(exp - iat, 600);
  });

  test('revoked, unknown and garbage tokens are inactive; a token without resource has no aud', async () => {
    for (const name of ['opaque_revoked', 'garbage']) {
      assert.deepEqual(await introspect(minted.tokens[name]), { status: 200, body: { active: false } }, name);
    }
    const { body } = await introspect(minted.tokens.opaque_no_audience);
    assert.equal(body.active, true);
    assert.equal(body.aud, undefined);
    assert.equal(body.client_id, 'mcp-opaque');
  });

  test('JWT access tokens are not introspectable here; the caller must authenticate', async () => {
    assert.deepEqual(await introspect(minted.tokens['valid_mcp-machine']), {
      status: 400,
      body: { error: 'unsupported_token_type', error_description: 'Structured JWT Tokens cannot be introspected via the introspection_endpoint' },
    });
    assert.deepEqual(await introspect(minted.tokens['valid_mcp-opaque'], null), {
      status: 400,
      body: { error: 'invalid_request', error_description: 'no client authentication mechanism provided' },
    });
  });
});

describe('the token workshop', () => {
  // case -> [the error jose's verification gives, the one relaxation under which the token verifies]
  const cases = {
    garbage: [{ code: 'ERR_JWS_INVALID', message: 'Invalid Compact JWS' }, null],
    expired: [
      { code: 'ERR_JWT_EXPIRED', claim: 'exp', reason: 'check_failed', message: '"exp" claim timestamp check failed' },
      (t, o) => ({ ...o, currentDate: new Date((jose.decodeJwt(t).exp - 60) * 1000) }),
    ],
    not_yet_valid: [
      { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'nbf', reason: 'check_failed', message: '"nbf" claim timestamp check failed' },
      (t, o) => ({ ...o, currentDate: new Date((jose.decodeJwt(t).nbf + 60) * 1000) }),
    ],
    no_exp: [
      { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'exp', reason: 'missing', message: 'missing required "exp" claim' },
      (_t, o) => ({ ...o, requiredClaims: o.requiredClaims.filter((c) => c !== 'exp') }),
    ],
    wrong_issuer: [
      { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'iss', reason: 'check_failed', message: 'unexpected "iss" claim value' },
      (_t, o) => ({ ...o, issuer: 'https://issuer.invalid' }),
    ],
    issuer_trailing_slash: [
      { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'iss', reason: 'check_failed', message: 'unexpected "iss" claim value' },
      (_t, o) => ({ ...o, issuer: `${as.issuer}/` }),
    ],
    wrong_audience: [
      { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud', reason: 'check_failed', message: 'unexpected "aud" claim value' },
      (_t, o) => ({ ...o, audience: 'https://resource.invalid/mcp' }),
    ],
    audience_list_without_resource: [
      { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud', reason: 'check_failed', message: 'unexpected "aud" claim value' },
      (_t, o) => ({ ...o, audience: 'https://resource.invalid/mcp' }),
    ],
    audience_trailing_slash: [
      { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud', reason: 'check_failed', message: 'unexpected "aud" claim value' },
      (_t, o) => ({ ...o, audience: `${rs.resource}/` }),
    ],
    no_audience: [
      { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud', reason: 'missing', message: 'missing required "aud" claim' },
      (_t, { audience: _a, ...o }) => o,
    ],
    wrong_typ: [
      { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'typ', reason: 'check_failed', message: 'unexpected "typ" JWT header value' },
      (_t, { typ: _typ, ...o }) => o,
    ],
    unknown_key_same_kid: [
      { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED', message: 'signature verification failed' },
      'stranger',
    ],
    unknown_kid: [
      { code: 'ERR_JWKS_NO_MATCHING_KEY', message: 'no applicable key found in the JSON Web Key Set' },
      'stranger',
    ],
    alg_none: [{ code: 'ERR_JOSE_ALG_NOT_ALLOWED', message: '"alg" (Algorithm) Header Parameter value not allowed' }, 'unsecured'],
    hs256_with_public_key: [
      { code: 'ERR_JOSE_ALG_NOT_ALLOWED', message: '"alg" (Algorithm) Header Parameter value not allowed' },
      'hmac-pem',
    ],
  };

  const rejection = async (token, key, options) => {
    try {
      await jose.jwtVerify(token, key, options);
    } catch (err) {
      const seen = { code: err.code, message: err.message };
      if (err.claim !== undefined) Object.assign(seen, { claim: err.claim, reason: err.reason });
      return seen;
    }
    return null;
  };

  test('prints every case, each token distinct', () => {
    const names = Object.keys(minted.tokens);
    const expected = [
      ...Object.keys(CLIENTS).filter((id) => CLIENTS[id].grant_types.includes('client_credentials')).map((id) => `valid_${id}`),
      'valid_minted', 'valid_multi_audience', ...Object.keys(cases), 'opaque_revoked', 'opaque_no_audience',
    ];
    assert.deepEqual(names.sort(), expected.sort());
    assert.equal(new Set(Object.values(minted.tokens)).size, names.length);
  });

  test('valid_minted and valid_multi_audience verify like issued tokens', async () => {
    for (const name of ['valid_minted', 'valid_multi_audience']) {
      const { payload, protectedHeader } = await jose.jwtVerify(minted.tokens[name], remoteJwks(), verifyOptions());
      assert.deepEqual(protectedHeader, jose.decodeProtectedHeader(minted.tokens['valid_mcp-machine']));
      assert.equal(payload.client_id, 'mcp-machine');
      assert.equal(payload.scope, ALL);
    }
  });

  for (const [name, [expected, relax]] of Object.entries(cases)) {
    test(`${name}: rejected for its reason only`, async () => {
      const token = minted.tokens[name];
      assert.deepEqual(await rejection(token, remoteJwks(), verifyOptions()), expected);
      if (relax === null) return;
      if (typeof relax === 'function') {
        await jose.jwtVerify(token, remoteJwks(), relax(token, verifyOptions()));
      } else if (relax === 'stranger') {
        await jose.jwtVerify(token, await jose.importJWK(minted.details.strangerPublicJwk, 'RS256'), verifyOptions());
      } else if (relax === 'unsecured') {
        const { payload, header } = jose.UnsecuredJWT.decode(token, { ...verifyOptions(), typ: undefined });
        assert.deepEqual(header.alg, 'none');
        assert.equal(payload.iss, as.issuer);
        // and without the allow-list jose still refuses it against the key set
        assert.equal((await rejection(token, remoteJwks(), { ...verifyOptions(), algorithms: undefined })).code, 'ERR_JOSE_NOT_SUPPORTED');
      } else if (relax === 'hmac-pem') {
        // the classic confusion: a verifier keyed with the PEM text as an HMAC secret accepts it
        const secret = new TextEncoder().encode(minted.details.publicPem);
        await jose.jwtVerify(token, secret, { ...verifyOptions(), algorithms: ['HS256'] });
        // and without the allow-list the key set still has no key for HS256
        assert.equal((await rejection(token, remoteJwks(), { ...verifyOptions(), algorithms: undefined })).code, 'ERR_JOSE_NOT_SUPPORTED');
      }
    });
  }

  test(`expired and not_yet_valid are ${SKEW} s out, beyond any small leeway`, () => {
    const { mintedAt } = minted.details;
    assert.ok(Math.abs(mintedAt - startedAt) <= 5, `minted at ${mintedAt}, the test started at ${startedAt}`);
    assert.equal(jose.decodeJwt(minted.tokens.expired).exp, mintedAt - SKEW);
    assert.equal(jose.decodeJwt(minted.tokens.not_yet_valid).nbf, mintedAt + SKEW);
  });
});

describe('the real clients against this server', () => {
  test('TypeScript v2 client: auth() with ClientCredentialsProvider, from a 401 and from a 403 step-up', async () => {
    const provider = new ClientCredentialsProvider({
      clientId: 'mcp-machine',
      clientSecret: CLIENTS['mcp-machine'].client_secret,
      expectedIssuer: as.issuer,
    });
    // what the transport does on a 401 or a 403 insufficient_scope: auth() with the challenge's
    // resource_metadata and scope, then the request again with the new token
    const call = async (need) => {
      const headers = provider.tokens() ? { authorization: `Bearer ${provider.tokens().access_token}` } : {};
      return fetch(`${rs.resource}?need=${need}`, { headers });
    };
    const authorize = async (res) => {
      const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res);
      assert.equal(String(resourceMetadataUrl), rs.metadataUrl);
      assert.equal(await auth(provider, { serverUrl: new URL(rs.resource), resourceMetadataUrl, scope }), 'AUTHORIZED');
      return scope;
    };

    let res = await call('loans:read');
    assert.equal(res.status, 401);
    assert.equal(await authorize(res), 'catalog:read');
    assert.equal(provider.tokens().scope, 'catalog:read');
    res = await call('loans:read');
    assert.equal(res.status, 403);
    assert.equal(await authorize(res), 'catalog:read loans:read');
    assert.equal(provider.tokens().scope, 'catalog:read loans:read');
    res = await call('loans:read');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { sub: 'mcp-machine', client_id: 'mcp-machine', scope: 'catalog:read loans:read' });
    const { payload } = await jose.jwtVerify(provider.tokens().access_token, remoteJwks(), verifyOptions());
    assert.equal(payload.aud, rs.resource);
  });

  test('Python SDK: ClientCredentialsOAuthProvider goes 401 -> token, then 403 -> step-up -> 200; a narrow client cannot step up', async () => {
    const script = `
import asyncio, json, sys
import httpx2
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

class Memory:
    tokens = None
    info = None
    async def get_tokens(self): return self.tokens
    async def set_tokens(self, t): self.tokens = t
    async def get_client_info(self): return self.info
    async def set_client_info(self, i): self.info = i

async def run(resource, issuer, client_id, secret, method):
    provider = ClientCredentialsOAuthProvider(server_url=resource, storage=Memory(), client_id=client_id,
        client_secret=secret, token_endpoint_auth_method=method, issuer=issuer)
    out = []
    async with httpx2.AsyncClient(auth=provider) as http:
        for _ in range(2):
            try:
                r = await http.get(resource, params={"need": "loans:write"})
                out.append([r.status_code, r.headers.get("www-authenticate"), r.json() if r.status_code == 200 else None,
                            provider.context.current_tokens.scope])
            except Exception as e:
                out.append([type(e).__name__, str(e)])
    return out

resource, issuer = sys.argv[1:3]
print(json.dumps({cid: asyncio.run(run(resource, issuer, cid, secret, method)) for cid, secret, method in
    [("mcp-machine", "${CLIENTS['mcp-machine'].client_secret}", "client_secret_basic"),
     ("mcp-machine-post", "${CLIENTS['mcp-machine-post'].client_secret}", "client_secret_post"),
     ("mcp-narrow", "${CLIENTS['mcp-narrow'].client_secret}", "client_secret_basic")]}))
`;
    const child = spawn(PYTHON, ['-c', script, rs.resource, as.issuer], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const code = await new Promise((r) => child.once('exit', r));
    assert.equal(code, 0, stderr);
    const result = JSON.parse(stdout);
    const forbidden = `Bearer error="insufficient_scope", resource_metadata="${rs.metadataUrl}", scope="catalog:read loans:write"`;
    for (const id of ['mcp-machine', 'mcp-machine-post']) {
      assert.deepEqual(result[id], [
        // the 401 named catalog:read (server-wide); the token has only that, so the call is 403
        [403, forbidden, null, 'catalog:read'],
        // the next call steps up to the union and succeeds
        [200, null, { sub: id, client_id: id, scope: 'catalog:read loans:write' }, 'catalog:read loans:write'],
      ], id);
    }
    assert.deepEqual(result['mcp-narrow'][0], [403, forbidden, null, 'catalog:read']);
    assert.equal(result['mcp-narrow'][1][0], 'OAuthTokenError');
    assert.match(result['mcp-narrow'][1][1], /invalid_scope/);
  });
});
