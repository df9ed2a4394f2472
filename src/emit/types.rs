//! Rust types for a spec's schemas, through typify: `$defs` types, one `<Tool>Args` struct per
//! tool, and the types of outputs and resolver values. typify reports some schemas it cannot
//! handle by panicking; every call is guarded so that such a schema becomes a located error.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use indexmap::IndexMap;
use proc_macro2::TokenStream;
use quote::quote;
use serde_json::Value;
use typify::{TypeSpace, TypeSpaceSettings};

use crate::emit::fields::{self, FieldNames};
use crate::emit::typing::{self, Fallback};
use crate::model::{PromptId, ResolverId, TemplateId, ToolId};
use crate::names;
use crate::pointer::Pointer;
use crate::refs::collect_refs;
use crate::spec::Spec;

/// The generated types and the type of every slot: each vector is indexed like the model's
/// (spec order: [`ToolId`], [`ResolverId`], [`PromptId`], [`TemplateId`], `$defs` position).
pub struct TypeSet {
    /// typify's type space, for looking at generated types.
    pub space: TypeSpace,
    /// All type definitions (typify's output).
    pub tokens: TokenStream,
    /// `<Tool>Args`, per tool.
    args: Vec<Option<Slot>>,
    /// The output value type, per tool (tools with `output`).
    outputs: Vec<Option<Slot>>,
    /// The value type, per resolver (resolvers with `returns`).
    returns: Vec<Option<Slot>>,
    /// The type of each `$defs` entry, in order.
    defs: Vec<Option<Slot>>,
    /// `<Prompt>Arguments`, per prompt (prompts written in code).
    prompt_args: Vec<Option<Slot>>,
    /// `<Name>Vars`, per resource template.
    vars: Vec<Option<Slot>>,
    /// The generated code needs the `regress` crate.
    pub uses_regress: bool,
    /// The generated code needs `chrono`.
    pub uses_chrono: bool,
    /// The generated code needs `uuid`.
    pub uses_uuid: bool,
    /// Sub-schemas typed wider than written (warnings).
    pub fallbacks: Vec<Fallback>,
    /// JSON and Rust names of the fields of every generated struct.
    pub field_names: FieldNames,
}

/// How a function that does not own a value of a type receives it.
#[derive(Debug, Clone)]
pub enum Passing {
    /// A `String`, lent as `&str`.
    Str,
    /// A `Vec<T>` (typify's arrays and sets), lent as `&[T]`; the element type.
    Slice(TokenStream),
    /// Anything else, lent as `&T`.
    Ref,
}

/// The Rust type of one slot (a tool's arguments or output, a resolver's value, a form, ...):
/// typify's [`typify::TypeId`], the type as other code names it, and how it is lent.
#[derive(Debug, Clone)]
pub struct Slot {
    /// typify's id (`None` for a type the protocol fixes, such as `CreateMessageResult`).
    pub id: Option<typify::TypeId>,
    /// The type, as code outside `types` names it (`types::Book`).
    pub ty: TokenStream,
    /// How it is lent, decided from typify's details of the type.
    pub passing: Passing,
    /// True when the type names a type of the generated `types` module (itself, or inside an
    /// `Option`, a `Vec`, ...).
    pub generated: bool,
    /// True for an enum typify generates (a string with an `enum`, say): its text only through
    /// `Display`, where a newtype of `String` derefs to it.
    pub is_enum: bool,
    /// True for an enum of unit variants only (a string with an `enum`): typify gives it
    /// `TryFrom<&str>`, so a builder's setter takes its text.
    pub unit_enum: bool,
}

impl Slot {
    /// The slot of a type typify did not generate: lent as `&T`.
    pub fn fixed(ty: TokenStream) -> Slot {
        Slot {
            id: None,
            ty,
            passing: Passing::Ref,
            generated: false,
            is_enum: false,
            unit_enum: false,
        }
    }

