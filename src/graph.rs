//! The resolver graph of a spec, and the queries about it that validation and generation share:
//! who consumes resolvers (tools, and prompts seen as tools), which resolvers a consumer needs
//! and in what order, the edges between resolvers and the cycles they form, and the type of a
//! consumer's argument as a resolver taking it (`"arg"`) sees it.
//!
//! Nothing here reports: unknown resolvers and cycles are skipped or returned as data, and the
//! checks in [`crate::validate`] turn them into diagnostics.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::Value;

use crate::diagnostics::Subject;
use crate::pointer::Pointer;
use crate::spec::{ParamSource, Resolver, Spec, Tool};

/// What resolvers serve: a tool, or a prompt seen as a tool whose input is its arguments.
#[derive(Debug, Clone)]
pub struct Consumer<'a> {
    /// Tool or prompt.
    pub kind: ConsumerKind,
    /// Its name in the spec.
    pub name: &'a str,
    /// The tool, or the prompt as a tool ([`crate::spec::Prompt::as_tool`]).
    pub tool: Cow<'a, Tool>,
}

/// The two kinds of resolver consumers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsumerKind {
    /// A tool.
    Tool,
    /// A prompt.
    Prompt,
}

impl ConsumerKind {
    /// `tool` or `prompt`.
    pub fn noun(self) -> &'static str {
        match self {
            ConsumerKind::Tool => "tool",
            ConsumerKind::Prompt => "prompt",
        }
    }
}

impl Consumer<'_> {
    /// Where it is in the spec.
    pub fn ptr(&self) -> Pointer {
        let section = match self.kind {
            ConsumerKind::Tool => "tools",
            ConsumerKind::Prompt => "prompts",
        };
        Pointer::from_segments([section, self.name])
    }

    /// The diagnostic subject naming it.
    pub fn subject(&self) -> Subject {
        match self.kind {
            ConsumerKind::Tool => Subject::Tool(self.name.to_string()),
            ConsumerKind::Prompt => Subject::Prompt(self.name.to_string()),
        }
    }

    /// `tool `x`` or `prompt `x``, for messages.
    pub fn describe(&self) -> String {
        format!("{} `{}`", self.kind.noun(), self.name)
    }
}

/// Every tool, then every prompt, in spec order.
pub fn consumers(spec: &Spec) -> Vec<Consumer<'_>> {
    let tools = spec.tools.iter().map(|(name, t)| Consumer {
        kind: ConsumerKind::Tool,
        name,
        tool: Cow::Borrowed(t),
    });
    let prompts = spec.prompts.iter().map(|(name, p)| Consumer {
        kind: ConsumerKind::Prompt,
        name,
        tool: Cow::Owned(p.as_tool()),
    });
    tools.chain(prompts).collect()
}

/// The resolvers a resolver takes values from, in parameter order.
pub fn resolver_deps(r: &Resolver) -> impl Iterator<Item = &str> {
    r.params.values().filter_map(|s| match s {
        ParamSource::Resolver(rs) => Some(rs.resolver.as_str()),
        ParamSource::Keyword(_) => None,
    })
}

/// The resolvers a tool needs, directly or through other resolvers, each once, in a valid run
/// order (every resolver after the resolvers it takes values from). Unknown resolvers and
/// cycles are skipped (they are reported elsewhere).
pub fn run_order(spec: &Spec, tool: &Tool) -> Vec<String> {
    order_from(spec, tool.resolve.values().map(|b| b.resolver()))
}

/// [`run_order`] for the resolvers `roots` (in order) rather than a tool's bindings: every
/// resolver they need, each once, each after those it takes values from.
pub fn order_from<'s>(spec: &Spec, roots: impl Iterator<Item = &'s str>) -> Vec<String> {
    fn visit(spec: &Spec, name: &str, done: &mut Vec<String>, active: &mut HashSet<String>) {
        if done.iter().any(|d| d == name) || active.contains(name) {
            return;
        }
        let Some(r) = spec.resolvers.get(name) else {
            return;
        };
        active.insert(name.to_string());
        for dep in resolver_deps(r) {
            visit(spec, dep, done, active);
        }
        active.remove(name);
        done.push(name.to_string());
    }
    let mut done = Vec::new();
    let mut active = HashSet::new();
    for root in roots {
        visit(spec, root, &mut done, &mut active);
    }
    done
}

/// The first resolver `tool` binds directly through which it reaches resolver `rname`; `None`
/// when the tool binds `rname` itself (or does not reach it).
pub fn reached_through<'t>(spec: &Spec, tool: &'t Tool, rname: &str) -> Option<&'t str> {
    if tool.resolve.values().any(|b| b.resolver() == rname) {
        return None;
    }
    tool.resolve.values().map(|b| b.resolver()).find(|d| {
        spec.resolvers.contains_key(*d)
            && order_from(spec, std::iter::once(*d))
                .iter()
                .any(|n| n == rname)
    })
}

