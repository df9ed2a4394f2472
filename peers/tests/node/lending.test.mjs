// The lending example (generated-examples/lending: a spec with `auth`, per-operation scopes and
// a "principal" resolver) as an OAuth 2.1 resource server of the suite's real authorization
// server (peers/authz: oidc-provider, RS256 at+jwt access tokens for the resource
// http://127.0.0.1:P/mcp), over Streamable HTTP:
//
// * the TypeScript v2 client (@modelcontextprotocol/client 2.4.0) with its
//   ClientCredentialsProvider, in both eras: the first 401, protected-resource and
//   authorization-server metadata discovery, a client-credentials token, calls; the 403
//   insufficient_scope step-up on borrow_book (mcp-machine gets loans:write; mcp-narrow may not
//   and the call fails, after the exact challenge);
// * every answer of CONTRACT19 "HTTP answers", exactly (status, WWW-Authenticate, JSON body,
//   Cache-Control): the protected-resource metadata at both paths, no token, each rejected token
//   the token workshop mints (peers/authz/workshop.mjs), opaque tokens through RFC 7662
//   introspection, 403 for tools, resources and templates, a requestState replayed under another
//   principal, a legacy session used with another client's token, and 503 (never 200) with the
//   authorization server stopped (a kid that needs a JWKS refetch; a server that never had keys).
//
// One authorization server for the file (started before the first test); lending servers are
// started per test on the port the authorization server's resource names.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { discover, mintAll, requestToken } from '../../authz/workshop.mjs';
import {
  answers, assertRefused, CLIENTS, freePort, INITIALIZE, INITIALIZED, legacyPost, modernPost, rpc, startAuthz,
  startLending,
} from './authz.mjs';
import { LEGACY, MODERN, ROOT, Script } from './harness.mjs';

const SPEC = JSON.parse(readFileSync(path.join(ROOT, 'generated-examples/lending/spec.json'), 'utf8'));
const PROTOCOL = { [LEGACY]: '2025-11-25', [MODERN]: '2026-07-28' };
const ALL = ['catalog:read', 'loans:read', 'loans:write'];
const DUNE = "lib-1: 'Dune' by Frank Herbert (2 of 2 on the shelf)";
const borrowQuestion = (member) => ({
  form: {
    message: `Borrow 'Dune' by Frank Herbert as ${member}? It is due back in 21 days.`,
    schema: SPEC.$defs.BorrowConfirmation,
  },
});
const borrowed = (member) =>
  `${member} borrowed 'Dune' (lib-1); due back in 21 days. 1 of 2 copies on the shelf.`;

let port;
let url;
let as;
let metadata;
let tokens;
let A;

before(async () => {
  port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  as = await startAuthz(url);
  metadata = await discover(as.issuer);
  ({ tokens } = await mintAll({ issuer: as.issuer, resource: url, keyFile: as.keyFile }));
  A = answers(port);
});

after(async () => {
  await as?.stop();
});

/** Runs `body(server)` with a lending server for the suite's authorization server. */
async function withLending(body, options) {
  const server = await startLending(port, as.issuer, options);
  try {
    await body(server);
  } finally {
    await server.stop();
  }
}

/** A fresh token of `client` for this resource, with `scope` (default: all the client may have). */
async function freshToken(client, scope = CLIENTS[client].scope) {
  const { status, body } = await requestToken(metadata, CLIENTS[client], { resource: url, scope });
  assert.equal(status, 200, JSON.stringify(body));
  return body.access_token;
}

/** The text of a successful tools/call result. */
function resultText(message) {
  assert.equal(message.result?.isError, false, JSON.stringify(message));
  return message.result.content.map((c) => c.text).join('');
}

