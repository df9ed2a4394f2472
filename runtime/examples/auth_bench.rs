//! Micro-benchmark: the cost of [`OAuthVerifier::verify`] per request, with a local JWKS (an axum
//! app on loopback serving the public keys of `runtime/testdata/`).
//!
//! - **warm**: the same RS256 token again and again (what a client does between refreshes): the
//!   verified-token cache answers (a SHA-256 of the token, a lookup, the `exp`/`nbf` check);
//! - **miss**: a token not seen before, per algorithm (RS256, ES256, EdDSA): header, key lookup,
//!   signature, claims, the principal, the cache insert.
//!
//! `cargo run --release -p mcpgen-runtime --example auth_bench [iterations] [tokens]` prints ns
//! per verification (`iterations` warm calls, default 100,000; `tokens` distinct tokens per
//! algorithm for the misses, default 2,000).

use std::{
    hint::black_box,
    time::{Duration, Instant},
};

use jsonwebtoken::{Algorithm, EncodingKey, Header, jwk::Jwk};
use mcpgen_runtime::{AuthSettings, OAuthVerifier, TokenVerifier};
use serde_json::{Value, json};

const RSA: &[u8] = include_bytes!("../testdata/rsa.der");
const EC: &[u8] = include_bytes!("../testdata/ec.der");
const ED: &[u8] = include_bytes!("../testdata/ed25519.der");
const RESOURCE: &str = "http://127.0.0.1:9/mcp";

fn main() {
    let arg = |i: usize, default: u32| {
        std::env::args()
            .nth(i)
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    let (iterations, tokens) = (arg(1, 100_000), arg(2, 2_000));
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(run(iterations, tokens));
}

async fn run(iterations: u32, tokens: u32) {
    let keys = [
        ("rsa", Algorithm::RS256, EncodingKey::from_rsa_der(RSA)),
        ("ec", Algorithm::ES256, EncodingKey::from_ec_der(EC)),
        ("ed", Algorithm::EdDSA, EncodingKey::from_ed_der(ED)),
    ];
    let jwks: Vec<Value> = keys
        .iter()
        .map(|(kid, alg, key)| {
            let mut jwk = serde_json::to_value(Jwk::from_encoding_key(key, *alg).unwrap()).unwrap();
            jwk["kid"] = json!(kid);
            jwk
        })
        .collect();
    let jwks = json!({ "keys": jwks }).to_string();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let jwks = jwks.clone();
            async move { ([("content-type", "application/json")], jwks) }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let verifier = OAuthVerifier::new(AuthSettings {
        jwks_uri: Some(format!("{base}/jwks")),
        ..AuthSettings::new(&base, RESOURCE)
    });
    let now = jsonwebtoken::get_current_timestamp();
    // What oidc-provider issues for client credentials (RFC 9068 claims).
    let sign = |(kid, alg, key): &(&str, Algorithm, EncodingKey), jti: u32| {
        let mut header = Header::new(*alg);
        header.kid = Some(kid.to_string());
        header.typ = Some("at+jwt".into());
        let claims = json!({
            "iss": base, "sub": "mcp-machine", "aud": RESOURCE, "client_id": "mcp-machine",
            "scope": "catalog:read loans:read loans:write", "iat": now, "exp": now + 3600,
            "jti": format!("bench-{jti:08}"),
        });
        jsonwebtoken::encode(&header, &claims, key).unwrap()
    };

    let token = sign(&keys[0], u32::MAX);
    verifier
        .verify(&token)
        .await
        .expect("the bench token verifies");
    for _ in 0..iterations / 10 {
        black_box(verifier.verify(black_box(&token)).await.unwrap());
    }
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(verifier.verify(black_box(&token)).await.unwrap());
    }
    let warm = per_call(start.elapsed(), iterations);

    let mut misses = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let fresh: Vec<String> = (0..tokens)
            .map(|n| sign(key, n + i as u32 * tokens))
            .collect();
        let start = Instant::now();
        for token in &fresh {
            black_box(verifier.verify(black_box(token)).await.unwrap());
        }
        misses.push(format!(
            "{:?} {:.0} ns/op",
            key.1,
            per_call(start.elapsed(), tokens)
        ));
    }
    println!(
        "OAuth verify ({} chars, {iterations} iterations, {tokens} tokens per algorithm): warm {warm:.0} ns/op, miss {}",
        token.len(),
        misses.join(", ")
    );
}

fn per_call(elapsed: Duration, n: u32) -> f64 {
    elapsed.as_nanos() as f64 / f64::from(n.max(1))
}