/// The first parameter of resolver `from` that takes the value of resolver `to`.
pub fn edge_param<'s>(spec: &'s Spec, from: &str, to: &str) -> Option<&'s str> {
    spec.resolvers.get(from)?.params.iter().find_map(|(p, s)| {
        matches!(s, ParamSource::Resolver(rs) if rs.resolver == to).then_some(p.as_str())
    })
}

/// Every cycle of resolvers taking values from one another, each once, as the resolvers along
/// it (the edge from the last back to the first closes it), starting from its first resolver in
/// spec order; cycles in the order a depth-first search from each resolver, in spec order,
/// finds them. Edges to unknown resolvers are skipped.
pub fn cycles(spec: &Spec) -> Vec<Vec<String>> {
    let mut reported: HashSet<Vec<String>> = HashSet::new();
    let mut found = Vec::new();
    for start in spec.resolvers.keys() {
        for cycle in cycles_from(spec, start) {
            let cycle = rotate_to_first(spec, cycle);
            if reported.insert(cycle.clone()) {
                found.push(cycle);
            }
        }
    }
    found
}

/// The cycles a depth-first search from `start` closes, each as found along its path.
fn cycles_from(spec: &Spec, start: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut stack = vec![(start.to_string(), 0usize)];
    let mut path: Vec<String> = vec![start.to_string()];
    let mut on_path: HashSet<String> = HashSet::from([start.to_string()]);
    let mut visited: HashSet<String> = HashSet::new();
    while let Some((node, i)) = stack.pop() {
        let deps: Vec<&str> = spec
            .resolvers
            .get(&node)
            .map(|r| resolver_deps(r).collect())
            .unwrap_or_default();
        if i >= deps.len() {
            on_path.remove(&node);
            path.pop();
            continue;
        }
        stack.push((node.clone(), i + 1));
        let next = deps[i].to_string();
        if !spec.resolvers.contains_key(&next) {
            continue;
        }
        if on_path.contains(&next) {
            let pos = path.iter().position(|p| *p == next).unwrap_or(0);
            found.push(path[pos..].to_vec());
        } else if visited.insert(next.clone()) {
            on_path.insert(next.clone());
            path.push(next.clone());
            stack.push((next, 0));
        }
    }
    found
}

/// `cycle` rotated to start at its resolver that comes first in the spec.
fn rotate_to_first(spec: &Spec, mut cycle: Vec<String>) -> Vec<String> {
    let min = cycle
        .iter()
        .enumerate()
        .min_by_key(|(_, n)| spec.resolvers.get_index_of(*n))
        .map_or(0, |(i, _)| i);
    cycle.rotate_left(min);
    cycle
}

/// The type of a tool argument as a resolver sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgType {
    /// A primitive JSON type: string, integer, number or boolean.
    Primitive(String),
    /// A `$defs` type.
    Ref(String),
    /// Any other schema, compared whole.
    Schema(Value),
}

impl std::fmt::Display for ArgType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgType::Primitive(t) => write!(f, "{t}"),
            ArgType::Ref(r) => write!(f, "#/$defs/{r}"),
            ArgType::Schema(s) => write!(f, "{s}"),
        }
    }
}

/// The type of property `name` of a tool's input, and whether the tool always has a value for it
/// (required, or with a default). `None` when the tool has no such argument.
pub fn arg_type(tool: &Tool, name: &str) -> Option<(ArgType, bool)> {
    let input = tool.input.as_ref()?;
    let written = input.get("properties")?.get(name)?;
    let required = input
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|x| x == name))
        || written.get("default").is_some();
    // A nullable argument (`anyOf`/`oneOf` of a schema and `{"type": "null"}`, as pydantic
    // writes an optional field, or `"type": [T, "null"]`) is that schema's type, which may be
    // absent: the resolver takes an `Option` of it.
    let (prop, nullable) = match non_null(written) {
        Some(inner) => (inner, true),
        None => (written.clone(), false),
    };
    let prop = &prop;
    let always = required && !nullable;
    let ty = if let Some(r) = prop.get("$ref").and_then(Value::as_str) {
        ArgType::Ref(r.trim_start_matches("#/$defs/").to_string())
    } else {
        match prop.get("type").and_then(Value::as_str) {
            // A string with a `format` may have a type of its own (`uuid::Uuid`, ...): the
            // format is part of the type, so every consumer must agree on it.
            Some("string") if prop.get("format").is_some() => ArgType::Schema(serde_json::json!({
                "type": "string",
                "format": prop["format"],
            })),
            // An integer typed `serde_json::Value` (bounds past its Rust type) is passed as that
            // value.
            Some("integer")
                if prop
                    .as_object()
                    .and_then(crate::integers::integer_beyond)
                    .is_some() =>
            {
                ArgType::Schema(strip_annotations(prop))
            }
            Some(t @ ("string" | "integer" | "number" | "boolean")) => ArgType::Primitive(t.into()),
            _ => ArgType::Schema(strip_annotations(prop)),
        }
    };
    Some((ty, always))
}

