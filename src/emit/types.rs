//! Rust types for a spec's schemas, through typify: `$defs` types, one `<Tool>Args` struct per
//! tool, and the types of outputs and resolver values. typify reports some schemas it cannot
//! handle by panicking; every call is guarded so that such a schema becomes a located error.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use indexmap::IndexMap;
use proc_macro2::TokenStream;
use serde_json::Value;
use typify::{TypeSpace, TypeSpaceSettings};

use crate::names;
use crate::plan::collect_refs;
use crate::pointer::Pointer;
use crate::spec::Spec;

/// The generated types and how to name each schema's type in other code.
pub struct TypeSet {
    /// typify's type space, for looking at generated structs.
    pub space: TypeSpace,
    /// The `<Tool>Args` type of each tool.
    pub args_ids: IndexMap<String, typify::TypeId>,
    /// All type definitions (typify's output).
    pub tokens: TokenStream,
    /// `<Tool>Args` by tool name.
    pub args: IndexMap<String, TokenStream>,
    /// Output value type by tool name (tools with `output`).
    pub outputs: IndexMap<String, TokenStream>,
    /// Value type by resolver name (resolvers with `returns`).
    pub returns: IndexMap<String, TokenStream>,
    /// Type of each `$defs` entry, by name.
    pub defs: IndexMap<String, TokenStream>,
    /// `<Prompt>Arguments` by prompt name (prompts written in code that take arguments).
    pub prompt_args: IndexMap<String, TokenStream>,
    /// The `<Prompt>Arguments` type of each such prompt.
    pub prompt_args_ids: IndexMap<String, typify::TypeId>,
    /// `<Name>Vars` by resource template URI.
    pub vars: IndexMap<String, TokenStream>,
    /// The generated code needs the `regress` crate.
    pub uses_regress: bool,
    /// The generated code needs `chrono`.
    pub uses_chrono: bool,
    /// The generated code needs `uuid`.
    pub uses_uuid: bool,
}

/// A schema typify could not turn into Rust.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeError {
    /// The schema at fault.
    pub pointer: Pointer,
    /// What typify said.
    pub message: String,
    /// Another schema whose type took the name this one needs, for a name collision.
    pub taken_by: Option<Pointer>,
}

/// Serializes panics of typify calls, so the quiet panic hook is never swapped concurrently.
static GUARD: Mutex<()> = Mutex::new(());

/// Runs `f`, turning a panic into an error message, without printing the panic.
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let _lock = GUARD.lock().unwrap_or_else(|e| e.into_inner());
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = catch_unwind(AssertUnwindSafe(f));
    std::panic::set_hook(previous);
    match result {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown failure".into());
            Err(format!(
                "the type generator cannot handle it: {}",
                panic_reason(&msg)
            ))
        }
    }
}

/// The first line of a typify panic message, without its prefix and its debug dump.
fn panic_reason(msg: &str) -> String {
    let line = msg.lines().next().unwrap_or(msg);
    let line = line
        .trim_start_matches("not yet implemented: ")
        .trim_start_matches("not implemented: ");
    let cut = [": {", " Object(", " {", " Some("]
        .iter()
        .filter_map(|p| line.find(p))
        .min()
        .unwrap_or(line.len());
    line[..cut].trim().to_string()
}

fn to_schema(v: &Value) -> Result<schemars08::schema::Schema, String> {
    let mut v = v.clone();
    if let Value::Object(m) = &mut v {
        // The type's name comes from the spec, not from a schema title.
        m.remove("title");
        m.remove("$schema");
    }
    plain_date_times(&mut v);
    serde_json::from_value(v)
        .map_err(|e| format!("the type generator cannot read this schema: {e}"))
}

/// The Rust type of a `date-time` string: one that keeps the offset the caller wrote
/// (typify's own choice, `DateTime<Utc>`, converts every value to UTC and loses it). The value
/// is kept, not its spelling: serialized again, `Z` reads `+00:00`.
const DATE_TIME: &str = "::chrono::DateTime<::chrono::FixedOffset>";

fn settings() -> TypeSpaceSettings {
    let mut s = TypeSpaceSettings::default();
    s.with_struct_builder(false).with_type_mod("types");
    s.with_conversion(
        schemars08::schema::SchemaObject {
            instance_type: Some(schemars08::schema::InstanceType::String.into()),
            format: Some("date-time".into()),
            ..Default::default()
        },
        DATE_TIME,
        [
            typify::TypeSpaceImpl::Display,
            typify::TypeSpaceImpl::FromStr,
        ]
        .into_iter(),
    );
    s
}

