//! The resolved plan: what generation consumes. Built only from a spec that validated, so every
//! name in it resolves and every resolver graph is acyclic.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::spec::{Annotations, Asks, ParamSource, SourceKeyword, Spec};
use crate::validate::{ArgType, arg_type, input_properties, run_order};

/// The whole server.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// Human-readable title.
    pub title: Option<String>,
    /// Server instructions.
    pub instructions: Option<String>,
    /// `$defs`, by name, in spec order.
    pub defs: IndexMap<String, Value>,
    /// Resolvers, in spec order.
    pub resolvers: Vec<ResolverPlan>,
    /// Tools, in spec order.
    pub tools: Vec<ToolPlan>,
}

/// One resolver.
#[derive(Debug, Clone, Serialize)]
pub struct ResolverPlan {
    /// Name in the spec.
    pub name: String,
    /// Doc comment.
    pub description: Option<String>,
    /// Parameters, in order.
    pub params: Vec<ResolverParam>,
    /// The schema of the value (absent for `sample` and `roots`).
    pub returns: Option<Value>,
    /// The question it may ask.
    pub asks: Option<Asks>,
    /// Whether any tool uses it.
    pub used: bool,
}

/// A resolver parameter and its source.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum ResolverParam {
    /// The consuming tool's argument of the same name.
    Arg {
        /// Parameter (and argument) name.
        name: String,
        /// Its type, the same in every consuming tool.
        #[serde(rename = "type")]
        ty: ArgTypeView,
        /// False when some consuming tool may lack a value (not required, no default).
        always: bool,
    },
    /// The request context.
    Context {
        /// Parameter name.
        name: String,
    },
    /// Another resolver's value.
    Resolver {
        /// Parameter name.
        name: String,
        /// The resolver.
        resolver: String,
    },
}

impl ResolverParam {
    /// The parameter's name.
    pub fn name(&self) -> &str {
        match self {
            ResolverParam::Arg { name, .. }
            | ResolverParam::Context { name }
            | ResolverParam::Resolver { name, .. } => name,
        }
    }
}

/// An argument type, as serialized in the plan.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", content = "of", rename_all = "lowercase")]
pub enum ArgTypeView {
    /// string, integer, number or boolean.
    Primitive(String),
    /// A `$defs` type.
    Ref(String),
    /// Another schema.
    Schema(Value),
}

impl From<ArgType> for ArgTypeView {
    fn from(t: ArgType) -> Self {
        match t {
            ArgType::Primitive(p) => ArgTypeView::Primitive(p),
            ArgType::Ref(r) => ArgTypeView::Ref(r),
            ArgType::Schema(s) => ArgTypeView::Schema(s),
        }
    }
}

/// One tool.
#[derive(Debug, Clone, Serialize)]
pub struct ToolPlan {
    /// Name in the spec (and on the wire).
    pub name: String,
    /// UI title.
    pub title: Option<String>,
    /// Description.
    pub description: String,
    /// Annotations.
    pub annotations: Option<Annotations>,
    /// The `inputSchema` advertised: the spec's `input` (or an empty object schema), made
    /// self-contained by carrying every `$defs` type it references.
    pub input_schema: Value,
    /// The argument names the model supplies, in order.
    pub args: Vec<String>,
    /// The output, when the spec declares one.
    pub output: Option<OutputPlan>,
    /// Resolved parameters, in spec order.
    pub bindings: Vec<BindingPlan>,
    /// Every resolver the tool needs, each once, in a valid run order.
    pub run_order: Vec<String>,
}

/// A tool's output.
#[derive(Debug, Clone, Serialize)]
pub struct OutputPlan {
    /// The spec's `output` schema.
    pub schema: Value,
    /// True when the value is wrapped as `{"result": value}` (any non-object schema).
    pub wrapped: bool,
    /// The `outputSchema` advertised (wrapped to match, self-contained).
    pub output_schema: Value,
}

/// A resolved tool parameter.
#[derive(Debug, Clone, Serialize)]
pub struct BindingPlan {
    /// Parameter name.
    pub param: String,
    /// The resolver.
    pub resolver: String,
    /// True when the tool receives the whole elicitation outcome.
    pub outcome: bool,
}

