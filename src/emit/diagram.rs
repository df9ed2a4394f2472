//! The resolver graph as a picture (`mcpgen graph`, and the crate README's "Resolver graph"):
//! every tool and prompt, the resolvers each runs (numbered in the run order of the tool or
//! prompt when only one is drawn), what each resolver asks, and where every value comes from
//! (a tool's argument, the request context, the verified caller, another resolver), as a
//! Mermaid flowchart or a Graphviz digraph. One [`Picture`] is built from the model and written
//! in either syntax, so the two always show the same graph.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::model::{Chain, Model, Param, ResolverId};

/// The output syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// A Mermaid `flowchart` (renders in GitHub and GitLab Markdown).
    Mermaid,
    /// A Graphviz `digraph` (`dot -Tsvg`).
    Dot,
}

/// What a node stands for (its shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Tool,
    Prompt,
    Resolver,
    Source,
}

/// One node: its id in the picture, its kind and its label lines.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Node {
    id: String,
    kind: Kind,
    label: Vec<String>,
}

/// One edge, labelled with the parameter that receives the value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: String,
    to: String,
    label: String,
}

/// The graph, syntax-free.
#[derive(Debug, Default)]
struct Picture {
    nodes: Vec<Node>,
    edges: BTreeSet<Edge>,
}

/// The picture of `model` in `syntax`; with `only`, of that tool or prompt alone (its resolvers
/// numbered in run order). `Err` names the tools and prompts when `only` is neither.
pub fn render(model: &Model, syntax: Syntax, only: Option<&str>) -> Result<String, String> {
    let picture = picture(model, only)?;
    Ok(match syntax {
        Syntax::Mermaid => mermaid(&picture),
        Syntax::Dot => dot(&model.name, &picture),
    })
}

fn picture(model: &Model, only: Option<&str>) -> Result<Picture, String> {
    let tools: Vec<_> = model
        .tools
        .iter()
        .filter(|t| only.is_none_or(|name| t.name == name))
        .collect();
    let prompts: Vec<_> = model
        .prompts
        .iter()
        .filter(|p| only.is_none_or(|name| p.name == name))
        .collect();
    if let Some(name) = only
        && tools.is_empty()
        && prompts.is_empty()
    {
        let mut known: Vec<&str> = model.tools.iter().map(|t| t.name.as_str()).collect();
        known.extend(model.prompts.iter().map(|p| p.name.as_str()));
        return Err(format!(
            "no tool or prompt is named `{name}`; the spec has: {}",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ));
    }
    let mut picture = Picture::default();
    // Resolvers in the run order of the one chain drawn, else in the spec's order.
    let chains: Vec<(String, &Chain)> = tools
        .iter()
        .map(|t| (format!("t{}", t.id.index()), &t.chain))
        .chain(
            prompts
                .iter()
                .map(|p| (format!("p{}", p.id.index()), &p.chain)),
        )
        .collect();
    let numbered = (chains.len() == 1).then(|| &chains[0].1.run_order);
    let mut drawn: Vec<ResolverId> = match numbered {
        Some(order) => order.clone(),
        None => chains
            .iter()
            .flat_map(|(_, chain)| chain.run_order.iter().copied())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    drawn.dedup();
    for t in &tools {
        let mut label = vec![format!("tool {}", t.name)];
        if !t.scopes.is_empty() {
            label.push(format!("scopes: {}", t.scopes.join(" ")));
        }
        picture.nodes.push(Node {
            id: format!("t{}", t.id.index()),
            kind: Kind::Tool,
            label,
        });
    }
    for p in &prompts {
        picture.nodes.push(Node {
            id: format!("p{}", p.id.index()),
            kind: Kind::Prompt,
            label: vec![format!("prompt {}", p.name)],
        });
    }
    let mut sources = BTreeSet::new();
    for (step, &id) in drawn.iter().enumerate() {
        let r = &model[id];
        let name = match numbered {
            Some(_) => format!("{}. {}", step + 1, r.name),
            None => r.name.clone(),
        };
        let mut label = vec![name];
        if let Some(asks) = r.asks {
            label.push(format!("asks: {}", asks.asks.as_str()));
        }
        picture.nodes.push(Node {
            id: format!("r{}", id.index()),
            kind: Kind::Resolver,
            label,
        });
        for param in &r.params {
            let (from, label) = match param {
                Param::Arg { name, .. } => {
                    sources.insert((format!("a_{}", ident(name)), format!("argument {name}")));
                    (format!("a_{}", ident(name)), name.clone())
                }
                Param::Context { name } => {
                    sources.insert(("ctx".to_string(), "request context".to_string()));
                    ("ctx".to_string(), name.clone())
                }
                Param::Principal { name } => {
                    sources.insert(("caller".to_string(), "verified caller".to_string()));
                    ("caller".to_string(), name.clone())
                }
                Param::Resolver { name, resolver } => {
                    (format!("r{}", resolver.index()), name.clone())
                }
            };
            picture.edges.insert(Edge {
                from,
                to: format!("r{}", id.index()),
                label,
            });
        }
    }
    for (consumer, chain) in &chains {
        for binding in &chain.bindings {
            let label = if binding.outcome {
                format!("{} (outcome)", binding.param)
            } else {
                binding.param.clone()
            };
            picture.edges.insert(Edge {
                from: format!("r{}", binding.resolver.index()),
                to: consumer.clone(),
                label,
            });
        }
    }
    picture
        .nodes
        .extend(sources.into_iter().map(|(id, label)| Node {
            id,
            kind: Kind::Source,
            label: vec![label],
        }));
    Ok(picture)
}

/// An id fragment for a name: its ASCII letters and digits, others as `_xx` (hex).
fn ident(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "_{b:02x}");
        }
    }
    out
}

