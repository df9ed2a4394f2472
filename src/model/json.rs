//! The model as JSON for people (`mcpgen plan`): ids replaced by the names they stand for.

use serde_json::Value;

use super::{Chain, Model, Param};

/// `model` serialized, each resolver id written as the resolver's name.
pub(super) fn named(model: &Model) -> Value {
    let mut out = serde_json::to_value(model).expect("the model serializes");
    let name = |id: super::ResolverId| Value::String(model[id].name.clone());
    let chains = |section: &str, chains: Vec<&Chain>, out: &mut Value| {
        for (i, c) in chains.into_iter().enumerate() {
            let entry = &mut out[section][i];
            entry["run_order"] = c.run_order.iter().map(|r| name(*r)).collect();
            for (j, b) in c.bindings.iter().enumerate() {
                entry["bindings"][j]["resolver"] = name(b.resolver);
            }
        }
    };
    chains(
        "tools",
        model.tools.iter().map(|t| &t.chain).collect(),
        &mut out,
    );
    chains(
        "prompts",
        model.prompts.iter().map(|p| &p.chain).collect(),
        &mut out,
    );
    for (i, r) in model.resolvers.iter().enumerate() {
        for (j, p) in r.params.iter().enumerate() {
            if let Param::Resolver { resolver, .. } = p {
                out["resolvers"][i]["params"][j]["resolver"] = name(*resolver);
            }
        }
    }
    out
}
