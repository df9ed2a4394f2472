//! The resolved plan: what generation consumes. Built only from a spec that validated, so every
//! name in it resolves and every resolver graph is acyclic.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::spec::{
    Annotations, Asks, Image, Notifications, ParamSource, Role, SourceKeyword, Spec,
    template_variables,
};
use crate::validate::{ArgType, arg_type, consumers, input_properties, run_order};

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
    /// Prompts, in spec order.
    pub prompts: Vec<PromptPlan>,
    /// Fixed resources, in spec order.
    pub resources: Vec<ResourcePlan>,
    /// Resource templates, in spec order.
    pub templates: Vec<TemplatePlan>,
    /// What the server advertises.
    pub capabilities: CapabilitiesPlan,
}

/// The capabilities a server advertises: exactly what its spec serves.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct CapabilitiesPlan {
    /// Some prompt exists.
    pub prompts: bool,
    /// Some resource or template exists.
    pub resources: bool,
    /// Some prompt argument or template variable offers completions.
    pub completions: bool,
    /// The spec's `logging`.
    pub logging: bool,
    /// The spec's `notifications`.
    pub notifications: Notifications,
}

/// One prompt.
#[derive(Debug, Clone, Serialize)]
pub struct PromptPlan {
    /// Name in the spec (and on the wire).
    pub name: String,
    /// UI title.
    pub title: Option<String>,
    /// Description.
    pub description: String,
    /// Arguments, in order.
    pub arguments: Vec<PromptArgPlan>,
    /// The fixed messages; `None` when the prompt is written in code.
    pub messages: Option<Vec<MessagePlan>>,
    /// Resolved parameters, in spec order.
    pub bindings: Vec<BindingPlan>,
    /// Every resolver the prompt needs, each once, in a valid run order.
    pub run_order: Vec<String>,
}

/// One prompt argument.
#[derive(Debug, Clone, Serialize)]
pub struct PromptArgPlan {
    /// Name.
    pub name: String,
    /// UI title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Must be supplied.
    pub required: bool,
    /// Completion candidates.
    pub complete: Vec<String>,
}

/// One fixed prompt message.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum MessagePlan {
    /// Text with `{argument}` placeholders.
    Text {
        /// Who speaks.
        role: Role,
        /// The template.
        text: String,
    },
    /// An image.
    Image {
        /// Who speaks.
        role: Role,
        /// The image.
        image: Image,
    },
    /// An embedded fixed resource.
    Resource {
        /// Who speaks.
        role: Role,
        /// Its URI.
        uri: String,
    },
}

/// A fixed resource.
#[derive(Debug, Clone, Serialize)]
pub struct ResourcePlan {
    /// URI.
    pub uri: String,
    /// Name.
    pub name: String,
    /// UI title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// MIME type.
    pub mime_type: Option<String>,
    /// Fixed content, or read in code.
    pub content: ContentPlan,
}

/// Where a resource's content comes from.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum ContentPlan {
    /// Fixed text.
    Text(String),
    /// Fixed base64 data.
    Blob(String),
    /// A method of the `Resources` trait.
    Code,
}

