//! Every generation-time check of spec-v1.md beyond the format's structure: names, bindings,
//! resolver sources, cycles, `"arg"` agreement between consuming tools, schemas and elicitation
//! forms. All findings of a run are collected; none stops the others.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use crate::diagnostics::{Diagnostic, Subject};
use crate::names::{self, closest};
use crate::pointer::Pointer;
use crate::source::SourceFile;
use crate::spec::{Asks, Binding, LoadedSpec, ParamSource, Resolver, SourceKeyword, Spec, Tool};

/// Tool names MCP clients accept (and that fit Claude Desktop's limit).
pub const TOOL_NAME_PATTERN: &str = "^[A-Za-z0-9_.-]{1,64}$";

/// Runs every semantic check; returns errors and warnings in the order found.
pub fn validate(loaded: &LoadedSpec) -> Vec<Diagnostic> {
    let mut v = Validator {
        spec: &loaded.spec,
        src: &loaded.source,
        out: Vec::new(),
    };
    v.names();
    v.bindings();
    v.resolvers();
    v.cycles();
    v.arg_sources();
    v.schemas();
    v.warnings();
    v.out
}

struct Validator<'a> {
    spec: &'a Spec,
    src: &'a SourceFile,
    out: Vec<Diagnostic>,
}

fn tool_ptr(tool: &str) -> Pointer {
    Pointer::from_segments(["tools", tool])
}

fn resolver_ptr(r: &str) -> Pointer {
    Pointer::from_segments(["resolvers", r])
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
    let prop = input.get("properties")?.get(name)?;
    let always = input
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|x| x == name))
        || prop.get("default").is_some();
    let ty = if let Some(r) = prop.get("$ref").and_then(Value::as_str) {
        ArgType::Ref(r.trim_start_matches("#/$defs/").to_string())
    } else {
        match prop.get("type").and_then(Value::as_str) {
            Some(t @ ("string" | "integer" | "number" | "boolean")) => ArgType::Primitive(t.into()),
            _ => ArgType::Schema(strip_annotations(prop)),
        }
    };
    Some((ty, always))
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

/// The resolvers a tool needs, directly or through other resolvers, each once, in a valid run
/// order (every resolver after the resolvers it takes values from). Unknown resolvers and
/// cycles are skipped (they are reported elsewhere).
pub fn run_order(spec: &Spec, tool: &Tool) -> Vec<String> {
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
    for binding in tool.resolve.values() {
        visit(spec, binding.resolver(), &mut done, &mut active);
    }
    done
}

/// The resolvers a resolver takes values from, in parameter order.
pub fn resolver_deps(r: &Resolver) -> impl Iterator<Item = &str> {
    r.params.values().filter_map(|s| match s {
        ParamSource::Resolver(rs) => Some(rs.resolver.as_str()),
        ParamSource::Keyword(_) => None,
    })
}

/// Why a name cannot become a Rust identifier, if it cannot.
fn ident_problem(snake: &str) -> Option<&'static str> {
    let first = snake.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return Some("it does not start with a letter");
    }
    if !snake.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Some("it has characters other than letters, digits and `_`");
    }
    if matches!(snake, "self" | "super" | "crate" | "_") {
        return Some("it is a Rust keyword that cannot be a raw identifier");
    }
    None
}

