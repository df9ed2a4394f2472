// The token workshop: the access tokens a resource server's tests present, good and bad.
//
//   node workshop.mjs --issuer http://127.0.0.1:PORT --resource URI --key-file FILE [--config authz.json]
//
// prints one JSON object `{case: token}` on stdout. `--key-file` is the private JWK set the
// authorization server wrote with `--key-out` (server.mjs): the minted cases are signed with the
// server's own key, so each is wrong in exactly the one way its name says.
//
// Accepted (names start with `valid_`):
//   valid_<client_id>      issued by the server (client credentials, resource = --resource, the
//                          client's whole `scope`) for every client with the client_credentials
//                          grant; a JWT, or opaque for an `x-token-format: "opaque"` client
//   valid_minted           minted like the server's own (typ at+jwt, the server's kid, iss, aud,
//                          sub, client_id, scope, iat, exp, jti of mcp-machine's issued token)
//   valid_multi_audience   valid_minted with aud [resource, another URI] (aud contains resource)
// Rejected (minted from valid_minted, with one thing changed; `skew` = 600 s, far outside any
// leeway):
//   garbage                not a JWS at all
//   expired                exp = now - skew (iat before it)
//   not_yet_valid          nbf = now + skew
//   no_exp                 no exp claim
//   wrong_issuer           iss = https://issuer.invalid
//   issuer_trailing_slash  iss = the issuer with a "/" added
//   wrong_audience         aud = https://resource.invalid/mcp
//   audience_list_without_resource  aud = two other URIs
//   audience_trailing_slash aud = the resource with a trailing "/" added (or removed)
//   no_audience            no aud claim
//   wrong_typ              header typ JWT (not at+jwt: RFC 9068 §4, e.g. an ID token)
//   unknown_key_same_kid   signed by a fresh key of the same algorithm, header kid = the server's
//   unknown_kid            signed by a fresh key, header kid = that key's (not in the JWKS)
//   alg_none               header alg none, empty signature (RFC 8725 §2.1)
//   hs256_with_public_key  HS256 keyed with the server's public key as PEM (SPKI) text, header
//                          kid = the server's (the algorithm confusion, RFC 8725 §2.1)
// Rejected, by introspection (opaque, issued by the server to the first opaque client):
//   opaque_revoked         issued, then revoked (RFC 7009): introspection says active false
//   opaque_no_audience     issued without a resource: active, but no aud
//
// As a module, `mintAll(options)` returns `{tokens, details}`; details carry what the checks of
// selftest.test.mjs need (the fresh keys' public JWKs, the PEM used as the HMAC secret).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import * as jose from 'jose';

const HERE = dirname(fileURLToPath(import.meta.url));
export const SKEW = 600;

const ALG_PARAMS = {
  RS256: { modulusLength: 2048 },
  PS256: { modulusLength: 2048 },
  ES256: {},
  EdDSA: { crv: 'Ed25519' },
};

/** The server's metadata document: OpenID discovery, else RFC 8414's path. */
export async function discover(issuer) {
  for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    const res = await fetch(`${issuer}${path}`);
    if (res.ok) return res.json();
    await res.body?.cancel();
  }
  throw new Error(`no metadata document at ${issuer}`);
}