    /// The slot of typify's type `id`.
    fn of(space: &TypeSpace, id: &typify::TypeId) -> Option<Slot> {
        let ty = space.get_type(id).ok()?;
        let passing = match ty.details() {
            typify::TypeDetails::String => Passing::Str,
            typify::TypeDetails::Vec(inner) | typify::TypeDetails::Set(inner) => {
                Passing::Slice(space.get_type(&inner).ok()?.ident())
            }
            _ => Passing::Ref,
        };
        Some(Slot {
            id: Some(id.clone()),
            ty: ty.ident(),
            passing,
            generated: names_generated(space, id),
            is_enum: matches!(ty.details(), typify::TypeDetails::Enum(_)),
            unit_enum: match ty.details() {
                typify::TypeDetails::Enum(e) => {
                    (e.variants()).all(|(_, v)| matches!(v, typify::TypeEnumVariant::Simple))
                }
                _ => false,
            },
        })
    }

    /// The type as a parameter that borrows it: `&str` for `String`, `&[T]` for `Vec<T>`, `&T`
    /// otherwise (what clippy and readers expect).
    pub fn borrowed(&self) -> TokenStream {
        match &self.passing {
            Passing::Str => quote!(&str),
            Passing::Slice(inner) => quote!(&[#inner]),
            Passing::Ref => {
                let ty = &self.ty;
                quote!(&#ty)
            }
        }
    }

    /// True when it is lent as its deref target (`&str`, `&[T]`) rather than as `&T`.
    pub fn derefs(&self) -> bool {
        !matches!(self.passing, Passing::Ref)
    }
}

/// True when typify's type `id` is, or holds, a type typify generates (a struct, an enum, a
/// newtype: the items of the `types` module), rather than only standard and crate types.
fn names_generated(space: &TypeSpace, id: &typify::TypeId) -> bool {
    use typify::TypeDetails as D;
    let Ok(ty) = space.get_type(id) else {
        return false;
    };
    match ty.details() {
        D::Enum(_) | D::Struct(_) | D::Newtype(_) => true,
        D::Option(i) | D::Vec(i) | D::Set(i) | D::Box(i) | D::Array(i, _) => {
            names_generated(space, &i)
        }
        D::Map(k, v) => names_generated(space, &k) || names_generated(space, &v),
        D::Tuple(items) => items.into_iter().any(|i| names_generated(space, &i)),
        D::Builtin(_) | D::Unit | D::String => false,
    }
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
            Err(panic_reason(&msg))
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
    s.with_struct_builder(true).with_type_mod("types");
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
            crate::refs::each_schema_child_mut(m, plain_date_times);
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

/// A sub-schema typify failed on, typed `serde_json::Value` in the next attempt.
#[derive(Debug, Clone, PartialEq)]
struct Patch {
    /// The schema handed to typify (a `$defs` entry, a tool's input, ...).
    root: Pointer,
    /// The sub-schema, as segments inside the typing view of `root`.
    rel: Vec<String>,
    /// What typify said (its first line).
    reason: String,
}

/// [`typing::view`] of `schema` at `at`, with the sub-schemas of `patches` widened to `{}`.
fn viewed(
    spec: &Spec,
    schema: &Value,
    at: &Pointer,
    patches: &[Patch],
    fallbacks: &mut Vec<Fallback>,
) -> Value {
    let mut v = typing::view(schema, at, &spec.defs, fallbacks);
    for p in patches.iter().filter(|p| &p.root == at) {
        // (A `$defs` entry's pointer also names the `$ref` to it that makes its type.)
        let Some(node) = p.rel.iter().try_fold(&mut v, |node, seg| match node {
            Value::Object(m) => m.get_mut(seg.as_str()),
            Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }) else {
            continue;
        };
        let description = node.get("description").cloned();
        *node = match description {
            Some(d) => serde_json::json!({ "description": d }),
            None => serde_json::json!({}),
        };
    }
    v
}

/// The typing view of `$defs` entry `name`.
fn def_view(spec: &Spec, name: &str, patches: &[Patch], fallbacks: &mut Vec<Fallback>) -> Value {
    let at = Pointer::from_segments(["$defs", name]);
    viewed(spec, &spec.defs[name], &at, patches, fallbacks)
}

fn add_defs(
    ts: &mut TypeSpace,
    spec: &Spec,
    names: &[String],
    patches: &[Patch],
) -> Result<(), String> {
    let defs = names
        .iter()
        .map(|n| {
            Ok((
                n.clone(),
                to_schema(&def_view(spec, n, patches, &mut Vec::new()))?,
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    guarded(|| ts.add_ref_types(defs).map_err(|e| e.to_string()))
}

fn fresh(spec: &Spec, patches: &[Patch]) -> TypeSpace {
    let mut ts = TypeSpace::new(&settings());
    let all: Vec<String> = spec.defs.keys().cloned().collect();
    // Only called after the defs were added successfully once.
    let _ = add_defs(&mut ts, spec, &all, patches);
    ts
}

/// The sub-schemas of a typing view that typify is handed on their own, with their segments.
fn children(schema: &Value) -> Vec<(Vec<String>, &Value)> {
    let mut out = Vec::new();
    let Value::Object(m) = schema else {
        return out;
    };
    for (k, child) in m {
        match (k.as_str(), child) {
            ("properties" | "patternProperties", Value::Object(props)) => {
                for (name, s) in props {
                    out.push((vec![k.clone(), name.clone()], s));
                }
            }
            ("allOf" | "anyOf" | "oneOf" | "items", Value::Array(items)) => {
                for (i, s) in items.iter().enumerate() {
                    out.push((vec![k.clone(), i.to_string()], s));
                }
            }
            ("items" | "additionalProperties", Value::Object(_)) => {
                out.push((vec![k.clone()], child));
            }
            _ => {}
        }
    }
    out
}

/// The deepest sub-schema of `schema` that typify fails on by itself (`[]`: `schema` itself,
/// or only the combination fails). `fails` hands one sub-schema to typify.
fn culprit(schema: &Value, fails: &dyn Fn(&Value) -> bool) -> Vec<String> {
    for (segments, child) in children(schema) {
        if fails(child) {
            let mut path = segments;
            path.extend(culprit(child, fails));
            return path;
        }
    }
    Vec::new()
}

/// `fails` for [`culprit`]: the sub-schema in a type space holding the `$defs`, with `widened`
/// (the `$defs` entry being searched) typed `serde_json::Value` so references to it resolve.
fn fails_alone<'a>(
    spec: &'a Spec,
    patches: &'a [Patch],
    widened: Option<&'a str>,
) -> impl Fn(&Value) -> bool + 'a {
    let mut patches = patches.to_vec();
    if let Some(name) = widened {
        patches.push(Patch {
            root: Pointer::from_segments(["$defs", name]),
            rel: Vec::new(),
            reason: String::new(),
        });
    }
    move |schema| {
        let mut ts = TypeSpace::new(&settings());
        let names: Vec<String> = spec.defs.keys().cloned().collect();
        if add_defs(&mut ts, spec, &names, &patches).is_err() {
            return false;
        }
        to_schema(schema)
            .and_then(|s| {
                guarded(|| {
                    ts.add_type_with_name(&s, Some("Probe".into()))
                        .map_err(|e| e.to_string())
                })
            })
            .is_err()
    }
}

/// The pointer into the spec of sub-schema `rel` of the typing view of the schema at `root`
/// (a tuple's `items/<i>` was written `prefixItems/<i>`).
fn spec_pointer(spec: &Spec, root: &Pointer, rel: &[String]) -> Pointer {
    let mut node = spec_schema(spec, root);
    let mut at = root.clone();
    let mut i = 0;
    while i < rel.len() {
        let seg = &rel[i];
        let tuple = seg == "items" && node.and_then(|n| n.get("prefixItems")).is_some();
        let seg = if tuple { "prefixItems" } else { seg.as_str() };
        at.push(seg);
        node = node.and_then(|n| match n {
            Value::Object(m) => m.get(seg),
            Value::Array(a) => seg.parse::<usize>().ok().and_then(|k| a.get(k)),
            _ => None,
        });
        i += 1;
    }
    at
}

/// The schema of the spec at `root` (a `$defs` entry, a tool's input or output, a resolver's
/// `returns`), when it is written in the spec.
fn spec_schema<'a>(spec: &'a Spec, root: &Pointer) -> Option<&'a Value> {
    let seg: Vec<String> = root.segments().collect();
    match seg
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["$defs", name] => spec.defs.get(*name),
        ["tools", name, "input"] => spec.tools.get(*name)?.input.as_ref(),
        ["tools", name, "output"] => spec.tools.get(*name)?.output.as_ref(),
        ["resolvers", name, "returns"] => spec.resolvers.get(*name)?.returns.as_ref(),
        _ => None,
    }
}

/// Generates the types of a validated spec. A sub-schema typify fails on is typed
/// `serde_json::Value` (a [`Fallback`] says where and why) and generation starts again; a
/// schema typify fails on as a whole is an error. Every such schema is reported in one run.
pub fn generate(spec: &Spec) -> Result<TypeSet, Vec<TypeError>> {
    let (hoisted, origins) = typing::hoist_own_defs(spec);
    match generate_hoisted(&hoisted) {
        Ok(mut set) => {
            for f in &mut set.fallbacks {
                f.pointer = written_at(&f.pointer, &origins);
            }
            Ok(set)
        }
        Err(mut errors) => {
            for e in &mut errors {
                e.pointer = written_at(&e.pointer, &origins);
            }
            Err(errors)
        }
    }
}

/// Where `pointer` into a hoisted `$defs` type ([`typing::hoist_own_defs`]) is in the spec.
fn written_at(pointer: &Pointer, origins: &typing::Origins) -> Pointer {
    let seg: Vec<String> = pointer.segments().collect();
    match seg.as_slice() {
        [defs, name, rest @ ..] if defs == "$defs" && origins.contains_key(name) => {
            let mut at = origins[name].clone();
            rest.iter().for_each(|s| at.push(s));
            at
        }
        _ => pointer.clone(),
    }
}

fn generate_hoisted(spec: &Spec) -> Result<TypeSet, Vec<TypeError>> {
    let mut patches: Vec<Patch> = Vec::new();
    // Each round widens at least one more sub-schema; a spec has finitely many.
    loop {
        match attempt(spec, &patches) {
            Attempt::Done(result) => {
                // A schema typify fails on as a whole was widened only to check the others.
                let whole: Vec<TypeError> = patches
                    .iter()
                    .filter(|p| p.rel.is_empty())
                    .map(|p| TypeError {
                        pointer: p.root.clone(),
                        message: format!("the type generator cannot handle it: {}", p.reason),
                        taken_by: None,
                    })
                    .collect();
                let mut set = match *result {
                    Ok(set) if whole.is_empty() => set,
                    Ok(_) => return Err(whole),
                    Err(mut errors) => {
                        errors.splice(0..0, whole);
                        return Err(errors);
                    }
                };
                let widened = patches.iter().filter(|p| !p.rel.is_empty());
                set.fallbacks.extend(widened.map(|p| Fallback {
                    pointer: spec_pointer(spec, &p.root, &p.rel),
                    message: format!(
                        "typed as `serde_json::Value`: the type generator cannot handle it ({}); \
                         the schema still checks it",
                        p.reason
                    ),
                }));
                return Ok(set);
            }
            Attempt::Again(new) => {
                let (repeated, new): (Vec<Patch>, Vec<Patch>) =
                    new.into_iter().partition(|p| patches.contains(p));
                if new.is_empty() {
                    // Widening did not help: report where typify still fails.
                    let errors = repeated
                        .iter()
                        .map(|p| TypeError {
                            pointer: spec_pointer(spec, &p.root, &p.rel),
                            message: format!("the type generator cannot handle it: {}", p.reason),
                            taken_by: None,
                        })
                        .collect();
                    return Err(errors);
                }
                patches.extend(new);
            }
        }
    }
}

enum Attempt {
    Done(Box<Result<TypeSet, Vec<TypeError>>>),
    /// Sub-schemas to widen before the next attempt.
    Again(Vec<Patch>),
}

/// One generation with `patches` applied.
fn attempt(spec: &Spec, patches: &[Patch]) -> Attempt {
    let all: Vec<String> = spec.defs.keys().cloned().collect();
    let mut ts = TypeSpace::new(&settings());
    if let Err(e) = add_defs(&mut ts, spec, &all, patches) {
        return blame_defs(spec, patches, &e);
    }
    let mut set = TypeSet::empty(spec);
    for name in spec.defs.keys() {
        def_view(spec, name, patches, &mut set.fallbacks);
    }
    let mut adder = Adder {
        spec,
        patches,
        fallbacks: &mut set.fallbacks,
        again: Vec::new(),
        taken: IndexMap::new(),
        collisions: Vec::new(),
        ids: Vec::new(),
    };
    adder.defs(&mut ts);
    adder.tools(&mut ts);
    adder.resolvers(&mut ts);
    adder.prompts(&mut ts);
    adder.templates(&mut ts);
    let Adder {
        again,
        collisions,
        ids,
        ..
    } = adder;
    if !again.is_empty() {
        return Attempt::Again(again);
    }
    if !collisions.is_empty() {
        return Attempt::Done(Box::new(Err(collisions)));
    }
    Attempt::Done(Box::new(finish(spec, set, ts, ids)))
}

/// The `$defs` failed together: blame the first entry whose own closure fails while its
/// dependencies' closures succeed, and widen its culprit (or all of it, as an error, so that the
/// tools are still checked).
fn blame_defs(spec: &Spec, patches: &[Patch], error: &str) -> Attempt {
    let mut again = Vec::new();
    for name in spec.defs.keys() {
        let mut probe = TypeSpace::new(&settings());
        let Err(msg) = add_defs(&mut probe, spec, &closure(spec, name), patches) else {
            continue;
        };
        let deps_ok = closure(spec, name).iter().filter(|d| *d != name).all(|d| {
            let mut p = TypeSpace::new(&settings());
            add_defs(&mut p, spec, &closure(spec, d), patches).is_ok()
        });
        if deps_ok {
            let view = def_view(spec, name, patches, &mut Vec::new());
            let rel = culprit(&view, &fails_alone(spec, patches, Some(name)));
            again.push(Patch {
                root: Pointer::from_segments(["$defs", name]),
                rel,
                reason: panic_reason(&msg),
            });
        }
    }
    if again.is_empty() {
        return Attempt::Done(Box::new(Err(vec![TypeError {
            pointer: Pointer::from_segments(["$defs"]),
            message: format!(
                "the type generator cannot handle it: {}",
                panic_reason(error)
            ),
            taken_by: None,
        }])));
    }
    Attempt::Again(again)
}

/// Adds each slot's schema to a type space, collecting what fails (to widen) and what
/// collides.
struct Adder<'a> {
    spec: &'a Spec,
    patches: &'a [Patch],
    fallbacks: &'a mut Vec<Fallback>,
    /// Sub-schemas to widen before the next attempt.
    again: Vec<Patch>,
    /// Type name -> the schema whose type has it (typify hands back the existing type when a
    /// name is taken, so a second schema of that name would silently get the first's type).
    taken: IndexMap<String, Pointer>,
    collisions: Vec<TypeError>,
    /// The type of each slot added: its kind, its position, typify's id.
    ids: Vec<(Kind, usize, typify::TypeId)>,
}

impl Adder<'_> {
    /// Adds the schema at `at` under the name `hint`; on failure, records the sub-schema to
    /// widen and starts the type space again from the defs (it may be half-updated).
    fn add(
        &mut self,
        ts: &mut TypeSpace,
        at: Pointer,
        schema: &Value,
        hint: String,
    ) -> Option<typify::TypeId> {
        let (spec, patches) = (self.spec, self.patches);
        let schema = viewed(spec, schema, &at, patches, self.fallbacks);
        let result = to_schema(&schema).and_then(|s| {
            guarded(|| {
                ts.add_type_with_name(&s, Some(hint))
                    .map_err(|e| e.to_string())
            })
        });
        match result {
            Ok(id) => Some(id),
            Err(message) => {
                let rel = culprit(&schema, &fails_alone(spec, patches, None));
                self.again.push(Patch {
                    root: at,
                    rel,
                    reason: panic_reason(&message),
                });
                *ts = fresh(spec, patches);
                None
            }
        }
    }

    /// Adds a schema whose type is named after `hint` unless it is a `$ref`, reporting a name
    /// another schema's type already has.
    fn add_named(
        &mut self,
        ts: &mut TypeSpace,
        at: Pointer,
        schema: &Value,
        hint: String,
    ) -> Option<typify::TypeId> {
        let id = self.add(ts, at.clone(), schema, hint.clone())?;
        if let Some(e) = name_taken(ts, &id, schema, &hint, at, &mut self.taken) {
            self.collisions.push(e);
        }
        Some(id)
    }

    fn defs(&mut self, ts: &mut TypeSpace) {
        for (i, name) in self.spec.defs.keys().enumerate() {
            let r = serde_json::json!({"$ref": format!("#/$defs/{name}")});
            let at = Pointer::from_segments(["$defs", name]);
            if let Some(id) = self.add(ts, at.clone(), &r, names::type_name(name)) {
                if let Ok(t) = ts.get_type(&id) {
                    self.taken.entry(t.name()).or_insert(at);
                }
                self.ids.push((Kind::Def, i, id));
            }
        }
    }

    fn tools(&mut self, ts: &mut TypeSpace) {
        for (i, (name, tool)) in self.spec.tools.iter().enumerate() {
            let mut input = tool
                .input
                .clone()
                .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
            let at = Pointer::from_segments(["tools", name, "input"]);
            if let serde_json::Value::Object(m) = &mut input
                && !m.contains_key("description")
            {
                m.insert(
                    "description".into(),
                    format!("Arguments of `{name}`.").into(),
                );
            }
            if let Some(id) = self.add(ts, at, &input, names::args_type_name(name)) {
                self.ids.push((Kind::Args, i, id));
            }
            if let Some(output) = &tool.output {
                let at = Pointer::from_segments(["tools", name, "output"]);
                let hint = format!("{}Output", names::type_name(name));
                if let Some(id) = self.add_named(ts, at, output, hint) {
                    self.ids.push((Kind::Output, i, id));
                }
            }
        }
    }

    fn resolvers(&mut self, ts: &mut TypeSpace) {
        for (i, (name, r)) in self.spec.resolvers.iter().enumerate() {
            if let Some(returns) = &r.returns {
                let at = Pointer::from_segments(["resolvers", name, "returns"]);
                let hint = format!("{}Value", names::type_name(name));
                if let Some(id) = self.add_named(ts, at, returns, hint) {
                    self.ids.push((Kind::Returns, i, id));
                }
            }
        }
    }

    fn prompts(&mut self, ts: &mut TypeSpace) {
        for (i, (name, prompt)) in self.spec.prompts.iter().enumerate() {
            if prompt.messages.is_some() {
                continue;
            }
            let mut input = prompt_arguments_schema(prompt);
            input["description"] = format!("Arguments of prompt `{name}`.").into();
            let at = Pointer::from_segments(["prompts", name, "arguments"]);
            if let Some(id) = self.add(ts, at, &input, names::prompt_args_type_name(name)) {
                self.ids.push((Kind::PromptArgs, i, id));
            }
        }
    }

    fn templates(&mut self, ts: &mut TypeSpace) {
        for (i, (uri, template)) in self.spec.resource_templates.iter().enumerate() {
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
            if let Some(id) = self.add(ts, at, &schema, names::vars_type_name(&template.name)) {
                self.ids.push((Kind::Vars, i, id));
            }
        }
    }
}

/// The type set of a generation that succeeded: each slot's type, typify's output, the crates
/// it needs.
fn finish(
    spec: &Spec,
    mut set: TypeSet,
    ts: TypeSpace,
    ids: Vec<(Kind, usize, typify::TypeId)>,
) -> Result<TypeSet, Vec<TypeError>> {
    let mut errors = Vec::new();
    for (kind, i, id) in ids {
        let Some(slot) = Slot::of(&ts, &id) else {
            errors.push(TypeError {
                pointer: Pointer::root(),
                message: "internal error: typify lost a type it generated".into(),
                taken_by: None,
            });
            continue;
        };
        set.slots_mut(kind)[i] = Some(slot);
    }
    match guarded(|| Ok(ts.to_stream())) {
        // Parsing typify's output costs time: only when two properties can share a name.
        Ok(t) if may_collide(spec) => (set.tokens, set.field_names) = fields::disambiguate(t),
        Ok(t) => set.tokens = t,
        Err(reason) => errors.push(TypeError {
            pointer: Pointer::root(),
            message: format!("the type generator cannot handle it: {reason}"),
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

/// True when two properties of one `properties` somewhere in the spec get the same
/// [`names::field_name`] (so that [`fields::disambiguate`] has work to do).
fn may_collide(spec: &Spec) -> bool {
    fn walk(v: &Value) -> bool {
        match v {
            Value::Object(m) => m.iter().any(|(k, child)| {
                let here = k == "properties"
                    && child.as_object().is_some_and(|props| {
                        let mut seen = std::collections::HashSet::new();
                        !props.keys().all(|p| seen.insert(names::field_name(p)))
                    });
                here || walk(child)
            }),
            Value::Array(a) => a.iter().any(walk),
            _ => false,
        }
    }
    spec.defs.values().any(walk)
        || spec
            .tools
            .values()
            .any(|t| t.input.as_ref().is_some_and(walk) || t.output.as_ref().is_some_and(walk))
        || spec
            .resolvers
            .values()
            .any(|r| r.returns.as_ref().is_some_and(walk))
        || spec
            .prompts
            .values()
            .any(|p| walk(&prompt_arguments_schema(p)))
}

/// The schema of a prompt's arguments as the `<Prompt>Arguments` struct reads them: an object of
/// string properties, one per argument, required as declared.
fn prompt_arguments_schema(prompt: &crate::spec::Prompt) -> Value {
    let properties: serde_json::Map<String, Value> = prompt
        .arguments
        .iter()
        .map(|(name, a)| {
            let mut p = serde_json::Map::new();
            p.insert("type".into(), "string".into());
            if let Some(d) = &a.description {
                p.insert("description".into(), d.clone().into());
            }
            (name.clone(), Value::Object(p))
        })
        .collect();
    let required: Vec<Value> = (prompt.arguments.iter())
        .filter(|(_, a)| a.required)
        .map(|(n, _)| n.clone().into())
        .collect();
    let mut input = serde_json::json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        input["required"] = Value::Array(required);
    }
    input
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
    /// The type inside the `Option`, when optional (else the field's type).
    pub inner: Slot,
}

impl TypeSet {
    /// A set with no types yet, sized for `spec`.
    fn empty(spec: &Spec) -> TypeSet {
        TypeSet {
            space: TypeSpace::new(&settings()),
            tokens: TokenStream::new(),
            args: vec![None; spec.tools.len()],
            outputs: vec![None; spec.tools.len()],
            returns: vec![None; spec.resolvers.len()],
            defs: vec![None; spec.defs.len()],
            prompt_args: vec![None; spec.prompts.len()],
            vars: vec![None; spec.resource_templates.len()],
            uses_regress: false,
            uses_chrono: false,
            uses_uuid: false,
            fallbacks: Vec::new(),
            field_names: FieldNames::new(),
        }
    }

    /// The slots of one kind.
    fn slots_mut(&mut self, kind: Kind) -> &mut Vec<Option<Slot>> {
        match kind {
            Kind::Def => &mut self.defs,
            Kind::Args => &mut self.args,
            Kind::Output => &mut self.outputs,
            Kind::Returns => &mut self.returns,
            Kind::PromptArgs => &mut self.prompt_args,
            Kind::Vars => &mut self.vars,
        }
    }

    /// True when the type definitions or a type used elsewhere name a path of crate `name`.
    fn names_crate(&self, name: &str) -> bool {
        let path = format!(":: {name} ::");
        let slots = [
            &self.outputs,
            &self.returns,
            &self.defs,
            &self.args,
            &self.prompt_args,
            &self.vars,
        ];
        self.tokens.to_string().contains(&path)
            || (slots.iter().flat_map(|s| s.iter().flatten()))
                .any(|s| s.ty.to_string().contains(&path))
    }

    /// `<Tool>Args` of tool `t`.
    pub fn args(&self, t: ToolId) -> &Slot {
        self.args[t.index()]
            .as_ref()
            .expect("typing succeeded: every tool has its arguments type")
    }

    /// The output value type of tool `t`, when it declares `output`.
    pub fn output(&self, t: ToolId) -> Option<&Slot> {
        self.outputs[t.index()].as_ref()
    }

    /// The value type of resolver `r`, when it declares `returns`.
    pub fn value(&self, r: ResolverId) -> Option<&Slot> {
        self.returns[r.index()].as_ref()
    }

    /// The type of the `$defs` entry at position `i`.
    pub fn def(&self, i: usize) -> &Slot {
        self.defs[i]
            .as_ref()
            .expect("typing succeeded: every `$defs` entry has its type")
    }

    /// `<Prompt>Arguments` of prompt `p`, when it is written in code.
    pub fn prompt_args(&self, p: PromptId) -> Option<&Slot> {
        self.prompt_args[p.index()].as_ref()
    }

    /// `<Name>Vars` of template `t`.
    pub fn vars(&self, t: TemplateId) -> &Slot {
        self.vars[t.index()]
            .as_ref()
            .expect("typing succeeded: every template has its variables type")
    }

    /// The field of `<Tool>Args` of tool `t` that holds JSON property `property`.
    pub fn arg_field(&self, t: ToolId, property: &str) -> Option<Field> {
        self.field_of(self.args(t).id.as_ref()?, property)
    }

    /// The field of `<Prompt>Arguments` of prompt `p` that holds argument `argument`.
    pub fn prompt_arg_field(&self, p: PromptId, argument: &str) -> Option<Field> {
        self.field_of(self.prompt_args(p)?.id.as_ref()?, argument)
    }

    fn field_of(&self, id: &typify::TypeId, property: &str) -> Option<Field> {
        let ty = self.space.get_type(id).ok()?;
        let typify::TypeDetails::Struct(s) = ty.details() else {
            return None;
        };
        // The field's position among the struct's fields, and its name after
        // [`fields::disambiguate`].
        let (position, ident) = match self.field_names.get(&ty.name()) {
            Some(names) => names
                .iter()
                .enumerate()
                .find(|(_, (json, _))| json == property)
                .map(|(i, (_, rust))| (i, rust.clone()))?,
            None => {
                let ident = names::field_name(property);
                let i = s.properties().position(|(n, _)| n == ident)?;
                (i, ident)
            }
        };
        let (_, type_id) = s.properties().nth(position)?;
        let field_ty = self.space.get_type(&type_id).ok()?;
        let (optional, inner) = match field_ty.details() {
            typify::TypeDetails::Option(inner) => (true, Slot::of(&self.space, &inner)?),
            _ => (false, Slot::of(&self.space, &type_id)?),
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

    /// How each resolver's value is lent, from typify's details of its type.
    #[test]
    fn values_are_lent_by_the_shape_of_their_type() {
        let spec = serde_json::json!({
            "name": "T",
            "$defs": {"String": {"type": "object", "properties": {"s": {"type": "string"}}}},
            "resolvers": {
                "text": {"returns": {"type": "string"}},
                "list": {"returns": {"type": "array", "items": {"type": "integer"}}},
                "set": {"returns": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}},
                "own": {"returns": {"$ref": "#/$defs/String"}},
                "count": {"returns": {"type": "integer"}}
            },
            "tools": {"t": {"description": "T.", "resolve": {
                "a": "text", "b": "list", "c": "set", "d": "own", "e": "count"
            }}}
        });
        let checked = crate::check::check_str("spec.json", &spec.to_string())
            .unwrap_or_else(|r| panic!("{}", r.render_human()));
        let lent: Vec<String> = checked
            .model
            .resolvers
            .iter()
            .map(|r| checked.types.value(r.id).unwrap().borrowed().to_string())
            .collect();
        assert_eq!(
            lent,
            [
                "& str",
                "& [i64]",
                "& [:: std :: string :: String]",
                "& types :: String",
                "& i64"
            ]
        );
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