impl Validator<'_> {
    fn err(&mut self, code: &'static str, msg: String, at: Pointer) -> &mut Diagnostic {
        let span = self.src.span_of(&at);
        self.out.push(Diagnostic::error(code, msg).at(at, span));
        self.out.last_mut().expect("just pushed")
    }

    fn err_key(&mut self, code: &'static str, msg: String, at: Pointer) -> &mut Diagnostic {
        let span = self.src.key_span_of(&at);
        self.out.push(Diagnostic::error(code, msg).at(at, span));
        self.out.last_mut().expect("just pushed")
    }

    fn names(&mut self) {
        let pattern = regex_lite_tool_name;
        let mut tool_idents: HashMap<String, String> = HashMap::new();
        let mut type_names: HashMap<String, String> = HashMap::new();
        for name in self.spec.defs.keys() {
            type_names.insert(names::type_name(name), format!("type `{name}` in `$defs`"));
        }
        for (name, tool) in &self.spec.tools {
            let at = tool_ptr(name);
            if !pattern(name) {
                self.err_key(
                    "invalid-tool-name",
                    format!("tool name `{name}` must match {TOOL_NAME_PATTERN} (1 to 64 letters, digits, `_`, `.` or `-`)"),
                    at.clone(),
                )
                .subjects
                .push(Subject::Tool(name.clone()));
                continue;
            }
            let ident = names::fn_name(name);
            if let Some(why) = ident_problem(&ident) {
                self.err_key(
                    "invalid-identifier",
                    format!("tool name `{name}` cannot become a Rust identifier: {why}"),
                    at.clone(),
                )
                .subjects
                .push(Subject::Tool(name.clone()));
                continue;
            }
            if let Some(other) = tool_idents.insert(ident.clone(), name.clone()) {
                self.err_key(
                    "name-collision",
                    format!(
                        "tools `{other}` and `{name}` both become the Rust identifier `{ident}`"
                    ),
                    at.clone(),
                )
                .subjects
                .extend([Subject::Tool(other), Subject::Tool(name.clone())]);
            }
            let args_type = names::args_type_name(name);
            if let Some(other) =
                type_names.insert(args_type.clone(), format!("the arguments of tool `{name}`"))
            {
                self.err_key(
                    "name-collision",
                    format!("{other} and the arguments of tool `{name}` both become the Rust type `{args_type}`"),
                    at.clone(),
                )
                .subjects
                .push(Subject::Tool(name.clone()));
            }
            for prop in input_properties(tool) {
                if prop.starts_with('_') {
                    self.err_key(
                        "underscore-parameter",
                        format!("parameter `{prop}` of tool `{name}` cannot start with `_`"),
                        at.child("input").child("properties").child(&prop),
                    )
                    .subjects
                    .extend([
                        Subject::Tool(name.clone()),
                        Subject::Parameter(prop.clone()),
                    ]);
                }
            }
        }
        let mut resolver_idents: HashMap<String, String> = HashMap::new();
        for name in self.spec.resolvers.keys() {
            let at = resolver_ptr(name);
            let ident = names::fn_name(name);
            if let Some(why) = ident_problem(&ident) {
                self.err_key(
                    "invalid-identifier",
                    format!("resolver name `{name}` cannot become a Rust identifier: {why}"),
                    at,
                )
                .subjects
                .push(Subject::Resolver(name.clone()));
                continue;
            }
            if let Some(other) = resolver_idents.insert(ident.clone(), name.clone()) {
                self.err_key(
                    "name-collision",
                    format!(
                        "resolvers `{other}` and `{name}` both become the Rust identifier `{ident}`"
                    ),
                    at,
                )
                .subjects
                .extend([Subject::Resolver(other), Subject::Resolver(name.clone())]);
            }
        }
    }

    /// Checks a parameter name of a tool's `resolve` or a resolver's `params`.
    fn param_name(
        &mut self,
        owner: Subject,
        owner_desc: &str,
        param: &str,
        at: Pointer,
        seen: &mut HashMap<String, String>,
    ) {
        let subjects = [owner, Subject::Parameter(param.to_string())];
        if param.starts_with('_') {
            self.err_key(
                "underscore-parameter",
                format!("parameter `{param}` of {owner_desc} cannot start with `_`"),
                at,
            )
            .subjects
            .extend(subjects);
            return;
        }
        let ident = names::fn_name(param);
        if let Some(why) = ident_problem(&ident) {
            self.err_key(
                "invalid-identifier",
                format!(
                    "parameter `{param}` of {owner_desc} cannot become a Rust identifier: {why}"
                ),
                at,
            )
            .subjects
            .extend(subjects);
            return;
        }
        if matches!(ident.as_str(), "ctx" | "args") {
            self.err_key(
                "reserved-parameter",
                format!("parameter `{param}` of {owner_desc} uses a name the generated code reserves (`ctx` and `args` are taken)"),
                at,
            )
            .subjects
            .extend(subjects);
            return;
        }
        if let Some(other) = seen.insert(ident.clone(), param.to_string()) {
            self.err_key(
                "name-collision",
                format!("parameters `{other}` and `{param}` of {owner_desc} both become the Rust identifier `{ident}`"),
                at,
            )
            .subjects
            .extend(subjects);
        }
    }

    fn bindings(&mut self) {
        let resolver_names: Vec<&str> = self.spec.resolvers.keys().map(String::as_str).collect();
        for (tname, tool) in &self.spec.tools {
            let props = input_properties(tool);
            let mut seen = HashMap::new();
            for (param, binding) in &tool.resolve {
                let at = tool_ptr(tname).child("resolve").child(param);
                let subjects = vec![
                    Subject::Tool(tname.clone()),
                    Subject::Parameter(param.clone()),
                ];
                self.param_name(
                    Subject::Tool(tname.clone()),
                    &format!("tool `{tname}`"),
                    param,
                    at.clone(),
                    &mut seen,
                );
                if props.iter().any(|p| p == param) {
                    self.err_key(
                        "resolved-is-input",
                        format!("parameter `{param}` of tool `{tname}` is resolved and also an input property; a resolved parameter never comes from the model, so remove it from `input`"),
                        at.clone(),
                    )
                    .subjects
                    .extend(subjects.clone());
                }
                let rname = binding.resolver();
                let value_at = match binding {
                    Binding::Name(_) => at.clone(),
                    Binding::Detailed(_) => at.child("resolver"),
                };
                match self.spec.resolvers.get(rname) {
                    None => {
                        let help = closest(rname, resolver_names.iter().copied());
                        let d = self.err(
                            "unknown-resolver",
                            format!("parameter `{param}` of tool `{tname}` is bound to `{rname}`, which is not a resolver of this spec"),
                            value_at,
                        );
                        d.subjects.extend(subjects.clone());
                        if let Some(h) = help {
                            d.help = Some(format!("did you mean `{h}`?"));
                        }
                    }
                    Some(r) => {
                        if binding.outcome() && r.asks != Some(Asks::Elicit) {
                            let what = r.asks.map_or("does not ask anything".to_string(), |a| {
                                format!("asks `{}`", a.as_str())
                            });
                            self.err(
                                "outcome-without-elicit",
                                format!("parameter `{param}` of tool `{tname}` takes the elicitation outcome of resolver `{rname}`, which {what}; `outcome: true` needs a resolver with `\"asks\": \"elicit\"`"),
                                at.child("outcome"),
                            )
                            .subjects
                            .extend(subjects.into_iter().chain([Subject::Resolver(rname.to_string())]));
                        }
                    }
                }
            }
        }
    }

    fn resolvers(&mut self) {
        let resolver_names: Vec<&str> = self.spec.resolvers.keys().map(String::as_str).collect();
        for (rname, r) in &self.spec.resolvers {
            let at = resolver_ptr(rname);
            let mut seen = HashMap::new();
            for (param, source) in &r.params {
                let pat = at.child("params").child(param);
                self.param_name(
                    Subject::Resolver(rname.clone()),
                    &format!("resolver `{rname}`"),
                    param,
                    pat.clone(),
                    &mut seen,
                );
                if let ParamSource::Resolver(rs) = source
                    && !self.spec.resolvers.contains_key(&rs.resolver)
                {
                    let help = closest(&rs.resolver, resolver_names.iter().copied());
                    let d = self.err(
                        "unknown-resolver",
                        format!("parameter `{param}` of resolver `{rname}` takes the value of `{}`, which is not a resolver of this spec", rs.resolver),
                        pat.child("resolver"),
                    );
                    d.subjects.extend([
                        Subject::Resolver(rname.clone()),
                        Subject::Parameter(param.clone()),
                    ]);
                    if let Some(h) = help {
                        d.help = Some(format!("did you mean `{h}`?"));
                    }
                }
            }
            match (r.asks, &r.returns) {
                (None | Some(Asks::Elicit), None) => {
                    let what = if r.asks.is_some() {
                        "asks `elicit`, so it needs the form's schema"
                    } else {
                        "does not ask, so it produces a value"
                    };
                    self.err(
                        "missing-returns",
                        format!("resolver `{rname}` lacks `returns`: it {what}"),
                        at.clone(),
                    )
                    .subjects
                    .push(Subject::Resolver(rname.clone()));
                }
                (Some(a @ (Asks::Sample | Asks::Roots)), Some(_)) => {
                    let value = if a == Asks::Sample {
                        "CreateMessageResult"
                    } else {
                        "ListRootsResult"
                    };
                    self.err(
                        "unused-returns",
                        format!("resolver `{rname}` asks `{}`, so its value is the client's `{value}`; remove `returns`, which would be ignored", a.as_str()),
                        at.child("returns"),
                    )
                    .subjects
                    .push(Subject::Resolver(rname.clone()));
                }
                _ => {}
            }
            if r.asks == Some(Asks::Elicit)
                && let Some(returns) = &r.returns
            {
                self.elicit_form(rname, returns, at.child("returns"));
            }
        }
    }

    /// Follows one `#/$defs/Name` reference.
    fn deref<'s>(&'s self, schema: &'s Value) -> Option<(&'s Value, Option<String>)> {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.strip_prefix("#/$defs/")?;
                self.spec
                    .defs
                    .get(name)
                    .map(|s| (s, Some(name.to_string())))
            }
            None => Some((schema, None)),
        }
    }

    fn elicit_form(&mut self, rname: &str, returns: &Value, at: Pointer) {
        let Some((form, def_name)) = self.deref(returns) else {
            return; // an unresolvable $ref is reported by `schemas`
        };
        let form_at = match &def_name {
            Some(n) => Pointer::from_segments(["$defs", n]),
            None => at.clone(),
        };
        let subjects = vec![Subject::Resolver(rname.to_string())];
        if form.get("type").and_then(Value::as_str) != Some("object")
            || form.get("properties").and_then(Value::as_object).is_none()
        {
            self.err(
                "elicit-not-object",
                format!("resolver `{rname}` asks `elicit`, so `returns` must be a flat object of primitive fields (the form), but it is {}", compact(form)),
                at,
            )
            .subjects
            .extend(subjects);
            return;
        }
        let props = form["properties"].as_object().cloned().unwrap_or_default();
        for (field, schema) in &props {
            if let Some(problem) = self.primitive_problem(schema) {
                let fat = form_at.child("properties").child(field);
                let d = self.err(
                    "elicit-non-primitive",
                    format!("elicitation form of resolver `{rname}`: field `{field}` is {problem}, which is not a primitive (string, number, integer, boolean or enum)"),
                    fat,
                );
                d.subjects.extend(subjects.iter().cloned());
                d.notes
                    .push(format!("the field's schema: {}", compact(schema)));
                if def_name.is_some() {
                    d.notes.push(format!(
                        "the form is `returns` of resolver `{rname}` at {at}"
                    ));
                }
            }
        }
    }

    /// Why a form field's schema is not a `PrimitiveSchemaDefinition`, if it is not.
    fn primitive_problem(&self, schema: &Value) -> Option<String> {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return match self.deref(schema) {
                Some((target, _))
                    if target.get("type").and_then(Value::as_str) == Some("object") =>
                {
                    Some(format!("a reference to an object (`{r}`)"))
                }
                Some((target, _)) => self.primitive_problem(target),
                None => None,
            };
        }
        for k in ["anyOf", "allOf", "not", "if"] {
            if schema.get(k).is_some() {
                return Some(format!("a union or combination (`{k}`)"));
            }
        }
        match schema.get("type") {
            Some(Value::String(t)) => match t.as_str() {
                "string" | "number" | "integer" | "boolean" => {
                    if let Some(one) = schema.get("oneOf") {
                        let titled = one
                            .as_array()
                            .is_some_and(|a| a.iter().all(|o| o.get("const").is_some()));
                        return (!titled).then(|| "a union (`oneOf` of non-constants)".to_string());
                    }
                    None
                }
                "object" => Some("a nested object".into()),
                "array" => {
                    let items = schema.get("items");
                    let enum_items = items.is_some_and(|i| {
                        i.get("enum").is_some()
                            || i.get("anyOf")
                                .and_then(Value::as_array)
                                .is_some_and(|a| a.iter().all(|o| o.get("const").is_some()))
                    });
                    (!enum_items).then(|| "an array of non-enum items".to_string())
                }
                other => Some(format!("of type `{other}`")),
            },
            Some(Value::Array(_)) => Some("a union of types".into()),
            Some(_) => Some("of an invalid type".into()),
            None if schema.get("enum").is_some() => None,
            None if schema.get("oneOf").is_some() => Some("a union (`oneOf`)".into()),
            None => Some("untyped".into()),
        }
    }

    fn cycles(&mut self) {
        // Depth-first search over resolver -> resolver edges; every cycle is reported once,
        // starting from its first resolver in spec order.
        let names: Vec<&String> = self.spec.resolvers.keys().collect();
        let mut reported: HashSet<Vec<String>> = HashSet::new();
        let mut found = Vec::new();
        for start in &names {
            let mut stack = vec![(start.to_string(), 0usize)];
            let mut path: Vec<String> = vec![start.to_string()];
            let mut on_path: HashSet<String> = HashSet::from([start.to_string()]);
            let mut visited: HashSet<String> = HashSet::new();
            while let Some((node, i)) = stack.pop() {
                let deps: Vec<&str> = self
                    .spec
                    .resolvers
                    .get(&node)
                    .map(|r| resolver_deps(r).collect())
                    .unwrap_or_default();
                if i < deps.len() {
                    stack.push((node.clone(), i + 1));
                    let next = deps[i].to_string();
                    if !self.spec.resolvers.contains_key(&next) {
                        continue;
                    }
                    if on_path.contains(&next) {
                        let pos = path.iter().position(|p| *p == next).unwrap_or(0);
                        let cycle: Vec<String> = path[pos..].to_vec();
                        let mut key = cycle.clone();
                        let min = key
                            .iter()
                            .enumerate()
                            .min_by_key(|(_, n)| self.spec.resolvers.get_index_of(*n))
                            .map_or(0, |(i, _)| i);
                        key.rotate_left(min);
                        if reported.insert(key.clone()) {
                            found.push(key);
                        }
                    } else if visited.insert(next.clone()) {
                        on_path.insert(next.clone());
                        path.push(next.clone());
                        stack.push((next, 0));
                    }
                } else {
                    on_path.remove(&node);
                    path.pop();
                }
            }
        }
        for cycle in found {
            let first = &cycle[0];
            let second = cycle.get(1).unwrap_or(first);
            let param = self.spec.resolvers[first]
                .params
                .iter()
                .find(|(_, s)| matches!(s, ParamSource::Resolver(rs) if &rs.resolver == second))
                .map(|(p, _)| p.clone())
                .unwrap_or_default();
            let shown = cycle
                .iter()
                .chain(std::iter::once(first))
                .cloned()
                .collect::<Vec<_>>()
                .join(" -> ");
            self.err(
                "resolver-cycle",
                format!("resolvers form a cycle: {shown}"),
                resolver_ptr(first)
                    .child("params")
                    .child(&param)
                    .child("resolver"),
            )
            .subjects
            .extend(cycle.iter().map(|c| Subject::Resolver(c.clone())));
        }
    }

    fn arg_sources(&mut self) {
        // (resolver index, param index) -> every consuming tool's (name, type, always)
        type Uses = Vec<(String, ArgType, bool)>;
        let mut seen: BTreeMap<(usize, usize), Uses> = BTreeMap::new();
        for (tname, tool) in &self.spec.tools {
            let order = run_order(self.spec, tool);
            for rname in &order {
                let (ri, _, r) = self
                    .spec
                    .resolvers
                    .get_full(rname)
                    .expect("run_order yields known resolvers");
                for (pi, (param, source)) in r.params.iter().enumerate() {
                    if source != &ParamSource::Keyword(SourceKeyword::Arg) {
                        continue;
                    }
                    match arg_type(tool, param) {
                        Some((ty, always)) => {
                            seen.entry((ri, pi))
                                .or_default()
                                .push((tname.clone(), ty, always))
                        }
                        None => {
                            let via = via_text(self.spec, tool, rname);
                            self.err(
                                "missing-arg",
                                format!("resolver `{rname}` takes `{param}` from the tool's arguments, but tool `{tname}`{via} has no argument `{param}`"),
                                resolver_ptr(rname).child("params").child(param),
                            )
                            .subjects
                            .extend([Subject::Resolver(rname.clone()), Subject::Parameter(param.clone()), Subject::Tool(tname.clone())]);
                        }
                    }
                }
            }
        }
        for ((ri, pi), uses) in seen {
            let (rname, r) = self
                .spec
                .resolvers
                .get_index(ri)
                .expect("index from the map");
            let (param, _) = r.params.get_index(pi).expect("index from the map");
            let (t0, ty0, al0) = &uses[0];
            for (t, ty, al) in &uses[1..] {
                if ty != ty0 || al != al0 {
                    let show = |ty: &ArgType, al: bool| {
                        if al {
                            ty.to_string()
                        } else {
                            format!("optional {ty}")
                        }
                    };
                    self.err(
                        "arg-type-mismatch",
                        format!(
                            "resolver `{rname}` takes `{param}` from the tool's arguments, but tools `{t0}` and `{t}` type it differently: {} and {}",
                            show(ty0, *al0),
                            show(ty, *al)
                        ),
                        resolver_ptr(rname).child("params").child(param),
                    )
                    .subjects
                    .extend([Subject::Resolver(rname.clone()), Subject::Parameter(param.clone()), Subject::Tool(t0.clone()), Subject::Tool(t.clone())]);
                    break;
                }
            }
        }
    }

    fn schemas(&mut self) {
        let mut all: Vec<(Pointer, &Value)> = Vec::new();
        for (name, s) in &self.spec.defs {
            all.push((Pointer::from_segments(["$defs", name]), s));
        }
        for (name, t) in &self.spec.tools {
            if let Some(input) = &t.input {
                let at = tool_ptr(name).child("input");
                if input.get("type").and_then(Value::as_str) != Some("object") {
                    self.err(
                        "input-not-object",
                        format!("the input schema of tool `{name}` must have `\"type\": \"object\"` at its root (the arguments are an object), but it is {}", compact(input)),
                        at.clone(),
                    )
                    .subjects
                    .push(Subject::Tool(name.clone()));
                }
                all.push((at, input));
            }
            if let Some(output) = &t.output {
                all.push((tool_ptr(name).child("output"), output));
            }
        }
        for (name, r) in &self.spec.resolvers {
            if let Some(returns) = &r.returns {
                all.push((resolver_ptr(name).child("returns"), returns));
            }
        }
        for (at, schema) in all {
            self.refs_in(schema, at);
        }
    }

    fn refs_in(&mut self, v: &Value, at: Pointer) {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    let cat = at.child(k);
                    if k == "$ref" {
                        match child.as_str() {
                            Some(r) => self.check_ref(r, cat),
                            None => {
                                self.err("invalid-ref", "`$ref` must be a string".into(), cat);
                            }
                        }
                    } else if k == "$defs" || k == "definitions" {
                        self.err(
                            "nested-defs",
                            format!("`{k}` inside a schema is not supported: declare shared types in the spec's top-level `$defs` and reference them as `#/$defs/<Name>`"),
                            cat.clone(),
                        );
                    } else if matches!(
                        k.as_str(),
                        "properties" | "patternProperties" | "dependentSchemas"
                    ) {
                        if let Value::Object(props) = child {
                            for (pk, pv) in props {
                                self.refs_in(pv, cat.child(pk));
                            }
                        }
                    } else if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                        self.refs_in(child, cat);
                    }
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    self.refs_in(child, at.child(&i.to_string()));
                }
            }
            _ => {}
        }
    }

    fn check_ref(&mut self, r: &str, at: Pointer) {
        let names: Vec<&str> = self.spec.defs.keys().map(String::as_str).collect();
        match r.strip_prefix("#/$defs/") {
            Some(name) if self.spec.defs.contains_key(name) => {}
            Some(name) if !name.contains('/') => {
                let help = closest(name, names.iter().copied());
                let d = self.err(
                    "unresolved-ref",
                    format!("`$ref` \"{r}\" does not resolve: `$defs` has no `{name}`"),
                    at,
                );
                if let Some(h) = help {
                    d.help = Some(format!("did you mean \"#/$defs/{h}\"?"));
                }
            }
            _ => {
                self.err(
                    "unsupported-ref",
                    format!("`$ref` \"{r}\" is not supported: references must name a type of the spec's `$defs`, as \"#/$defs/<Name>\""),
                    at,
                );
            }
        }
    }

    fn warnings(&mut self) {
        let used: HashSet<String> = self
            .spec
            .tools
            .values()
            .flat_map(|t| run_order(self.spec, t))
            .collect();
        for name in self.spec.resolvers.keys() {
            if !used.contains(name) {
                let at = resolver_ptr(name);
                let span = self.src.key_span_of(&at);
                self.out.push(
                    Diagnostic::warning(
                        "unused-resolver",
                        format!("resolver `{name}` is not used by any tool"),
                    )
                    .at(at, span)
                    .about(Subject::Resolver(name.clone())),
                );
            }
        }
        for (name, tool) in &self.spec.tools {
            if tool.annotations.is_some() && tool.title.is_none() {
                let at = tool_ptr(name).child("annotations");
                let span = self.src.key_span_of(&at);
                self.out.push(
                    Diagnostic::warning("annotations-without-title", format!("tool `{name}` has annotations but no `title`; clients show the title next to the hints"))
                        .at(at, span)
                        .about(Subject::Tool(name.clone())),
                );
            }
        }
    }
}

/// " (through `a`)" when the tool reaches `rname` only through other resolvers.
fn via_text(spec: &Spec, tool: &Tool, rname: &str) -> String {
    if tool.resolve.values().any(|b| b.resolver() == rname) {
        return String::new();
    }
    let direct: Vec<String> = tool
        .resolve
        .values()
        .map(|b| b.resolver().to_string())
        .filter(|d| {
            spec.resolvers.get(d).is_some_and(|_| {
                let t = Tool {
                    title: None,
                    description: String::new(),
                    annotations: None,
                    input: None,
                    output: None,
                    resolve: [("x".to_string(), Binding::Name(d.clone()))]
                        .into_iter()
                        .collect(),
                };
                run_order(spec, &t).iter().any(|n| n == rname)
            })
        })
        .collect();
    match direct.first() {
        Some(d) => format!(" (which uses it through `{d}`)"),
        None => String::new(),
    }
}

fn regex_lite_tool_name(name: &str) -> bool {
    let n = name.chars().count();
    (1..=64).contains(&n)
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(119).collect::<String>())
    } else {
        s
    }
}