/// Drops the length and pattern keywords of every `date-time` string schema in `v`, so that
/// typify's conversion to [`DATE_TIME`] (which matches the schema exactly, annotations aside)
/// applies to it too. typify gives a `date-time` a chrono type whatever these keywords say, and
/// the server's validator enforces them against the schema as advertised.
fn plain_date_times(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.get("format").and_then(Value::as_str) == Some("date-time") {
                for k in ["minLength", "maxLength", "pattern"] {
                    m.remove(k);
                }
            }
            for (k, child) in m.iter_mut() {
                if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                    plain_date_times(child);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(plain_date_times),
        _ => {}
    }
}

/// The `$defs` entries `name` needs (itself and everything it references), in spec order.
fn closure(spec: &Spec, name: &str) -> Vec<String> {
    let mut out = vec![name.to_string()];
    let mut i = 0;
    while i < out.len() {
        let mut refs = Vec::new();
        if let Some(s) = spec.defs.get(&out[i]) {
            collect_refs(s, &mut refs);
        }
        for r in refs {
            if !out.contains(&r) && spec.defs.contains_key(&r) {
                out.push(r);
            }
        }
        i += 1;
    }
    spec.defs
        .keys()
        .filter(|k| out.contains(k))
        .cloned()
        .collect()
}

fn add_defs(ts: &mut TypeSpace, spec: &Spec, names: &[String]) -> Result<(), String> {
    let defs = names
        .iter()
        .map(|n| Ok((n.clone(), to_schema(&spec.defs[n])?)))
        .collect::<Result<Vec<_>, String>>()?;
    guarded(|| {
        ts.add_ref_types(defs)
            .map_err(|e| format!("the type generator cannot handle it: {e}"))
    })
}

fn fresh(spec: &Spec) -> TypeSpace {
    let mut ts = TypeSpace::new(&settings());
    let all: Vec<String> = spec.defs.keys().cloned().collect();
    // Only called after the defs were added successfully once.
    let _ = add_defs(&mut ts, spec, &all);
    ts
}

