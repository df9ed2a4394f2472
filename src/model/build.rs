//! Building the [`Model`] of a validated spec: names resolved to ids, run orders computed once,
//! the advertised documents decided ([`super::wire`]).

use std::collections::HashMap;

use serde_json::{Value, json};

use super::wire;
use super::{
    ArgTypeView, Auth, Binding, Chain, Consumer, Content, Message, Model, Param, Prompt, PromptArg,
    PromptId, Resolver, ResolverId, Resource, ResourceId, Template, TemplateId, Tool, ToolId, asks,
};
use crate::graph::{ArgType, arg_type, input_properties, order_from};
use crate::spec::{self, ParamSource, SourceKeyword, Spec, template_variables};

/// The model of a spec that validated (every name resolves, every resolver graph is acyclic).
pub fn build(spec: &Spec) -> Model {
    let ids: HashMap<&str, ResolverId> = spec
        .resolvers
        .keys()
        .enumerate()
        .map(|(i, n)| (n.as_str(), ResolverId::at(i)))
        .collect();
    let tools: Vec<Tool> = (spec.tools.iter().enumerate())
        .map(|(i, (name, t))| {
            let chain = chain(spec, &t.resolve, &ids);
            tool(spec, ToolId::at(i), name, t, chain)
        })
        .collect();
    let prompts: Vec<Prompt> = (spec.prompts.iter().enumerate())
        .map(|(i, (name, p))| prompt(PromptId::at(i), name, p, chain(spec, &p.resolve, &ids)))
        .collect();
    let resolvers = spec
        .resolvers
        .iter()
        .enumerate()
        .map(|(i, (name, r))| resolver(spec, &tools, &prompts, ResolverId::at(i), name, r, &ids))
        .collect();
    let mut model = Model {
        name: spec.name.clone(),
        version: spec.version.clone(),
        title: spec.title.clone(),
        instructions: spec.instructions.clone(),
        defs: spec.defs.clone(),
        resolvers,
        tools,
        prompts,
        resources: (spec.resources.iter().enumerate())
            .map(|(i, r)| resource(ResourceId::at(i), r))
            .collect(),
        templates: (spec.resource_templates.iter().enumerate())
            .map(|(i, t)| template(TemplateId::at(i), t))
            .collect(),
        forms: Vec::new(),
        capabilities: wire::capabilities(spec),
        auth: spec.auth.as_ref().map(|a| auth(spec, a)),
        limits: spec.limits.unwrap_or_default(),
    };
    model.forms = wire::forms(&model);
    model
}

/// The bindings of a tool or prompt, and every resolver they need, each once, in a valid run
/// order (every resolver after those it takes values from).
fn chain(
    spec: &Spec,
    resolve: &indexmap::IndexMap<String, spec::Binding>,
    ids: &HashMap<&str, ResolverId>,
) -> Chain {
    let bindings: Vec<Binding> = resolve
        .iter()
        .map(|(p, b)| Binding {
            param: p.clone(),
            resolver: ids[b.resolver()],
            outcome: b.outcome(),
        })
        .collect();
    // The one run-order rule (`graph`), over names resolved to ids.
    let run_order = order_from(spec, resolve.values().map(spec::Binding::resolver))
        .iter()
        .map(|name| ids[name.as_str()])
        .collect();
    Chain {
        bindings,
        run_order,
    }
}

fn tool(spec: &Spec, id: ToolId, name: &str, t: &spec::Tool, chain: Chain) -> Tool {
    let input = t
        .input
        .clone()
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    let output = t.output.as_ref().map(|schema| {
        let wrapped = !wire::is_object_schema(&spec.defs, schema);
        super::Output {
            schema: schema.clone(),
            wrapped,
            output_schema: wire::advertised_output(&spec.defs, schema, wrapped),
        }
    });
    Tool {
        id,
        name: name.to_string(),
        title: t.title.clone(),
        description: t.description.clone(),
        annotations: t.annotations.clone(),
        input_schema: wire::advertised_input(&spec.defs, &input),
        args: input_properties(t),
        output,
        scopes: once_each(&t.scopes),
        timeout_ms: t.timeout_ms,
        max_concurrency: t.max_concurrency,
        chain,
    }
}

fn prompt(id: PromptId, name: &str, p: &spec::Prompt, chain: Chain) -> Prompt {
    Prompt {
        id,
        name: name.to_string(),
        title: p.title.clone(),
        description: p.description.clone(),
        arguments: p
            .arguments
            .iter()
            .map(|(n, a)| PromptArg {
                name: n.clone(),
                title: a.title.clone(),
                description: a.description.clone(),
                required: a.required,
                complete: a.complete.clone(),
            })
            .collect(),
        messages: p
            .messages
            .as_ref()
            .map(|ms| ms.iter().map(message).collect()),
        scopes: once_each(&p.scopes),
        chain,
    }
}

