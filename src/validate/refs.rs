//! References in the spec's schemas: every `$ref` names a `$defs` type of the spec (or of the
//! schema's own root `$defs`), no `$defs` below a schema's root, and a tool's `input` is an
//! object at its root.

use serde_json::Value;

use super::{Validator, compact, resolver_ptr, tool_ptr};
use crate::diagnostics::{Code, Subject};
use crate::names::closest;
use crate::pointer::Pointer;

impl Validator<'_> {
    /// Every schema of the spec: `$defs` types, tool inputs and outputs, resolver `returns`.
    pub(super) fn refs(&mut self) {
        let mut all: Vec<(Pointer, &Value)> = Vec::new();
        for (name, s) in &self.spec.defs {
            all.push((Pointer::from_segments(["$defs", name]), s));
        }
        for (name, t) in &self.spec.tools {
            if let Some(input) = &t.input {
                let at = tool_ptr(name).child("input");
                self.input_root(name, input, &at);
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
            // A tool's or resolver's schema may be a document of its own, as pydantic writes
            // one: its own `$defs` at its root, `#` for itself. A `$defs` type may not.
            let own: Option<Vec<String>> =
                (at.segments().next().as_deref() != Some("$defs")).then(|| {
                    schema
                        .get("$defs")
                        .and_then(Value::as_object)
                        .map(|d| d.keys().cloned().collect())
                        .unwrap_or_default()
                });
            self.refs_in(schema, at, own.as_deref(), true);
        }
    }

    /// The input schema of tool `name` (at `at`) has `"type": "object"` at its root.
    fn input_root(&mut self, name: &str, input: &Value, at: &Pointer) {
        if input.get("type").and_then(Value::as_str) == Some("object") {
            return;
        }
        self.err(
            Code::InputNotObject,
            format!("the input schema of tool `{name}` must have `\"type\": \"object\"` at its root (the arguments are an object; a `$defs` object is written `{{\"type\": \"object\", \"$ref\": \"#/$defs/Name\"}}`), but it is {}", compact(input)),
            at.clone(),
        )
        .subjects
        .push(Subject::Tool(name.to_string()));
    }
    /// Checks the references in `v`; `own` lists the own `$defs` of the schema `v` is part of
    /// (`None`: a spec `$defs` type, which has none), `root` says `v` is that schema's root.
    fn refs_in(&mut self, v: &Value, at: Pointer, own: Option<&[String]>, root: bool) {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    let cat = at.child(k);
                    if k == "$defs" && root && own.is_some() {
                        if let Value::Object(defs) = child {
                            for (name, def) in defs {
                                self.refs_in(def, cat.child(name), own, false);
                            }
                        }
                    } else if k == "$ref" {
                        match child.as_str() {
                            Some(r) => self.check_ref(r, cat, own),
                            None => {
                                self.err(Code::InvalidRef, "`$ref` must be a string".into(), cat);
                            }
                        }
                    } else if k == "$defs" || k == "definitions" {
                        self.err(
                            Code::NestedDefs,
                            format!("`{k}` inside a schema is not supported: declare shared types in the spec's top-level `$defs` (or in the `$defs` at the root of a tool's or resolver's schema) and reference them as `#/$defs/<Name>`"),
                            cat.clone(),
                        );
                    } else if matches!(
                        k.as_str(),
                        "properties" | "patternProperties" | "dependentSchemas"
                    ) {
                        // Properties that become one Rust field are told apart by
                        // `emit::fields` (`#[serde(rename)]`), never an error.
                        if let Value::Object(props) = child {
                            for (pk, pv) in props {
                                self.refs_in(pv, cat.child(pk), own, false);
                            }
                        }
                    } else if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                        self.refs_in(child, cat, own, false);
                    }
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    self.refs_in(child, at.child(&i.to_string()), own, false);
                }
            }
            _ => {}
        }
    }

    fn check_ref(&mut self, r: &str, at: Pointer, own: Option<&[String]>) {
        let mut names: Vec<&str> = self.spec.defs.keys().map(String::as_str).collect();
        names.extend(own.unwrap_or_default().iter().map(String::as_str));
        match r.strip_prefix("#/$defs/") {
            _ if r == "#" && own.is_some() => {}
            Some(name) if names.contains(&name) => {}
            Some(name) if !name.contains('/') => {
                let help = closest(name, names.iter().copied());
                let d = self.err(
                    Code::UnresolvedRef,
                    format!("`$ref` \"{r}\" does not resolve: `$defs` has no `{name}`"),
                    at,
                );
                if let Some(h) = help {
                    d.help = Some(format!("did you mean \"#/$defs/{h}\"?"));
                }
            }
            _ => {
                self.err(
                    Code::UnsupportedRef,
                    format!("`$ref` \"{r}\" is not supported: references must name a type of the spec's `$defs`, as \"#/$defs/<Name>\""),
                    at,
                );
            }
        }
    }
}