/// Generates the types of a validated spec; every schema typify cannot handle is reported.
pub fn generate(spec: &Spec) -> Result<TypeSet, Vec<TypeError>> {
    let mut errors = Vec::new();
    let all: Vec<String> = spec.defs.keys().cloned().collect();
    let mut ts = TypeSpace::new(&settings());
    if let Err(e) = add_defs(&mut ts, spec, &all) {
        // Find the def to blame: the first whose own closure fails while its dependencies'
        // closures succeed.
        for name in &all {
            let mut probe = TypeSpace::new(&settings());
            if let Err(msg) = add_defs(&mut probe, spec, &closure(spec, name)) {
                let deps_ok = closure(spec, name).iter().filter(|d| *d != name).all(|d| {
                    let mut p = TypeSpace::new(&settings());
                    add_defs(&mut p, spec, &closure(spec, d)).is_ok()
                });
                if deps_ok {
                    errors.push(TypeError {
                        pointer: Pointer::from_segments(["$defs", name]),
                        message: msg,
                        taken_by: None,
                    });
                }
            }
        }
        if errors.is_empty() {
            errors.push(TypeError {
                pointer: Pointer::from_segments(["$defs"]),
                message: e,
                taken_by: None,
            });
        }
        return Err(errors);
    }

    let mut set = TypeSet {
        space: TypeSpace::new(&settings()),
        args_ids: IndexMap::new(),
        tokens: TokenStream::new(),
        args: IndexMap::new(),
        outputs: IndexMap::new(),
        returns: IndexMap::new(),
        defs: IndexMap::new(),
        prompt_args: IndexMap::new(),
        prompt_args_ids: IndexMap::new(),
        vars: IndexMap::new(),
        uses_regress: false,
        uses_chrono: false,
        uses_uuid: false,
    };
    let mut ids = Vec::new();
    // Type name -> the schema whose type has it (typify hands back the existing type when a
    // name is taken, so a second schema of that name would silently get the first's type).
    let mut taken: IndexMap<String, Pointer> = IndexMap::new();
    let mut collisions = Vec::new();
    let mut add =
        |ts: &mut TypeSpace, at: Pointer, schema: &Value, hint: String| -> Option<typify::TypeId> {
            let result = to_schema(schema).and_then(|s| {
                guarded(|| {
                    ts.add_type_with_name(&s, Some(hint))
                        .map_err(|e| e.to_string())
                })
            });
            match result {
                Ok(id) => Some(id),
                Err(message) => {
                    errors.push(TypeError {
                        pointer: at,
                        message,
                        taken_by: None,
                    });
                    // The type space may be half-updated: start again from the defs.
                    *ts = fresh(spec);
                    None
                }
            }
        };
    for (name, def) in &spec.defs {
        let r = serde_json::json!({"$ref": format!("#/$defs/{name}")});
        let _ = def;
        let at = Pointer::from_segments(["$defs", name]);
        if let Some(id) = add(&mut ts, at.clone(), &r, names::type_name(name)) {
            if let Ok(t) = ts.get_type(&id) {
                taken.entry(t.name()).or_insert(at);
            }
            ids.push((Kind::Def, name.clone(), id));
        }
    }
    for (name, tool) in &spec.tools {
        let input = tool
            .input
            .clone()
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
        let at = Pointer::from_segments(["tools", name, "input"]);
        let mut input = input;
        if let serde_json::Value::Object(m) = &mut input
            && !m.contains_key("description")
        {
            m.insert(
                "description".into(),
                format!("Arguments of `{name}`.").into(),
            );
        }
        if let Some(id) = add(&mut ts, at, &input, names::args_type_name(name)) {
            ids.push((Kind::Args, name.clone(), id));
        }
        if let Some(output) = &tool.output {
            let at = Pointer::from_segments(["tools", name, "output"]);
            let hint = format!("{}Output", names::type_name(name));
            if let Some(id) = add(&mut ts, at.clone(), output, hint.clone()) {
                if let Some(e) = name_taken(&ts, &id, output, &hint, at, &mut taken) {
                    collisions.push(e);
                }
                ids.push((Kind::Output, name.clone(), id));
            }
        }
    }
    for (name, r) in &spec.resolvers {
        if let Some(returns) = &r.returns {
            let at = Pointer::from_segments(["resolvers", name, "returns"]);
            let hint = format!("{}Value", names::type_name(name));
            if let Some(id) = add(&mut ts, at.clone(), returns, hint.clone()) {
                if let Some(e) = name_taken(&ts, &id, returns, &hint, at, &mut taken) {
                    collisions.push(e);
                }
                ids.push((Kind::Returns, name.clone(), id));
            }
        }
    }
    for (name, prompt) in &spec.prompts {
        if prompt.messages.is_some() || prompt.arguments.is_empty() {
            continue;
        }
        let mut input = prompt.as_tool().input.unwrap_or_default();
        input["description"] = format!("Arguments of prompt `{name}`.").into();
        let at = Pointer::from_segments(["prompts", name, "arguments"]);
        if let Some(id) = add(&mut ts, at, &input, names::prompt_args_type_name(name)) {
            ids.push((Kind::PromptArgs, name.clone(), id));
        }
    }
    for (uri, template) in &spec.resource_templates {
        let vars = crate::spec::template_variables(uri);
        let properties: serde_json::Map<String, Value> = vars
            .iter()
            .map(|v| (v.clone(), serde_json::json!({"type": "string"})))
            .collect();
        let schema = serde_json::json!({
            "description": format!("Variables of resource template `{uri}`."),
            "type": "object",
            "properties": properties,
            "required": vars,
        });
        let at = Pointer::from_segments(["resourceTemplates", uri]);
        if let Some(id) = add(&mut ts, at, &schema, names::vars_type_name(&template.name)) {
            ids.push((Kind::Vars, uri.clone(), id));
        }
    }
    errors.extend(collisions);
    if !errors.is_empty() {
        return Err(errors);
    }
    for (kind, name, id) in ids {
        let ident = match ts.get_type(&id) {
            Ok(t) => t.ident(),
            Err(e) => {
                errors.push(TypeError {
                    pointer: Pointer::root(),
                    message: e.to_string(),
                    taken_by: None,
                });
                continue;
            }
        };
        match kind {
            Kind::Def => set.defs.insert(name, ident),
            Kind::Args => {
                set.args_ids.insert(name.clone(), id);
                set.args.insert(name, ident)
            }
            Kind::Output => set.outputs.insert(name, ident),
            Kind::Returns => set.returns.insert(name, ident),
            Kind::PromptArgs => {
                set.prompt_args_ids.insert(name.clone(), id);
                set.prompt_args.insert(name, ident)
            }
            Kind::Vars => set.vars.insert(name, ident),
        };
    }
    match guarded(|| Ok(ts.to_stream())) {
        Ok(t) => set.tokens = t,
        Err(message) => errors.push(TypeError {
            pointer: Pointer::root(),
            message,
            taken_by: None,
        }),
    }
    set.uses_regress = ts.uses_regress();
    // typify does not count the types of conversions (`DATE_TIME`): look at what is named.
    set.uses_chrono = ts.uses_chrono() || set.names_crate("chrono");
    set.uses_uuid = ts.uses_uuid();
    set.space = ts;
    if errors.is_empty() {
        Ok(set)
    } else {
        Err(errors)
    }
}