/** A client-credentials token request; returns `{status, body}`. */
export async function requestToken(metadata, client, { resource, scope } = {}) {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (resource !== undefined) form.set('resource', resource);
  if (scope !== undefined) form.set('scope', scope);
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  if (client.token_endpoint_auth_method === 'client_secret_post') {
    form.set('client_id', client.client_id);
    form.set('client_secret', client.client_secret);
  } else {
    const basic = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`;
    headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  }
  const res = await fetch(metadata.token_endpoint, { method: 'POST', headers, body: form });
  return { status: res.status, body: await res.json() };
}

async function issued(metadata, client, options) {
  const { status, body } = await requestToken(metadata, client, options);
  if (status !== 200) throw new Error(`token request for ${client.client_id} failed: ${status} ${JSON.stringify(body)}`);
  return body.access_token;
}

function b64json(value) {
  return jose.base64url.encode(JSON.stringify(value));
}

export async function mintAll({ issuer, resource, keyFile, config = join(HERE, 'authz.json') }) {
  const metadata = await discover(issuer);
  const { clients } = JSON.parse(readFileSync(config, 'utf8'));
  const [serverJwk] = JSON.parse(readFileSync(keyFile, 'utf8')).keys;
  const { alg, kid } = serverJwk;
  const serverKey = await jose.importJWK(serverJwk, alg);
  const tokens = {};

  const machines = clients.filter((c) => (c.grant_types ?? []).includes('client_credentials'));
  for (const client of machines) {
    tokens[`valid_${client.client_id}`] = await issued(metadata, client, { resource, scope: client.scope });
  }
  const template = machines.find((c) => (c['x-token-format'] ?? 'jwt') === 'jwt');
  const issuedClaims = jose.decodeJwt(tokens[`valid_${template.client_id}`]);
  const header = { alg, typ: 'at+jwt', kid };

  const now = Math.floor(Date.now() / 1000);
  const base = () => ({
    ...issuedClaims,
    jti: jose.base64url.encode(crypto.getRandomValues(new Uint8Array(16))),
    iat: now,
    exp: now + 300,
  });
  const sign = (claims, key = serverKey, protectedHeader = header) =>
    new jose.SignJWT(claims).setProtectedHeader(protectedHeader).sign(key);
  const without = (claims, name) => {
    const { [name]: _dropped, ...rest } = claims;
    return rest;
  };

  tokens.valid_minted = await sign(base());
  tokens.valid_multi_audience = await sign({ ...base(), aud: [resource, 'https://resource.invalid/mcp'] });

  tokens.garbage = jose.base64url.encode(crypto.getRandomValues(new Uint8Array(48)));
  tokens.expired = await sign({ ...base(), iat: now - 2 * SKEW, exp: now - SKEW });
  tokens.not_yet_valid = await sign({ ...base(), nbf: now + SKEW, exp: now + 2 * SKEW });
  tokens.no_exp = await sign(without(base(), 'exp'));
  tokens.wrong_issuer = await sign({ ...base(), iss: 'https://issuer.invalid' });
  tokens.issuer_trailing_slash = await sign({ ...base(), iss: `${issuer}/` });
  tokens.wrong_audience = await sign({ ...base(), aud: 'https://resource.invalid/mcp' });
  tokens.audience_list_without_resource = await sign({
    ...base(),
    aud: ['https://resource.invalid/mcp', `${issuer}/other`],
  });
  const slashVariant = resource.endsWith('/') ? resource.slice(0, -1) : `${resource}/`;
  tokens.audience_trailing_slash = await sign({ ...base(), aud: slashVariant });
  tokens.no_audience = await sign(without(base(), 'aud'));
  tokens.wrong_typ = await sign(base(), serverKey, { ...header, typ: 'JWT' });

  const stranger = await jose.generateKeyPair(alg, { ...ALG_PARAMS[alg], extractable: true });
  const strangerJwk = await jose.exportJWK(stranger.publicKey);
  const strangerKid = await jose.calculateJwkThumbprint(strangerJwk);
  tokens.unknown_key_same_kid = await sign(base(), stranger.privateKey);
  tokens.unknown_kid = await sign(base(), stranger.privateKey, { ...header, kid: strangerKid });

  tokens.alg_none = `${b64json({ alg: 'none', typ: 'at+jwt', kid })}.${b64json(base())}.`;

  const { kty, n, e, crv, x, y } = serverJwk;
  const publicJwk = Object.fromEntries(Object.entries({ kty, n, e, crv, x, y }).filter(([, v]) => v !== undefined));
  const publicPem = await jose.exportSPKI(await jose.importJWK(publicJwk, alg));
  tokens.hs256_with_public_key = await sign(base(), new TextEncoder().encode(publicPem), {
    alg: 'HS256',
    typ: 'at+jwt',
    kid,
  });

  const opaque = machines.find((c) => c['x-token-format'] === 'opaque');
  if (opaque) {
    const revoked = await issued(metadata, opaque, { resource, scope: opaque.scope });
    const basic = Buffer.from(`${opaque.client_id}:${opaque.client_secret}`).toString('base64');
    const res = await fetch(metadata.revocation_endpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: revoked, token_type_hint: 'access_token' }),
    });
    if (res.status !== 200) throw new Error(`revocation answered ${res.status}`);
    tokens.opaque_revoked = revoked;
    tokens.opaque_no_audience = await issued(metadata, opaque, { scope: opaque.scope });
  }

  return {
    tokens,
    details: { mintedAt: now, metadata, publicJwk, publicPem, strangerPublicJwk: strangerJwk, strangerKid, slashVariant },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      issuer: { type: 'string' },
      resource: { type: 'string' },
      'key-file': { type: 'string' },
      config: { type: 'string', default: join(HERE, 'authz.json') },
    },
    strict: true,
  });
  if (!values.issuer || !values.resource || !values['key-file']) {
    process.stderr.write('usage: workshop.mjs --issuer URL --resource URI --key-file FILE [--config FILE]\n');
    process.exit(2);
  }
  const { tokens } = await mintAll({
    issuer: values.issuer,
    resource: values.resource,
    keyFile: values['key-file'],
    config: values.config,
  });
  process.stdout.write(`${JSON.stringify(tokens, null, 2)}\n`);
}