/// The schema of a nullable property without its `null`: the other branch of a two-branch
/// `anyOf`/`oneOf` whose one branch is `{"type": "null"}` (its annotations aside), or the schema
/// with `"type": [T, "null"]` narrowed to `T`; `None` for anything else.
fn non_null(prop: &Value) -> Option<Value> {
    let is_null = |v: &Value| {
        v.as_object().is_some_and(|m| {
            m.get("type") == Some(&Value::String("null".into()))
                && m.keys()
                    .all(|k| matches!(k.as_str(), "type" | "title" | "description"))
        })
    };
    let object = prop.as_object()?;
    for combinator in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get(combinator)
            && let [a, b] = branches.as_slice()
            && object.keys().all(|k| {
                k == combinator || matches!(k.as_str(), "title" | "description" | "default")
            })
        {
            return match (is_null(a), is_null(b)) {
                (true, false) => Some(b.clone()),
                (false, true) => Some(a.clone()),
                _ => None,
            };
        }
    }
    if let Some(Value::Array(types)) = object.get("type")
        && let [a, b] = types.as_slice()
    {
        let null = Value::String("null".into());
        let other = match (a == &null, b == &null) {
            (true, false) => b,
            (false, true) => a,
            _ => return None,
        };
        let mut narrowed = object.clone();
        narrowed.insert("type".into(), other.clone());
        return Some(Value::Object(narrowed));
    }
    None
}

/// A schema without the keywords that do not change what it accepts.
fn strip_annotations(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "description" | "title" | "examples"))
                .map(|(k, v)| (k.clone(), strip_annotations(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_annotations).collect()),
        other => other.clone(),
    }
}

/// Input property names of a tool, in order.
pub fn input_properties(tool: &Tool) -> Vec<String> {
    tool.input
        .as_ref()
        .and_then(|i| i.get("properties"))
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spec whose resolvers are `edges` (resolver -> the resolvers it takes values from, each
    /// through a parameter named after it) and whose one tool binds `bound`.
    fn spec(edges: &[(&str, &[&str])], bound: &[&str]) -> Spec {
        let resolvers: serde_json::Map<String, Value> = edges
            .iter()
            .map(|(r, deps)| {
                let params: serde_json::Map<String, Value> = deps
                    .iter()
                    .map(|d| (format!("p_{d}"), serde_json::json!({"resolver": d})))
                    .collect();
                (
                    r.to_string(),
                    serde_json::json!({"params": params, "returns": {"type": "string"}}),
                )
            })
            .collect();
        let resolve: serde_json::Map<String, Value> = bound
            .iter()
            .map(|b| (format!("v_{b}"), Value::from(*b)))
            .collect();
        let text = serde_json::json!({
            "name": "g",
            "version": "1.0.0",
            "tools": {"t": {"description": "T.", "resolve": resolve}},
            "resolvers": resolvers,
        });
        crate::spec::load_str("g.json", &text.to_string())
            .expect("a well-formed spec")
            .spec
    }

    #[test]
    fn run_order_puts_every_resolver_after_its_dependencies_once() {
        let s = spec(
            &[("a", &["b", "c"]), ("b", &["c"]), ("c", &[]), ("d", &[])],
            &["a", "c"],
        );
        assert_eq!(run_order(&s, &s.tools["t"]), ["c", "b", "a"]);
        assert_eq!(reached_through(&s, &s.tools["t"], "b"), Some("a"));
        assert_eq!(reached_through(&s, &s.tools["t"], "a"), None);
        assert_eq!(reached_through(&s, &s.tools["t"], "d"), None);
        assert_eq!(edge_param(&s, "a", "c"), Some("p_c"));
        assert_eq!(edge_param(&s, "c", "a"), None);
        assert_eq!(
            resolver_deps(&s.resolvers["a"]).collect::<Vec<_>>(),
            ["b", "c"]
        );
    }

    #[test]
    fn unknown_resolvers_and_cycles_are_skipped_by_the_order() {
        let s = spec(&[("a", &["b", "zz"]), ("b", &["a"])], &["a", "nope"]);
        assert_eq!(run_order(&s, &s.tools["t"]), ["b", "a"]);
    }

    #[test]
    fn each_cycle_is_found_once_from_its_first_resolver() {
        let s = spec(
            &[
                ("x", &[]),
                ("b", &["c"]),
                ("c", &["a"]),
                ("a", &["b", "a"]),
                ("d", &["d", "zz"]),
            ],
            &[],
        );
        assert_eq!(
            cycles(&s),
            vec![vec!["b", "c", "a"], vec!["a"], vec!["d"]]
                .into_iter()
                .map(|c| c.into_iter().map(String::from).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        );
    }
}
