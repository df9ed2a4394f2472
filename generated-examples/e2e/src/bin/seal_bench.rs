//! Micro-benchmark: the cost of sealing and opening one typical `requestState` with the
//! runtime's own code (`state.rs`, included from the runtime crate's source).
//!
//! `cargo run --release -p e2e --bin seal_bench [iterations]` prints ns per seal, per open and
//! per seal+open.

#[allow(dead_code)]
#[path = "../../../../runtime/src/state.rs"]
mod state;

use std::{hint::black_box, time::Instant};

use serde_json::json;
use state::{Binding, StatePolicy, arguments_digest};

fn main() {
    let iterations: u32 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let policy = StatePolicy::new(
        &[b"a secret of at least thirty-two bytes, for the bench".to_vec()],
        std::time::Duration::from_secs(600),
        "Bookshop",
    )
    .expect("policy");
    let arguments = json!({"title": "Neuromancer"});
    let digest = arguments_digest(arguments.as_object());
    let binding = Binding {
        method: "tools/call",
        tool: "order_book",
        arguments: &digest,
        principal: None,
    };
    // What the probe's round 2 carries: one recorded answer and two questions asked.
    let inner = json!({
        "v": 1,
        "outcomes": {"ask_color": {"q": "WYfdF1xvFptQg-4wIHHIAA",
                                   "answer": {"action": "accept", "content": {"color": "red"}}}},
        "asked": {"ask_size": "k8ro95zLdj6neDwOgWKKhQ", "describe": "WxLokwUI_AIHBGGYS96Olg"}
    });
    let token = policy.seal(binding, &inner).expect("seal");
    assert_eq!(policy.open(&token, binding).expect("open"), inner);

    for _ in 0..iterations / 10 {
        black_box(
            policy
                .open(&policy.seal(binding, &inner).unwrap(), binding)
                .unwrap(),
        );
    }
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(policy.seal(black_box(binding), black_box(&inner)).unwrap());
    }
    let seal = start.elapsed().as_nanos() as f64 / f64::from(iterations);
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(policy.open(black_box(&token), black_box(binding)).unwrap());
    }
    let open = start.elapsed().as_nanos() as f64 / f64::from(iterations);
    let start = Instant::now();
    for _ in 0..iterations {
        let token = policy.seal(black_box(binding), black_box(&inner)).unwrap();
        black_box(policy.open(&token, binding).unwrap());
    }
    let both = start.elapsed().as_nanos() as f64 / f64::from(iterations);
    println!(
        "requestState ({} chars, {iterations} iterations): seal {seal:.0} ns/op, open {open:.0} ns/op, seal+open {both:.0} ns/op",
        token.len()
    );
}
