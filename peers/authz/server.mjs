// The suite's OAuth 2.0 authorization server: oidc-provider (panva, the certified OpenID Connect
// implementation) on loopback, issuing access tokens for the MCP servers under test.
//
//   node server.mjs --port 0 --resource http://127.0.0.1:8080/mcp [--resource URI ...]
//                   [--config authz.json] [--scopes "a b c"] [--alg RS256] [--ttl 600]
//                   [--key-out FILE] [--discovery both|openid|oauth] [--exit-with-stdin]
//
// * Features: client credentials (RFC 6749 §4.4), resource indicators (RFC 8707: a token
//   request names one `resource`; the token's `aud` is exactly that URI), JWT access tokens
//   (RFC 9068: header `typ: at+jwt`, claims iss, sub, aud, client_id, scope, iat, exp, jti),
//   introspection (RFC 7662) and revocation (RFC 7009).
// * Resources: each `--resource` (at least one) accepts the scopes of the config's `scopes` (or
//   `--scopes`); the config's `resources` object may add more, each with its own `scopes`. A
//   token request for any other resource is `invalid_target`.
// * Clients: the config's `clients`, oidc-provider client metadata. A client's `scope` is its
//   allow-list: asking for more is `invalid_scope`. `x-token-format: "opaque"` gives the client
//   opaque access tokens (for introspection) instead of JWTs; `x-token-typ: "JWT"` gives its JWT
//   access tokens the header `typ: JWT` instead of `at+jwt` (as Auth0, Keycloak and Entra ID
//   type theirs).
// * Keys: one signing key of `--alg` (RS256, PS256, ES256 or EdDSA) generated at start, never
//   written unless `--key-out FILE` asks (mode 0600, the private JWK set, for the token workshop).
// * `--discovery`: where the metadata document is served: `both` (oidc-provider's own answer:
//   `/.well-known/openid-configuration` and RFC 8414's `/.well-known/oauth-authorization-server`),
//   or only `openid` or only `oauth` (the other path answers 404), to try a resource server's
//   discovery fallbacks.
//
// * `--exit-with-stdin`: also stop when stdin reaches its end, so a test harness that spawns it
//   with a piped stdin never leaves it running, even when the harness is killed.
//
// Listens on 127.0.0.1 only. Once its discovery document answers it prints the issuer
// (`http://127.0.0.1:PORT`) as the one line on stdout; logs go to stderr. SIGTERM or SIGINT
// closes it and exits 0.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import * as jose from 'jose';
import Provider, { errors } from 'oidc-provider';

const HERE = dirname(fileURLToPath(import.meta.url));
const ALGS = {
  RS256: { modulusLength: 2048 },
  PS256: { modulusLength: 2048 },
  ES256: {},
  EdDSA: { crv: 'Ed25519' },
};

function fail(message) {
  process.stderr.write(`authz: ${message}\n`);
  process.exit(2);
}

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    resource: { type: 'string', multiple: true, default: [] },
    config: { type: 'string', default: join(HERE, 'authz.json') },
    scopes: { type: 'string' },
    alg: { type: 'string', default: 'RS256' },
    ttl: { type: 'string' },
    'key-out': { type: 'string' },
    discovery: { type: 'string', default: 'both' },
    'exit-with-stdin': { type: 'boolean', default: false },
  },
  strict: true,
});