describe('the lending server as a resource server of oidc-provider', () => {
  test('the protected-resource metadata document, at both well-known paths', async () => {
    await withLending(async () => {
      for (const suffix of ['', '/mcp']) {
        const res = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource${suffix}`);
        assert.equal(res.status, 200, suffix);
        assert.equal(res.headers.get('content-type'), 'application/json');
        assert.equal(res.headers.get('cache-control'), 'public, max-age=3600');
        assert.deepEqual(await res.json(), {
          resource: url,
          authorization_servers: [as.issuer],
          scopes_supported: ALL,
          bearer_methods_supported: ['header'],
        });
      }
      const other = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/other`);
      assert.equal(other.status, 404);
      await other.body?.cancel();
    });
  });

  test('no token: 401 naming the server-wide scope, and the operation\'s own when the front knows it', async () => {
    await withLending(async () => {
      await assertRefused(await legacyPost(url, INITIALIZE), A.noToken('catalog:read'), 'initialize');
      await assertRefused(await fetch(url, { headers: { accept: 'text/event-stream' } }), A.noToken('catalog:read'), 'GET');
      await assertRefused(await fetch(url, { method: 'DELETE' }), A.noToken('catalog:read'), 'DELETE');
      // an access_token query parameter is never read (RFC 6750 §2.3 is not supported)
      await assertRefused(await legacyPost(`${url}?access_token=${tokens['valid_mcp-machine']}`, INITIALIZE),
        A.noToken('catalog:read'), 'query token');
      await assertRefused(await modernPost(url, 'tools/call', { name: 'borrow_book', arguments: { book_id: 'lib-1' } }),
        A.noToken('catalog:read loans:write'), 'tools/call borrow_book');
      await assertRefused(await modernPost(url, 'tools/call', { name: 'search_catalog', arguments: { query: '' } }),
        A.noToken('catalog:read'), 'tools/call search_catalog');
      await assertRefused(await modernPost(url, 'resources/read', { uri: 'library://members/mcp-machine/loans' }),
        A.noToken('catalog:read loans:read'), 'resources/read template');
      await assertRefused(await modernPost(url, 'prompts/get', { name: 'loan_summary', arguments: { tone: 'formal' } }),
        A.noToken('catalog:read loans:read'), 'prompts/get');
    });
  });

  const REJECTED = [
    'garbage', 'expired', 'not_yet_valid', 'no_exp', 'wrong_issuer', 'issuer_trailing_slash', 'wrong_audience',
    'audience_list_without_resource', 'audience_trailing_slash', 'no_audience', 'wrong_typ', 'unknown_key_same_kid',
    'unknown_kid', 'alg_none', 'hs256_with_public_key',
  ];

  test('each token the workshop spoils is 401 invalid_token; its valid twins pass', async () => {
    await withLending(async () => {
      for (const name of REJECTED) {
        await assertRefused(await legacyPost(url, INITIALIZE, { token: tokens[name] }), A.invalid('catalog:read'), name);
      }
      // a token failing on an operation with scopes names them too
      await assertRefused(
        await modernPost(url, 'tools/call', { name: 'borrow_book', arguments: { book_id: 'lib-1' } }, { token: tokens.expired }),
        A.invalid('catalog:read loans:write'), 'expired, borrow_book');
      // opaque tokens without an introspection endpoint configured are invalid
      await assertRefused(await legacyPost(url, INITIALIZE, { token: tokens['valid_mcp-opaque'] }),
        A.invalid('catalog:read'), 'opaque without introspection');
      for (const name of ['valid_mcp-machine', 'valid_minted', 'valid_multi_audience']) {
        const res = await legacyPost(url, INITIALIZE, { token: tokens[name] });
        assert.equal(res.status, 200, name);
        assert.equal((await rpc(res)).result.serverInfo.name, 'Lending', name);
      }
    });
  });

  test('oidc-provider typing its JWT access tokens `JWT` (as Auth0, Keycloak and Entra ID do): 401 invalid_token by default, served with --auth-allow-jwt-typ', async () => {
    const token = tokens['valid_mcp-jwt-typ'];
    assert.equal(JSON.parse(Buffer.from(token.split('.')[0], 'base64url')).typ, 'JWT');
    await withLending(async () => {
      await assertRefused(await legacyPost(url, INITIALIZE, { token }), A.invalid('catalog:read'), 'typ JWT');
    });
    await withLending(async () => {
      for (const name of ['valid_mcp-jwt-typ', 'valid_mcp-machine']) {
        const res = await legacyPost(url, INITIALIZE, { token: tokens[name] });
        assert.equal(res.status, 200, name);
        assert.equal((await rpc(res)).result.serverInfo.name, 'Lending', name);
      }
      // The flag widens the type only: the workshop's other spoiled tokens stay refused.
      for (const name of ['expired', 'wrong_audience', 'alg_none']) {
        await assertRefused(await legacyPost(url, INITIALIZE, { token: tokens[name] }), A.invalid('catalog:read'), name);
      }
    }, { extra: ['--auth-allow-jwt-typ'] });
  });

  test('Authorization header: another scheme is no token (401, RFC 6750 §3.1); a bare Bearer or two headers are 400 invalid_request', async () => {
    await withLending(async () => {
      await assertRefused(await legacyPost(url, INITIALIZE, { headers: { authorization: 'Basic bWNwOm1jcA==' } }),
        A.noToken('catalog:read'), 'Basic');
      await assertRefused(await legacyPost(url, INITIALIZE, { headers: { authorization: 'Bearer' } }),
        A.invalidRequest("The Authorization header must be 'Bearer <token>'", 'catalog:read'), 'no token after Bearer');
      // two Authorization headers (fetch would join them into one: node:http sends both lines)
      const twice = await new Promise((resolve, reject) => {
        const body = JSON.stringify(INITIALIZE);
        const req = http.request(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'content-length': Buffer.byteLength(body),
            authorization: [`Bearer ${tokens['valid_mcp-machine']}`, `Bearer ${tokens.valid_minted}`],
          },
        }, (res) => {
          let text = '';
          res.on('data', (d) => { text += d; });
          res.on('end', () => resolve({
            status: res.statusCode,
            challenge: res.headers['www-authenticate'],
            body: JSON.parse(text),
            cache: res.headers['cache-control'],
          }));
        });
        req.once('error', reject);
        req.end(body);
      });
      const expected = A.invalidRequest('Exactly one Authorization header is allowed', 'catalog:read');
      assert.deepEqual(twice, { ...expected, cache: 'no-store' });
    });
  });

  test('opaque tokens through RFC 7662 introspection: active with the audience passes; revoked or without audience is 401', async () => {
    const introspection = {
      extra: ['--auth-introspection-url', metadata.introspection_endpoint],
      env: { MCP_AUTH_CLIENT_ID: 'mcp-resource-server', MCP_AUTH_CLIENT_SECRET: CLIENTS['mcp-resource-server'].client_secret },
    };
    await withLending(async () => {
      const token = tokens['valid_mcp-opaque'];
      const res = await modernPost(url, 'tools/call', { name: 'my_loans', arguments: {} }, { token });
      assert.equal(res.status, 200);
      assert.equal(resultText(await rpc(res)), 'mcp-opaque has no loans.');
      for (const name of ['opaque_revoked', 'opaque_no_audience', 'garbage']) {
        await assertRefused(await legacyPost(url, INITIALIZE, { token: tokens[name] }), A.invalid('catalog:read'), name);
      }
      // JWTs are still verified locally
      const jwt = await modernPost(url, 'tools/call', { name: 'search_catalog', arguments: { query: 'dune' } },
        { token: tokens['valid_mcp-machine'] });
      assert.equal(resultText(await rpc(jwt)), DUNE);
    }, introspection);
  });

  test('403 insufficient_scope before any handler: tools, fixed resources, templates', async () => {
    await withLending(async () => {
      const narrow = tokens['valid_mcp-narrow'];
      await assertRefused(
        await modernPost(url, 'tools/call', { name: 'borrow_book', arguments: { book_id: 'lib-1' } }, { token: narrow }),
        A.insufficient('catalog:read loans:write'), 'borrow_book');
      // with mcp-machine's broader token the same call passes the front: the member is asked
      const broader = await rpc(await modernPost(url, 'tools/call', { name: 'borrow_book', arguments: { book_id: 'lib-1' } },
        { token: tokens['valid_mcp-machine'] }));
      assert.equal(broader.result.resultType, 'input_required', JSON.stringify(broader));
      assert.equal(broader.result.inputRequests.confirm_borrow.params.message, borrowQuestion('mcp-machine').form.message);
      await assertRefused(await modernPost(url, 'resources/read', { uri: 'library://ledger' }, { token: narrow }),
        A.insufficient('catalog:read loans:write'), 'ledger');
      // a token with catalog:read only lacks the template's and the prompt's loans:read
      const catalogOnly = await freshToken('mcp-narrow', 'catalog:read');
      await assertRefused(
        await modernPost(url, 'resources/read', { uri: 'library://members/mcp-narrow/loans' }, { token: catalogOnly }),
        A.insufficient('catalog:read loans:read'), 'member_loans');
      await assertRefused(
        await modernPost(url, 'prompts/get', { name: 'loan_summary', arguments: { tone: 'formal' } }, { token: catalogOnly }),
        A.insufficient('catalog:read loans:read'), 'loan_summary');
      // a token without the server-wide scope: even search needs catalog:read
      const loansOnly = await freshToken('mcp-narrow', 'loans:read');
      await assertRefused(
        await modernPost(url, 'tools/call', { name: 'search_catalog', arguments: { query: '' } }, { token: loansOnly }),
        A.insufficient('catalog:read'), 'search_catalog without catalog:read');
      // what the narrow token does grant works, and the template shows only the caller's own loans
      const own = await modernPost(url, 'resources/read', { uri: 'library://members/mcp-narrow/loans' }, { token: narrow });
      assert.deepEqual((await rpc(own)).result.contents,
        [{ uri: 'library://members/mcp-narrow/loans', mimeType: 'application/json', text: '[]' }]);
      const others = await rpc(await modernPost(url, 'resources/read', { uri: 'library://members/mcp-machine/loans' },
        { token: narrow }));
      assert.deepEqual(others.error, {
        code: -32602,
        message: 'mcp-narrow may read only their own loans (librarians: loans:write).',
        data: { uri: 'library://members/mcp-machine/loans' },
      });
      const ledger = await rpc(await modernPost(url, 'resources/read', { uri: 'library://ledger' },
        { token: tokens['valid_mcp-machine'] }));
      assert.deepEqual(ledger.result.contents, [{ uri: 'library://ledger', mimeType: 'application/json', text: '{}' }]);
    });
  });

  test('requestState is bound to the principal: replayed with another client\'s token it is the frozen -32602; the same client\'s fresh token completes it', async () => {
    await withLending(async () => {
      const params = { name: 'borrow_book', arguments: { book_id: 'lib-1' } };
      const first = await rpc(await modernPost(url, 'tools/call', params, { token: tokens['valid_mcp-machine'] }));
      const { requestState, ...rest } = first.result;
      assert.match(requestState, /^v1\./);
      assert.deepEqual(rest.inputRequests, {
        confirm_borrow: {
          method: 'elicitation/create',
          params: { mode: 'form', message: borrowQuestion('mcp-machine').form.message, requestedSchema: SPEC.$defs.BorrowConfirmation },
        },
      });
      assert.equal(rest.resultType, 'input_required');
      const retry = { ...params, requestState, inputResponses: { confirm_borrow: { action: 'accept', content: { confirm: true } } } };
      // mcp-machine-post has every scope mcp-machine has: only the principal differs
      const replayed = await modernPost(url, 'tools/call', retry, { token: tokens['valid_mcp-machine-post'] });
      // a 2026-07-28 JSON-RPC error answers with HTTP 400
      assert.equal(replayed.status, 400);
      const frozen = await rpc(replayed);
      assert.deepEqual(frozen.error,
        { code: -32602, message: 'Invalid or expired requestState', data: { reason: 'invalid_request_state' } });
      // nothing was borrowed
      const none = await modernPost(url, 'tools/call', { name: 'my_loans', arguments: {} },
        { token: tokens['valid_mcp-machine-post'] });
      assert.equal(resultText(await rpc(none)), 'mcp-machine-post has no loans.');
      // the same principal with another token (minted for mcp-machine) completes the call
      const done = await modernPost(url, 'tools/call', retry, { token: tokens.valid_minted });
      assert.equal(resultText(await rpc(done)), borrowed('mcp-machine'));
    });
  });

  test('a legacy session belongs to the principal that opened it: another client\'s token gets 404, a fresh token of the same client keeps it', async () => {
    await withLending(async () => {
      const opened = await legacyPost(url, INITIALIZE, { token: tokens['valid_mcp-machine'] });
      assert.equal(opened.status, 200);
      await rpc(opened);
      const session = opened.headers.get('mcp-session-id');
      assert.ok(session, 'a session id');
      const notFound = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Session not found' } };
      for (const other of ['valid_mcp-narrow', 'valid_mcp-machine-post']) {
        const res = await legacyPost(url, INITIALIZED, { token: tokens[other], session });
        assert.equal(res.status, 404, other);
        assert.deepEqual(await res.json(), notFound, other);
        const get = await fetch(url, {
          headers: { accept: 'text/event-stream', 'mcp-session-id': session, authorization: `Bearer ${tokens[other]}` },
        });
        assert.equal(get.status, 404, `${other} GET`);
        assert.deepEqual(await get.json(), notFound, `${other} GET`);
        const del = await fetch(url, {
          method: 'DELETE', headers: { 'mcp-session-id': session, authorization: `Bearer ${tokens[other]}` },
        });
        assert.equal(del.status, 404, `${other} DELETE`);
        assert.deepEqual(await del.json(), notFound, `${other} DELETE`);
      }
      const fresh = await freshToken('mcp-machine');
      const ack = await legacyPost(url, INITIALIZED, { token: fresh, session });
      assert.equal(ack.status, 202);
      await ack.body?.cancel();
      const call = await legacyPost(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_catalog', arguments: { query: 'dune' } } },
        { token: fresh, session });
      assert.equal(call.status, 200);
      assert.equal(resultText(await rpc(call)), DUNE);
      const del = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session, authorization: `Bearer ${fresh}` } });
      assert.equal(del.status, 204);
      await del.body?.cancel();
    });
  });

  for (const era of [LEGACY, MODERN]) {
    test(`TypeScript ClientCredentialsProvider: 401 -> discovery -> token -> calls, and the loans:write step-up [http-${era}]`, { timeout: 60_000 }, async () => {
      await withLending(async () => {
        const seen = [];
        const recording = async (input, init) => {
          const res = await fetch(input, init);
          const target = new URL(input instanceof Request ? input.url : input);
          const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
          const www = res.headers.get('www-authenticate');
          seen.push([method, target.origin === as.issuer ? `AS${target.pathname}` : target.pathname, res.status, ...(www ? [www] : [])]);
          return res;
        };
        const connect = async (clientId) => {
          const provider = new ClientCredentialsProvider({
            clientId, clientSecret: CLIENTS[clientId].client_secret, expectedIssuer: as.issuer,
          });
          const versionNegotiation = era === LEGACY ? { mode: 'legacy' } : { mode: { pin: MODERN } };
          const capabilities = { elicitation: { form: {} } };
          const client = new Client({ name: 'mcpgen-peer-ts', version: '0.0.1' }, { capabilities, versionNegotiation });
          const script = new Script().accept({ confirm: true });
          script.install(client, capabilities);
          await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recording }));
          assert.equal(client.getNegotiatedProtocolVersion(), PROTOCOL[era]);
          return { client, script, provider };
        };
        const call = (client, name, args) => client.callTool({ name, arguments: args });
        const text = (r) => {
          assert.equal(r.isError, false, JSON.stringify(r));
          return r.content[0].text;
        };

        const machine = await connect('mcp-machine');
        try {
          assert.equal(text(await call(machine.client, 'search_catalog', { query: 'dune' })), DUNE);
          assert.equal(text(await call(machine.client, 'borrow_book', { book_id: 'lib-1' })), borrowed('mcp-machine'));
          assert.equal(text(await call(machine.client, 'my_loans', {})), 'mcp-machine has 1 loan: lib-1 Dune.');
          assert.deepEqual(machine.script.asked, [borrowQuestion('mcp-machine')]);
          assert.equal(machine.provider.tokens().scope, 'catalog:read loans:write loans:read');
        } finally {
          await machine.client.close();
        }
        // Every exchange, in order (the legacy client's GET stream left out: its timing is its own).
        // Each 401 or 403 is followed by discovery (protected-resource metadata, then the
        // authorization server's RFC 8414 metadata) and a token request, then the same request again.
        const discovery = [
          ['GET', '/.well-known/oauth-protected-resource/mcp', 200],
          ['GET', 'AS/.well-known/oauth-authorization-server', 200],
          ['POST', 'AS/token', 200],
        ];
        const ok = ['POST', '/mcp', 200];
        const accepted = ['POST', '/mcp', 202];
        const stepUp = (scope) => [['POST', '/mcp', 403, A.insufficient(scope).challenge], ...discovery];
        assert.deepEqual(seen.filter(([m, w]) => !(m === 'GET' && w === '/mcp')), [
          ['POST', '/mcp', 401, A.noToken('catalog:read').challenge], ...discovery,
          ...(era === LEGACY
            // initialize (the 401), initialized, search; borrow (its elicitation on the POST's
            // stream, the answer POSTed back: 202); my_loans
            ? [ok, accepted, ok, ...stepUp('catalog:read loans:write'), ok, accepted, ...stepUp('catalog:read loans:read'), ok]
            // server/discover (the 401), search; borrow (input_required, then the retry with
            // requestState); my_loans
            : [ok, ok, ...stepUp('catalog:read loans:write'), ok, ok, ...stepUp('catalog:read loans:read'), ok]),
        ]);

        // mcp-narrow: the same challenge, and the authorization server refuses the step-up
        seen.length = 0;
        const narrow = await connect('mcp-narrow');
        try {
          assert.equal(text(await call(narrow.client, 'search_catalog', { query: 'dune' })),
            "lib-1: 'Dune' by Frank Herbert (1 of 2 on the shelf)");
          // the authorization server's answer to the step-up (oidc-provider: invalid_scope)
          await assert.rejects(call(narrow.client, 'borrow_book', { book_id: 'lib-1' }),
            { name: 'OAuthError', code: 'invalid_scope', message: 'requested scope is not allowed' });
          assert.deepEqual(narrow.script.asked, []);
        } finally {
          await narrow.client.close();
        }
        assert.deepEqual(seen.filter(([, , status]) => status === 403),
          [['POST', '/mcp', 403, A.insufficient('catalog:read loans:write').challenge]]);
        // its first token (catalog:read), then the step-up the authorization server refuses
        assert.deepEqual(seen.filter(([, where]) => where === 'AS/token').map(([, , status]) => status), [200, 400]);
      });
    });
  }

  // Last: it stops the authorization server.
  test('the authorization server gone: a kid the server must refetch keys for is 503 with Retry-After, never the call; a server that never had the keys answers 503 to every token', async () => {
    const token = await freshToken('mcp-machine');
    const search = () => modernPost(url, 'tools/call', { name: 'search_catalog', arguments: { query: 'dune' } }, { token });
    await withLending(async () => {
      assert.equal(resultText(await rpc(await search())), DUNE);
      await as.stop();
      // unknown_kid: signed by a key whose kid is not in the JWKS the server holds; the refetch fails
      for (let i = 0; i < 2; i++) {
        const res = await legacyPost(url, INITIALIZE, { token: tokens.unknown_kid });
        await assertRefused(res, A.unavailable, `unknown kid, authorization server down (${i})`);
        assert.equal(res.headers.get('retry-after'), '5');
      }
      // the keys it already holds still verify
      assert.equal(resultText(await rpc(await search())), DUNE);
    });
    await withLending(async () => {
      for (const request of [() => legacyPost(url, INITIALIZE, { token }), search]) {
        const res = await request();
        await assertRefused(res, A.unavailable, 'no keys yet, authorization server down');
        assert.equal(res.headers.get('retry-after'), '5');
      }
    });
  });
});