fn message(m: &spec::PromptMessage) -> Message {
    match (&m.text, &m.image, &m.resource) {
        (_, Some(image), _) => Message::Image {
            role: m.role,
            image: image.clone(),
        },
        (_, _, Some(uri)) => Message::Resource {
            role: m.role,
            uri: uri.clone(),
        },
        (text, _, _) => Message::Text {
            role: m.role,
            text: text.clone().unwrap_or_default(),
        },
    }
}

/// A resolver's parameters, with the type of each `"arg"` one left for [`resolver`] to decide.
fn resolver_params(r: &spec::Resolver, ids: &HashMap<&str, ResolverId>) -> Vec<Param> {
    r.params
        .iter()
        .map(|(p, source)| match source {
            ParamSource::Keyword(SourceKeyword::Arg) => Param::Arg {
                name: p.clone(),
                ty: ArgTypeView::Schema(Value::Bool(true)),
                always: false,
            },
            ParamSource::Keyword(SourceKeyword::Context) => Param::Context { name: p.clone() },
            ParamSource::Keyword(SourceKeyword::Principal) => Param::Principal { name: p.clone() },
            ParamSource::Resolver(rs) => Param::Resolver {
                name: p.clone(),
                resolver: ids[rs.resolver.as_str()],
            },
        })
        .collect()
}

fn resolver(
    spec: &Spec,
    tools: &[Tool],
    prompts: &[Prompt],
    id: ResolverId,
    name: &str,
    r: &spec::Resolver,
    ids: &HashMap<&str, ResolverId>,
) -> Resolver {
    let consumers: Vec<Consumer> = (tools.iter().enumerate())
        .filter(|(_, t)| t.chain.run_order.contains(&id))
        .map(|(i, _)| Consumer::Tool(ToolId::at(i)))
        .chain(
            (prompts.iter().enumerate())
                .filter(|(_, p)| p.chain.run_order.contains(&id))
                .map(|(i, _)| Consumer::Prompt(PromptId::at(i))),
        )
        .collect();
    let mut params = resolver_params(r, ids);
    for p in &mut params {
        if let Param::Arg { name, ty, always } = p {
            // The same in every consumer (validated): the first one that has the argument.
            let (t, a) = consumers
                .iter()
                .find_map(|c| consumer_arg(spec, *c, name))
                .unwrap_or((ArgType::Schema(Value::Bool(true)), false));
            (*ty, *always) = (t.into(), a);
        }
    }
    Resolver {
        id,
        name: name.to_string(),
        description: r.description.clone(),
        params,
        returns: r.returns.clone(),
        asks: r.asks.map(asks::kind),
        used: !consumers.is_empty(),
        consumers,
    }
}

/// The type of argument `name` of a consumer, and whether it always has a value.
fn consumer_arg(spec: &Spec, c: Consumer, name: &str) -> Option<(ArgType, bool)> {
    match c {
        Consumer::Tool(t) => arg_type(&spec.tools[t.index()], name),
        // A prompt's arguments are strings, present when required.
        Consumer::Prompt(p) => {
            let (_, prompt) = spec.prompts.get_index(p.index())?;
            let a = prompt.arguments.get(name)?;
            Some((ArgType::Primitive("string".into()), a.required))
        }
    }
}

fn resource(id: ResourceId, (uri, r): (&String, &spec::Resource)) -> Resource {
    Resource {
        id,
        uri: uri.clone(),
        name: r.name.clone(),
        title: r.title.clone(),
        description: r.description.clone(),
        mime_type: r.mime_type.clone(),
        content: match (&r.text, &r.blob) {
            (Some(t), _) => Content::Text(t.clone()),
            (None, Some(b)) => Content::Blob(b.clone()),
            (None, None) => Content::Code,
        },
        scopes: once_each(&r.scopes),
    }
}

fn template(id: TemplateId, (uri, t): (&String, &spec::ResourceTemplate)) -> Template {
    Template {
        id,
        uri_template: uri.clone(),
        name: t.name.clone(),
        title: t.title.clone(),
        description: t.description.clone(),
        mime_type: t.mime_type.clone(),
        variables: template_variables(uri),
        complete: t.complete.clone(),
        exempt_from_path_checks: t.exempt_from_path_checks.clone(),
        scopes: once_each(&t.scopes),
    }
}

/// The spec's `auth` as the model keeps it: `scopesSupported` defaulting to every scope the spec
/// names, sorted.
fn auth(spec: &Spec, a: &spec::Auth) -> Auth {
    let scopes_supported = match &a.scopes_supported {
        Some(listed) => once_each(listed),
        None => {
            let named: std::collections::BTreeSet<&String> =
                spec::scopes_named(spec).map(|(_, scope)| scope).collect();
            named.into_iter().cloned().collect()
        }
    };
    Auth {
        required: a.required,
        scopes: once_each(&a.scopes),
        scopes_supported,
        list_visible_only: a.list_visible_only,
    }
}

/// `scopes` with each scope once, first occurrences in order.
fn once_each(scopes: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(scopes.len());
    for s in scopes {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}