/// Mermaid: `flowchart LR`, tools as stadiums, prompts as subroutines, resolvers as boxes,
/// sources as parallelograms; labels quoted (`"` as `#quot;`), lines joined with `<br/>`.
fn mermaid(picture: &Picture) -> String {
    let quote = |lines: &[String]| {
        let text = lines
            .iter()
            .map(|l| {
                l.replace('&', "#amp;")
                    .replace('"', "#quot;")
                    .replace('<', "#lt;")
                    .replace('>', "#gt;")
            })
            .collect::<Vec<_>>()
            .join("<br/>");
        format!("\"{text}\"")
    };
    let mut out = String::from("flowchart LR\n");
    for node in &picture.nodes {
        let label = quote(&node.label);
        let shape = match node.kind {
            Kind::Tool => format!("([{label}])"),
            Kind::Prompt => format!("[[{label}]]"),
            Kind::Resolver => format!("[{label}]"),
            Kind::Source => format!("[/{label}/]"),
        };
        let _ = writeln!(out, "    {}{shape}", node.id);
    }
    for edge in &picture.edges {
        let _ = writeln!(
            out,
            "    {} -->|{}| {}",
            edge.from,
            quote(std::slice::from_ref(&edge.label)),
            edge.to
        );
    }
    out
}

/// Graphviz: a `digraph` named after the server, left to right.
fn dot(server: &str, picture: &Picture) -> String {
    let quote = |text: &str| format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""));
    let mut out = format!("digraph {} {{\n    rankdir=LR;\n", quote(server));
    for node in &picture.nodes {
        let shape = match node.kind {
            Kind::Tool => "shape=box, style=rounded",
            Kind::Prompt => "shape=box, peripheries=2",
            Kind::Resolver => "shape=box",
            Kind::Source => "shape=parallelogram",
        };
        let label = quote(&node.label.join("\n")).replace("\n", "\\n");
        let _ = writeln!(out, "    {} [label={label}, {shape}];", node.id);
    }
    for edge in &picture.edges {
        let _ = writeln!(
            out,
            "    {} -> {} [label={}];",
            edge.from,
            edge.to,
            quote(&edge.label)
        );
    }
    out.push_str("}\n");
    out
}