/// A resource template.
#[derive(Debug, Clone, Serialize)]
pub struct TemplatePlan {
    /// The URI template.
    pub uri_template: String,
    /// Name.
    pub name: String,
    /// UI title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// MIME type.
    pub mime_type: Option<String>,
    /// Its variables, in order.
    pub variables: Vec<String>,
    /// Completion candidates per variable.
    pub complete: IndexMap<String, Vec<String>>,
    /// Variables exempt from the path-safety checks.
    pub exempt_from_path_checks: Vec<String>,
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
    let prompts: Vec<PromptPlan> = spec
        .prompts
        .iter()
        .map(|(name, p)| {
            let order = run_order(spec, &p.as_tool());
            used.extend(order.iter().cloned());
            PromptPlan {
                name: name.clone(),
                title: p.title.clone(),
                description: p.description.clone(),
                arguments: p
                    .arguments
                    .iter()
                    .map(|(n, a)| PromptArgPlan {
                        name: n.clone(),
                        title: a.title.clone(),
                        description: a.description.clone(),
                        required: a.required,
                        complete: a.complete.clone(),
                    })
                    .collect(),
                messages: p.messages.as_ref().map(|ms| {
                    ms.iter()
                        .map(|m| match (&m.text, &m.image, &m.resource) {
                            (_, Some(image), _) => MessagePlan::Image {
                                role: m.role,
                                image: image.clone(),
                            },
                            (_, _, Some(uri)) => MessagePlan::Resource {
                                role: m.role,
                                uri: uri.clone(),
                            },
                            (text, _, _) => MessagePlan::Text {
                                role: m.role,
                                text: text.clone().unwrap_or_default(),
                            },
                        })
                        .collect()
                }),
                bindings: p
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
    let orders: Vec<&Vec<String>> = tools
        .iter()
        .map(|t| &t.run_order)
        .chain(prompts.iter().map(|p| &p.run_order))
        .collect();
    let all_consumers = consumers(spec);
    let resolvers = spec
        .resolvers
        .iter()
        .map(|(name, r)| {
            // The tools and prompts that need this resolver, from the run orders computed
            // above (once per consumer: recomputing them per resolver made planning quadratic).
            let consumers: Vec<&crate::spec::Tool> = all_consumers
                .iter()
                .zip(&orders)
                .filter(|(_, order)| order.iter().any(|n| n == name))
                .map(|(c, _)| c.tool.as_ref())
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
        capabilities: CapabilitiesPlan {
            prompts: !prompts.is_empty(),
            resources: !spec.resources.is_empty() || !spec.resource_templates.is_empty(),
            completions: spec
                .prompts
                .values()
                .any(|p| p.arguments.values().any(|a| !a.complete.is_empty()))
                || spec
                    .resource_templates
                    .values()
                    .any(|t| !t.complete.is_empty()),
            logging: spec.logging,
            notifications: spec.notifications,
        },
        prompts,
        resources: spec
            .resources
            .iter()
            .map(|(uri, r)| ResourcePlan {
                uri: uri.clone(),
                name: r.name.clone(),
                title: r.title.clone(),
                description: r.description.clone(),
                mime_type: r.mime_type.clone(),
                content: match (&r.text, &r.blob) {
                    (Some(t), _) => ContentPlan::Text(t.clone()),
                    (None, Some(b)) => ContentPlan::Blob(b.clone()),
                    (None, None) => ContentPlan::Code,
                },
            })
            .collect(),
        templates: spec
            .resource_templates
            .iter()
            .map(|(uri, t)| TemplatePlan {
                uri_template: uri.clone(),
                name: t.name.clone(),
                title: t.title.clone(),
                description: t.description.clone(),
                mime_type: t.mime_type.clone(),
                variables: template_variables(uri),
                complete: t.complete.clone(),
                exempt_from_path_checks: t.exempt_from_path_checks.clone(),
            })
            .collect(),
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

/// `schema` with every `$defs` type of the spec it references (transitively) copied into its own
/// `$defs`, so the schema stands alone on the wire. Only the types it needs are copied, in spec
/// order; `$defs` the schema already carries are kept, and a name it defines itself is its own
/// (a `$ref` in the document resolves to it).
pub fn self_contained(defs: &IndexMap<String, Value>, schema: &Value) -> Value {
    let own: Map<String, Value> = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut needed: Vec<String> = Vec::new();
    let mut queue: Vec<&Value> = vec![schema];
    while let Some(v) = queue.pop() {
        let mut refs = Vec::new();
        collect_refs(v, &mut refs);
        for name in refs {
            if !needed.contains(&name)
                && !own.contains_key(&name)
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
    // The schema's own first, then the spec's in spec order, so the output is stable.
    let mut all = own;
    all.extend(
        defs.iter()
            .filter(|(n, _)| needed.contains(n))
            .map(|(n, s)| (n.clone(), s.clone())),
    );
    if let Value::Object(m) = &mut out {
        m.insert("$defs".into(), Value::Object(all));
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