const config = JSON.parse(readFileSync(args.config, 'utf8'));
const port = Number(args.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be 0..65535, got ${args.port}`);
const DISCOVERY = {
  openid: '/.well-known/openid-configuration',
  oauth: '/.well-known/oauth-authorization-server',
};
if (!['both', ...Object.keys(DISCOVERY)].includes(args.discovery)) fail(`--discovery must be both, openid or oauth, got ${args.discovery}`);
const hidden = { both: null, openid: DISCOVERY.oauth, oauth: DISCOVERY.openid }[args.discovery];
if (!(args.alg in ALGS)) fail(`--alg must be one of ${Object.keys(ALGS).join(', ')}, got ${args.alg}`);
const ttl = Number(args.ttl ?? config.accessTokenTTL ?? 600);
if (!Number.isInteger(ttl) || ttl <= 0) fail(`the access token TTL must be a positive integer, got ${ttl}`);

const splitScopes = (s) => (Array.isArray(s) ? s : String(s).split(' ')).filter(Boolean);
const defaultScopes = splitScopes(args.scopes ?? config.scopes ?? []);
/** resource URI -> the scopes its tokens may carry */
const resources = new Map();
for (const uri of args.resource) resources.set(uri, defaultScopes);
for (const [uri, r] of Object.entries(config.resources ?? {})) resources.set(uri, splitScopes(r.scopes ?? defaultScopes));
if (resources.size === 0) fail('name at least one --resource URI (the MCP server\'s canonical URI)');
for (const uri of resources.keys()) {
  let url;
  try {
    url = new URL(uri);
  } catch {
    fail(`resource ${JSON.stringify(uri)} is not an absolute URI`);
  }
  if (url.hash || uri.includes('#')) fail(`resource ${uri} must not have a fragment (RFC 8707)`);
}
const allScopes = [...new Set([...resources.values()].flat())];

const tokenFormat = new Map();
const tokenTyp = new Map();
const clients = (config.clients ?? []).map((c) => {
  const metadata = Object.fromEntries(Object.entries(c).filter(([k]) => !k.startsWith('$') && !k.startsWith('x-')));
  tokenFormat.set(c.client_id, c['x-token-format'] ?? 'jwt');
  if (!['jwt', 'opaque'].includes(tokenFormat.get(c.client_id))) fail(`client ${c.client_id}: x-token-format must be jwt or opaque`);
  if (c['x-token-typ'] !== undefined) {
    if (c['x-token-typ'] !== 'JWT') fail(`client ${c.client_id}: x-token-typ must be JWT`);
    tokenTyp.set(c.client_id, c['x-token-typ']);
  }
  return metadata;
});

// The signing key, generated now; its kid is its RFC 7638 thumbprint.
const { privateKey } = await jose.generateKeyPair(args.alg, { ...ALGS[args.alg], extractable: true });
const jwk = await jose.exportJWK(privateKey);
jwk.kid = await jose.calculateJwkThumbprint(jwk);
jwk.alg = args.alg;
jwk.use = 'sig';
if (args['key-out']) writeFileSync(args['key-out'], `${JSON.stringify({ keys: [jwk] })}\n`, { mode: 0o600 });

const http = createServer();
await new Promise((resolve, reject) => {
  http.once('error', reject);
  http.listen(port, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${http.address().port}`;

const provider = new Provider(issuer, {
  clients,
  jwks: { keys: [jwk] },
  scopes: ['openid', ...allScopes],
  claims: { openid: ['sub'] },
  enabledJWA: {
    idTokenSigningAlgValues: [args.alg],
  },
  clientDefaults: {
    grant_types: ['client_credentials'],
    response_types: [],
    id_token_signed_response_alg: args.alg,
    token_endpoint_auth_method: 'client_secret_basic',
  },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // Client credentials name their resource; nothing is implied.
      defaultResource: async () => undefined,
      useGrantedResource: async () => false,
      getResourceServerInfo: async (_ctx, resourceIndicator, client) => {
        const scopes = resources.get(resourceIndicator);
        if (!scopes) throw new errors.InvalidTarget(`unknown resource ${resourceIndicator}`);
        const format = tokenFormat.get(client.clientId) ?? 'jwt';
        return {
          scope: scopes.join(' '),
          audience: resourceIndicator,
          accessTokenTTL: ttl,
          accessTokenFormat: format,
          ...(format === 'jwt' ? { jwt: { sign: { alg: args.alg } } } : {}),
        };
      },
    },
  },
  formats: {
    customizers: {
      // oidc-provider signs with `typ: at+jwt` and lets the header's fields override it.
      jwt: async (_ctx, token, jwt) => {
        const typ = tokenTyp.get(token.clientId);
        if (typ !== undefined) jwt.header = { ...jwt.header, typ };
      },
    },
  },
  ttl: {
    ClientCredentials: () => ttl,
    AccessToken: () => ttl,
  },
});
// oidc-provider checks static clients when first used; check them now, so a bad config stops here.
for (const { client_id: id } of clients) {
  try {
    if (!(await provider.Client.find(id))) fail(`client ${id} is not registered`);
  } catch (err) {
    fail(`client ${id}: ${err.error_description ?? err.message}`);
  }
}
provider.on('server_error', (_ctx, err) => process.stderr.write(`authz: server_error ${err.stack}\n`));
provider.on('grant.error', (_ctx, err) => process.stderr.write(`authz: token request refused: ${err.message} (${err.error_description ?? ''})\n`));

const callback = provider.callback();
http.on('request', (req, res) => {
  if (hidden !== null && req.url.split('?')[0] === hidden) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
    return;
  }
  callback(req, res);
});

function stop() {
  http.close(() => process.exit(0));
  http.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
if (args['exit-with-stdin']) {
  process.stdin.on('end', stop);
  process.stdin.resume();
}

// Ready when discovery answers with this issuer, through the socket clients use.
const probe = args.discovery === 'oauth' ? DISCOVERY.oauth : DISCOVERY.openid;
const discovery = await fetch(`${issuer}${probe}`).then((r) => r.json());
if (discovery.issuer !== issuer) fail(`discovery answered issuer ${discovery.issuer}, expected ${issuer}`);
process.stdout.write(`${issuer}\n`);