/// A field of a generated argument struct, as other code reaches it.
#[derive(Debug, Clone)]
pub struct Field {
    /// The Rust field name.
    pub ident: String,
    /// The field is an `Option`.
    pub optional: bool,
    /// The field's type.
    pub ty: TokenStream,
    /// The type inside the `Option`, when optional.
    pub inner: TokenStream,
}

impl TypeSet {
    /// True when the type definitions or a type used elsewhere name a path of crate `name`.
    fn names_crate(&self, name: &str) -> bool {
        let path = format!(":: {name} ::");
        std::iter::once(&self.tokens)
            .chain(self.outputs.values())
            .chain(self.returns.values())
            .chain(self.defs.values())
            .chain(self.args.values())
            .chain(self.prompt_args.values())
            .chain(self.vars.values())
            .any(|t| t.to_string().contains(&path))
    }

    /// The field of `<Tool>Args` that holds JSON property `property`.
    pub fn arg_field(&self, tool: &str, property: &str) -> Option<Field> {
        self.field_of(self.args_ids.get(tool)?, property)
    }

    /// The field of `<Prompt>Arguments` that holds argument `argument`.
    pub fn prompt_arg_field(&self, prompt: &str, argument: &str) -> Option<Field> {
        self.field_of(self.prompt_args_ids.get(prompt)?, argument)
    }

    fn field_of(&self, id: &typify::TypeId, property: &str) -> Option<Field> {
        let ty = self.space.get_type(id).ok()?;
        let typify::TypeDetails::Struct(s) = ty.details() else {
            return None;
        };
        let ident = names::field_name(property);
        let (_, type_id) = s.properties().find(|(n, _)| *n == ident)?;
        let field_ty = self.space.get_type(&type_id).ok()?;
        let (optional, inner) = match field_ty.details() {
            typify::TypeDetails::Option(inner) => (true, self.space.get_type(&inner).ok()?.ident()),
            _ => (false, field_ty.ident()),
        };
        Some(Field {
            ident,
            optional,
            ty: field_ty.ident(),
            inner,
        })
    }
}

/// A name collision, when the type typify gave the schema at `at` (named after `hint`, not a
/// `$ref`) is a type another schema already has; otherwise records the type's name.
fn name_taken(
    ts: &TypeSpace,
    id: &typify::TypeId,
    schema: &Value,
    hint: &str,
    at: Pointer,
    taken: &mut IndexMap<String, Pointer>,
) -> Option<TypeError> {
    let name = ts.get_type(id).ok()?.name();
    if schema.get("$ref").is_some() {
        return None;
    }
    match taken.get(&name) {
        Some(other) if name == hint && *other != at => Some(TypeError {
            message: format!(
                "its type would be named `{hint}`, which is taken by {}",
                crate::spec::format::describe_place(other).0
            ),
            pointer: at,
            taken_by: Some(other.clone()),
        }),
        Some(_) => None,
        None => {
            taken.insert(name, at);
            None
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Def,
    Args,
    Output,
    Returns,
    PromptArgs,
    Vars,
}

#[cfg(test)]
mod tests {
    /// The generated types of a spec whose tool `t` has input `input`.
    fn types_of(input: serde_json::Value) -> String {
        let spec = serde_json::json!({
            "name": "T",
            "tools": {"t": {"description": "T.", "input": input}}
        });
        let checked = crate::check::check_str("spec.json", &spec.to_string())
            .unwrap_or_else(|r| panic!("{}", r.render_human()));
        assert!(checked.types.uses_chrono);
        checked.types.tokens.to_string()
    }

    #[test]
    fn a_date_time_keeps_its_offset_whatever_else_its_schema_says() {
        for at in [
            serde_json::json!({"type": "string", "format": "date-time"}),
            serde_json::json!({"type": "string", "format": "date-time", "description": "When."}),
            serde_json::json!({"type": "string", "format": "date-time", "maxLength": 40, "pattern": "^2"}),
            serde_json::json!({"type": ["string", "null"], "format": "date-time"}),
            serde_json::json!({"type": "array", "items": {"type": "string", "format": "date-time"}}),
        ] {
            let tokens = types_of(serde_json::json!({
                "type": "object",
                "properties": {"at": at},
                "required": ["at"]
            }));
            assert!(
                tokens.contains(":: chrono :: DateTime < :: chrono :: FixedOffset >"),
                "{at}: {tokens}"
            );
            assert!(!tokens.contains("Utc"), "{at}: {tokens}");
        }
    }
}