/// Builds the plan of a validated spec.
pub fn build(spec: &Spec) -> Plan {
    let mut used = std::collections::HashSet::new();
    let tools: Vec<ToolPlan> = spec
        .tools
        .iter()
        .map(|(name, tool)| {
            let order = run_order(spec, tool);
            used.extend(order.iter().cloned());
            let input = tool
                .input
                .clone()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
            let output = tool.output.as_ref().map(|schema| {
                let wrapped = !is_object_schema(spec, schema);
                let raw = if wrapped {
                    json!({"type": "object", "properties": {"result": schema}, "required": ["result"]})
                } else {
                    schema.clone()
                };
                OutputPlan {
                    schema: schema.clone(),
                    wrapped,
                    output_schema: self_contained(&spec.defs, &raw),
                }
            });
            ToolPlan {
                name: name.clone(),
                title: tool.title.clone(),
                description: tool.description.clone(),
                annotations: tool.annotations.clone(),
                input_schema: self_contained(&spec.defs, &input),
                args: input_properties(tool),
                output,
                bindings: tool
                    .resolve
                    .iter()
                    .map(|(p, b)| BindingPlan {
                        param: p.clone(),
                        resolver: b.resolver().to_string(),
                        outcome: b.outcome(),
                    })
                    .collect(),
                run_order: order,
            }
        })
        .collect();
    let resolvers = spec
        .resolvers
        .iter()
        .map(|(name, r)| {
            // The tools that need this resolver, from the run orders computed above (once per
            // tool: recomputing them per resolver made planning quadratic).
            let consumers: Vec<&crate::spec::Tool> = spec
                .tools
                .values()
                .zip(&tools)
                .filter(|(_, plan)| plan.run_order.iter().any(|n| n == name))
                .map(|(t, _)| t)
                .collect();
            let params = r
                .params
                .iter()
                .map(|(p, source)| match source {
                    ParamSource::Keyword(SourceKeyword::Arg) => {
                        let (ty, always) = consumers
                            .iter()
                            .find_map(|t| arg_type(t, p))
                            .unwrap_or((ArgType::Schema(Value::Bool(true)), false));
                        ResolverParam::Arg {
                            name: p.clone(),
                            ty: ty.into(),
                            always,
                        }
                    }
                    ParamSource::Keyword(SourceKeyword::Context) => {
                        ResolverParam::Context { name: p.clone() }
                    }
                    ParamSource::Resolver(rs) => ResolverParam::Resolver {
                        name: p.clone(),
                        resolver: rs.resolver.clone(),
                    },
                })
                .collect();
            ResolverPlan {
                name: name.clone(),
                description: r.description.clone(),
                params,
                returns: r.returns.clone(),
                asks: r.asks,
                used: used.contains(name),
            }
        })
        .collect();
    Plan {
        name: spec.name.clone(),
        version: spec.version.clone(),
        title: spec.title.clone(),
        instructions: spec.instructions.clone(),
        defs: spec.defs.clone(),
        resolvers,
        tools,
    }
}

/// True when `schema` (following one `$ref`) describes an object.
fn is_object_schema(spec: &Spec, schema: &Value) -> bool {
    let target = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|n| spec.defs.get(n))
            .unwrap_or(schema),
        None => schema,
    };
    target.get("type").and_then(Value::as_str) == Some("object")
}

/// `schema` with every `$defs` type it references (transitively) copied into its own `$defs`,
/// so the schema stands alone on the wire.
pub fn self_contained(defs: &IndexMap<String, Value>, schema: &Value) -> Value {
    let mut needed: Vec<String> = Vec::new();
    let mut queue: Vec<&Value> = vec![schema];
    while let Some(v) = queue.pop() {
        let mut refs = Vec::new();
        collect_refs(v, &mut refs);
        for name in refs {
            if !needed.contains(&name)
                && let Some(def) = defs.get(&name)
            {
                needed.push(name);
                queue.push(def);
            }
        }
    }
    let mut out = schema.clone();
    if needed.is_empty() {
        return out;
    }
    // Spec order, so the output is stable.
    let defs: Map<String, Value> = defs
        .iter()
        .filter(|(n, _)| needed.contains(n))
        .map(|(n, s)| (n.clone(), s.clone()))
        .collect();
    if let Value::Object(m) = &mut out {
        m.insert("$defs".into(), Value::Object(defs));
    }
    out
}

/// The `$defs` names that `v` references (`#/$defs/Name`), in order of appearance.
pub(crate) fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                if k == "$ref" {
                    if let Some(name) = child.as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
                        out.push(name.to_string());
                    }
                } else if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                    collect_refs(child, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|c| collect_refs(c, out)),
        _ => {}
    }
}
