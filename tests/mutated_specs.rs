//! A bounded run of mutated specs: "`check` passing means the crate builds and starts".
//!
//! Seeds are every spec of the repository (`specs/`, `generated-examples/*/spec.json`,
//! `tests/schemas/`). Each mutant is one seed cut down to a few tools (with the resolvers and
//! prompts they use) and then edited by a fixed-seed generator of our own, a few edits at a
//! time: properties renamed to awkward names (Rust keywords, digits first, Unicode,
//! punctuation, names that collide after snake-casing), a property's schema swapped for a
//! keyword-rich one of the corpus (with the `$defs` it needs), `required` toggled, `$defs`
//! extracted, inlined, referenced or removed, outputs wrapped in arrays or made nullable,
//! resolvers added that are bound to tool arguments of any type (plain, elicit, sample, roots,
//! chained; with the verified caller where the seed has `auth`), prompts added, and
//! descriptions full of Markdown, backticks, `*/` and `#`.
//!
//! Every mutant is checked in process: a rejected one must carry only located diagnostics
//! (a JSON pointer that exists in the mutant, a span inside its text); an accepted one becomes a
//! crate of ONE cargo workspace under `target/mutated-specs/`, built once (in the suite's shared
//! target directory) with clippy's lints at `-D warnings` in the same pass; each server is started over stdio and must list exactly the spec's tools
//! (and prompts), and every schema it advertises (`inputSchema`, `outputSchema`, and each
//! elicitation form as the generator computes it) must be a valid 2020-12 schema whose every
//! `$ref` resolves inside the document. A mutant that `check` accepts and that does not build
//! or start is a bug of the generator: its spec belongs in `tests/mutants/` and in
//! [`KNOWN_FAILURES`], which this test checks still fail, until it is fixed.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use mcpgen::check::{Checked, check_str};
use mcpgen::emit::signatures::Signatures;
use serde_json::{Map, Value, json};

/// How many accepted mutants the run builds, and how many it makes at most to get them.
const ACCEPTED: usize = 30;
const MAX_MADE: usize = 400;
/// The generator's fixed seed.
const SEED: u64 = 0x6d63_7067_656e_0016;

/// Specs under `tests/mutants/` that `check` accepts and whose crate does not build or start
/// (a generator bug not fixed yet); the test asserts that each still fails. Empty: none known.
const KNOWN_FAILURES: &[&str] = &[];

use common::{Lints, root};

/// SplitMix64: small, fixed-seed, the same sequence on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        assert!(n > 0);
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[self.below(items.len())])
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Seeds and the pool of sub-schemas.

/// The seed specs, one per server name (the examples' copies under `specs/` are the same specs).
fn seeds() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["specs", "tests/schemas"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "json") {
                files.push(p);
            }
        }
    }
    for e in std::fs::read_dir(root().join("generated-examples")).unwrap() {
        let p = e.unwrap().path().join("spec.json");
        if p.exists() {
            files.push(p);
        }
    }
    files.sort();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for f in files {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let name = v["name"].as_str().unwrap().to_string();
        if seen.insert(name) {
            let rel = f.strip_prefix(root()).unwrap().display().to_string();
            out.push((rel, v));
        }
    }
    assert!(out.len() >= 10, "seeds: {:?}", out.iter().map(|s| &s.0));
    out
}

/// A sub-schema of the corpus and the spec `$defs` it needs (transitively).
#[derive(Clone)]
struct Piece {
    schema: Value,
    defs: Map<String, Value>,
}

/// Every `$ref` string in `v`.
fn refs_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref" {
                    if let Some(s) = x.as_str() {
                        out.push(s.to_string());
                    }
                } else if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                    refs_in(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs_in(x, out)),
        _ => {}
    }
}

/// `schema` with the spec `$defs` it needs, or `None` when it refers to anything else.
fn piece(schema: &Value, spec_defs: &Map<String, Value>) -> Option<Piece> {
    let mut defs = Map::new();
    let mut queue = vec![schema.clone()];
    while let Some(s) = queue.pop() {
        let mut found = Vec::new();
        refs_in(&s, &mut found);
        for r in found {
            let name = r.strip_prefix("#/$defs/")?;
            if !defs.contains_key(name) {
                let def = spec_defs.get(name)?;
                defs.insert(name.to_string(), def.clone());
                queue.push(def.clone());
            }
        }
    }
    Some(Piece {
        schema: schema.clone(),
        defs,
    })
}

/// Keyword-rich sub-schemas: every property schema, output and resolver value of the seeds,
/// and a few written here.
fn pool(seeds: &[(String, Value)]) -> Vec<Piece> {
    let mut out = Vec::new();
    for (_, spec) in seeds {
        let defs = spec["$defs"].as_object().cloned().unwrap_or_default();
        let mut add = |s: &Value| {
            if let Some(p) = piece(s, &defs) {
                out.push(p);
            }
        };
        for t in spec["tools"].as_object().unwrap().values() {
            if let Some(props) = t["input"]["properties"].as_object() {
                props.values().for_each(&mut add);
            }
            if let Some(o) = t.get("output") {
                add(o);
            }
        }
        for d in defs.values() {
            add(d);
        }
    }
    let written = [
        json!({"type": "string", "enum": [",", ";", "\t", "|", "*/", "#", "`"]}),
        json!({"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "a-b"}, "x": {"type": "integer"}}, "required": ["kind", "x"]},
            {"type": "object", "properties": {"kind": {"const": "A_B"}, "y": {"type": "string"}}, "required": ["kind"]}
        ]}),
        json!({"type": "array", "prefixItems": [{"type": "string", "format": "uuid"}, {"type": "number"}], "items": false, "minItems": 2}),
        json!({"type": "array", "prefixItems": [{"type": "boolean"}]}),
        json!({"type": "object", "patternProperties": {"^[a-z]+$": {"type": "integer"}}, "additionalProperties": false}),
        json!({"type": "object", "properties": {"when": {"type": "string", "format": "date-time"}, "mail": {"type": "string", "format": "email"}, "site": {"type": "string", "format": "uri"}, "day": {"type": "string", "format": "date"}, "ip": {"type": "string", "format": "ipv6"}}, "required": ["when"]}),
        json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "object", "properties": {"c": {"type": ["integer", "null"], "minimum": 0}}}}}}}),
        json!({"type": "integer", "minimum": 0, "maximum": 4_000_000_000_u64}),
        json!({"type": "integer", "minimum": -1e20, "maximum": 1e30}),
        json!({"type": ["string", "integer", "null"]}),
        json!({"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string", "format": "uuid"}}}),
        json!({"type": "string", "format": "date-time", "default": "2024-01-01T00:00:00+09:00"}),
        json!({"type": "object", "properties": {"fn": {"type": "string"}, "type": {"type": "integer"}, "@type": {"type": "boolean"}}, "required": ["type"]}),
        json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"required": ["a"]}]}),
        json!({"not": {"type": "null"}}),
        json!(true),
        json!({}),
    ];
    out.extend(written.into_iter().map(|schema| Piece {
        schema,
        defs: Map::new(),
    }));
    out
}

// ---------------------------------------------------------------------------------------------
// Cutting a seed down.

/// The resolvers a binding map names.
fn bound_resolvers(resolve: &Value) -> Vec<String> {
    resolve
        .as_object()
        .map(|m| {
            m.values()
                .filter_map(|b| match b {
                    Value::String(s) => Some(s.clone()),
                    Value::Object(o) => o.get("resolver")?.as_str().map(str::to_string),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `seed` with at most three tools and two prompts, chosen at random, and the resolvers they
/// use (transitively).
fn cut(seed: &Value, rng: &mut Rng, name: &str) -> Value {
    let mut spec = seed.clone();
    let m = spec.as_object_mut().unwrap();
    m.insert("name".into(), json!(name));
    m.remove("$schema");
    let keep = |rng: &mut Rng, map: &Map<String, Value>, most: usize| -> Map<String, Value> {
        let mut chosen: Vec<usize> = (0..map.len()).collect();
        while chosen.len() > most {
            let i = rng.below(chosen.len());
            chosen.remove(i);
        }
        map.iter()
            .enumerate()
            .filter(|(i, _)| chosen.contains(i))
            .map(|(_, (k, v))| (k.clone(), v.clone()))
            .collect()
    };
    let tools = keep(rng, m["tools"].as_object().unwrap(), 3);
    m.insert("tools".into(), Value::Object(tools));
    if let Some(prompts) = m.get("prompts").and_then(Value::as_object) {
        let p = keep(rng, prompts, 2);
        m.insert("prompts".into(), Value::Object(p));
    }
    let mut needed: Vec<String> = Vec::new();
    for section in ["tools", "prompts"] {
        if let Some(items) = m.get(section).and_then(Value::as_object) {
            for item in items.values() {
                needed.extend(bound_resolvers(&item["resolve"]));
            }
        }
    }
    if let Some(all) = m.get("resolvers").and_then(Value::as_object).cloned() {
        let mut kept = BTreeSet::new();
        while let Some(n) = needed.pop() {
            if kept.insert(n.clone())
                && let Some(r) = all.get(&n)
            {
                needed.extend(bound_resolvers(&r["params"]));
            }
        }
        let resolvers: Map<String, Value> =
            all.into_iter().filter(|(k, _)| kept.contains(k)).collect();
        m.insert("resolvers".into(), Value::Object(resolvers));
    }
    spec
}

// ---------------------------------------------------------------------------------------------
// Mutations.

/// JSON pointer segment.
fn seg(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Pointers of every object schema with `properties` in the tools' inputs and outputs, the
/// resolvers' values and the `$defs` (not below data keywords).
fn object_schemas(spec: &Value) -> Vec<String> {
    fn walk(v: &Value, at: String, out: &mut Vec<String>) {
        let Value::Object(m) = v else { return };
        if m.get("properties").is_some_and(Value::is_object) {
            out.push(at.clone());
        }
        for (k, x) in m {
            let here = format!("{at}/{}", seg(k));
            match k.as_str() {
                "properties" | "$defs" | "patternProperties" => {
                    if let Value::Object(members) = x {
                        for (n, s) in members {
                            walk(s, format!("{here}/{}", seg(n)), out);
                        }
                    }
                }
                "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                    if let Value::Array(a) = x {
                        for (i, s) in a.iter().enumerate() {
                            walk(s, format!("{here}/{i}"), out);
                        }
                    }
                }
                "items" | "additionalProperties" => walk(x, here, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for (name, t) in spec["tools"].as_object().unwrap() {
        for part in ["input", "output"] {
            if let Some(s) = t.get(part) {
                walk(s, format!("/tools/{}/{part}", seg(name)), &mut out);
            }
        }
    }
    if let Some(rs) = spec["resolvers"].as_object() {
        for (name, r) in rs {
            if let Some(s) = r.get("returns") {
                walk(s, format!("/resolvers/{}/returns", seg(name)), &mut out);
            }
        }
    }
    if let Some(defs) = spec["$defs"].as_object() {
        for (name, d) in defs {
            walk(d, format!("/$defs/{}", seg(name)), &mut out);
        }
    }
    out
}

/// Pointers of every property schema (`<object>/properties/<name>`).
fn property_schemas(spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for at in object_schemas(spec) {
        for name in spec.pointer(&at).unwrap()["properties"]
            .as_object()
            .unwrap()
            .keys()
        {
            out.push(format!("{at}/properties/{}", seg(name)));
        }
    }
    out
}

/// Awkward property names; `others` are the object's other names, for collisions.
fn awkward(rng: &mut Rng, others: &[String]) -> String {
    const KEYWORDS: &[&str] = &[
        "type", "fn", "self", "Self", "crate", "super", "async", "await", "match", "ref", "mod",
        "static", "dyn", "union", "loop", "try", "gen", "abstract", "r#type", "ctx", "args",
        "state", "Some", "None", "Ok", "String", "Vec",
    ];
    const DIGITS: &[&str] = &["1st", "2fa", "3d_model", "007", "9", "0x10"];
    const UNICODE: &[&str] = &[
        "名前",
        "prénom",
        "Größe",
        "🙂",
        "ñandú",
        "Ωmega",
        "日本語のキー",
    ];
    const PUNCT: &[&str] = &[
        "a-b",
        "a.b",
        "@type",
        "$id",
        "a b",
        "x:y",
        "__",
        "_",
        "user/name",
        "q?",
        "#tag",
        "~0",
        "%20",
        "$schema",
        "properties",
        "required",
        "a\"b",
        "back\\slash",
    ];
    match rng.below(5) {
        0 => rng.pick(KEYWORDS).unwrap().to_string(),
        1 => rng.pick(DIGITS).unwrap().to_string(),
        2 => rng.pick(UNICODE).unwrap().to_string(),
        3 => rng.pick(PUNCT).unwrap().to_string(),
        _ => {
            let Some(other) = rng.pick(others) else {
                return "userId".into();
            };
            let snake = heckish_snake(other);
            let variants = [
                snake.clone(),
                snake.to_uppercase(),
                snake.replace('_', "-"),
                format!("@{other}"),
                format!("_{other}"),
                format!("{other}_"),
                camel(&snake),
            ];
            rng.pick(&variants).unwrap().clone()
        }
    }
}

fn heckish_snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in snake.chars() {
        if c == '_' || c == '-' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Descriptions a doc comment must survive.
fn nasty_description(rng: &mut Rng) -> String {
    const TEXTS: &[&str] = &[
        "Uses `backticks` and ``double `ticks` ``.",
        "Closes a comment */ and opens one /* here.",
        "# A heading\n\nThen a paragraph.",
        "- a list\n- of items\n  - nested",
        "1. first\n2. second",
        "```rust\nfn main() { panic!(\"}\") }\n```",
        "    indented code block",
        "<b>html</b> & entities &amp; <!-- comment -->",
        "Quotes \" and ' and \\ backslashes \\n",
        "[a link](http://example.com) and <http://example.com>",
        "| a | table |\n|---|---|\n| 1 | 2 |",
        "#[derive(Debug)] attribute-looking text",
        "{{braces}} and {placeholder}",
        "Trailing spaces   \nand\ttabs",
        "*emphasis* _under_ **strong** ~~strike~~",
        "> a quote\n>\n> continued",
        "r#\"raw\"# strings and ##hashes##",
        "Line one\r\nline two (CRLF)",
        "日本語の説明。🙂",
        "",
    ];
    let a = rng.pick(TEXTS).unwrap().to_string();
    if rng.chance(40) {
        format!("{a}\n\n{}", rng.pick(TEXTS).unwrap())
    } else {
        a
    }
}

/// The map at `pointer` (created as an empty map under its parent when missing).
fn map_at<'a>(spec: &'a mut Value, pointer: &str) -> Option<&'a mut Map<String, Value>> {
    spec.pointer_mut(pointer)?.as_object_mut()
}

/// Replaces `"$ref": from` by `to` everywhere in `v`.
fn rewrite_refs(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "$ref" && x.as_str() == Some(from) {
                    *x = json!(to);
                } else {
                    rewrite_refs(x, from, to);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rewrite_refs(x, from, to)),
        _ => {}
    }
}

/// Puts `piece` into `spec`: its `$defs` merged (renamed where a different type has the
/// name); returns its schema with references rewritten.
fn transplant(spec: &mut Value, piece: &Piece) -> Value {
    let mut schema = piece.schema.clone();
    let mut defs = piece.defs.clone();
    let root = spec.as_object_mut().unwrap();
    let spec_defs = root
        .entry("$defs")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .unwrap();
    let names: Vec<String> = defs.keys().cloned().collect();
    for name in names {
        match spec_defs.get(&name) {
            Some(existing) if *existing == defs[&name] => {}
            None => {}
            Some(_) => {
                let mut k = 2;
                while spec_defs.contains_key(&format!("{name}{k}"))
                    || defs.contains_key(&format!("{name}{k}"))
                {
                    k += 1;
                }
                let new = format!("{name}{k}");
                let (from, to) = (format!("#/$defs/{name}"), format!("#/$defs/{new}"));
                rewrite_refs(&mut schema, &from, &to);
                for d in defs.values_mut() {
                    rewrite_refs(d, &from, &to);
                }
                let def = defs.remove(&name).unwrap();
                defs.insert(new, def);
            }
        }
    }
    for (name, def) in defs {
        spec_defs.entry(name).or_insert(def);
    }
    schema
}

/// Tool names of `spec` with input properties.
fn tools_with_properties(spec: &Value) -> Vec<(String, Vec<String>)> {
    spec["tools"]
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(n, t)| {
            let props: Vec<String> = t["input"]["properties"]
                .as_object()?
                .keys()
                .cloned()
                .collect();
            (!props.is_empty()).then(|| (n.clone(), props))
        })
        .collect()
}

/// Renames property `old` of the object at `at` to `new`, in place, with `required`.
fn rename_property(spec: &mut Value, at: &str, old: &str, new: &str) {
    let obj = map_at(spec, at).unwrap();
    let props = obj["properties"].as_object().unwrap().clone();
    let renamed: Map<String, Value> = props
        .into_iter()
        .map(|(k, v)| {
            if k == old {
                (new.to_string(), v)
            } else {
                (k, v)
            }
        })
        .collect();
    obj.insert("properties".into(), Value::Object(renamed));
    if let Some(Value::Array(req)) = obj.get_mut("required") {
        for r in req.iter_mut() {
            if r.as_str() == Some(old) {
                *r = json!(new);
            }
        }
    }
}

/// The resolvers that take `"arg"` parameter `name`.
fn arg_resolvers(spec: &Value, name: &str) -> Vec<String> {
    spec["resolvers"]
        .as_object()
        .map(|rs| {
            rs.iter()
                .filter(|(_, r)| r["params"][name] == json!("arg"))
                .map(|(n, _)| n.clone())
                .collect()
        })
        .unwrap_or_default()
}

fn op_rename(spec: &mut Value, rng: &mut Rng) -> Option<String> {
    let objects = object_schemas(spec);
    let at = rng.pick(&objects)?.clone();
    let names: Vec<String> = spec.pointer(&at)?["properties"]
        .as_object()?
        .keys()
        .cloned()
        .collect();
    let old = rng.pick(&names)?.clone();
    let others: Vec<String> = names.iter().filter(|n| **n != old).cloned().collect();
    let new = awkward(rng, &others);
    if names.contains(&new) {
        return None;
    }
    rename_property(spec, &at, &old, &new);
    // At a tool's input root, the resolvers taking it as "arg" follow (mostly).
    let input_root =
        at.starts_with("/tools/") && at.ends_with("/input") && at.matches('/').count() == 3;
    let mut also = String::new();
    if input_root && rng.chance(80) {
        for r in arg_resolvers(spec, &old) {
            let params = map_at(spec, &format!("/resolvers/{}/params", seg(&r)))?;
            let renamed: Map<String, Value> = params
                .clone()
                .into_iter()
                .map(|(k, v)| if k == old { (new.clone(), v) } else { (k, v) })
                .collect();
            *params = renamed;
            also.push_str(&format!(" (and resolver `{r}`'s param)"));
        }
    }
    Some(format!("rename {at}/properties/{old} -> {new:?}{also}"))
}

/// A piece of the pool, biased towards keyword-rich ones: the larger of two random picks.
fn rich(rng: &mut Rng, pool: &[Piece]) -> Option<Piece> {
    let a = rng.pick(pool)?;
    let b = rng.pick(pool)?;
    let size = |p: &Piece| p.schema.to_string().len();
    Some(if size(a) >= size(b) { a } else { b }.clone())
}

fn op_swap(spec: &mut Value, rng: &mut Rng, pool: &[Piece]) -> Option<String> {
    let props = property_schemas(spec);
    let at = rng.pick(&props)?.clone();
    let piece = rich(rng, pool)?;
    let schema = transplant(spec, &piece);
    let shown = compact(&schema);
    *spec.pointer_mut(&at)? = schema;
    Some(format!("swap {at} = {shown}"))
}

fn op_required(spec: &mut Value, rng: &mut Rng) -> Option<String> {
    let objects = object_schemas(spec);
    let at = rng.pick(&objects)?.clone();
    let obj = map_at(spec, &at)?;
    let names: Vec<String> = obj["properties"].as_object()?.keys().cloned().collect();
    let name = if rng.chance(10) {
        "nmae".to_string()
    } else {
        rng.pick(&names)?.clone()
    };
    let req = obj
        .entry("required")
        .or_insert_with(|| json!([]))
        .as_array_mut()?;
    if let Some(i) = req.iter().position(|r| r.as_str() == Some(&name)) {
        req.remove(i);
        Some(format!("unrequire {at} {name}"))
    } else {
        req.push(json!(name));
        Some(format!("require {at} {name}"))
    }
}

fn op_defs(spec: &mut Value, rng: &mut Rng) -> Option<String> {
    let def_names: Vec<String> = spec["$defs"]
        .as_object()
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default();
    let props = property_schemas(spec);
    match rng.below(4) {
        // Extract a property's schema into `$defs`.
        0 => {
            let at = rng.pick(&props)?.clone();
            let schema = spec.pointer(&at)?.clone();
            const NAMES: &[&str] = &[
                "Thing",
                "HTTPServer",
                "Type2",
                "Extracted",
                "Self_",
                "Résumé",
            ];
            let name = rng.pick(NAMES)?.to_string();
            if def_names.contains(&name) {
                return None;
            }
            spec.as_object_mut()?
                .entry("$defs")
                .or_insert_with(|| json!({}))
                .as_object_mut()?
                .insert(name.clone(), schema);
            *spec.pointer_mut(&at)? = json!({"$ref": format!("#/$defs/{name}")});
            Some(format!("extract {at} into $defs/{name}"))
        }
        // Reference a type at a property: plain, nullable, array of.
        1 => {
            let at = rng.pick(&props)?.clone();
            let name = rng.pick(&def_names)?.clone();
            let r = json!({"$ref": format!("#/$defs/{name}")});
            let (how, schema) = match rng.below(3) {
                0 => ("ref", r),
                1 => ("nullable ref", json!({"anyOf": [r, {"type": "null"}]})),
                _ => ("array of ref", json!({"type": "array", "items": r})),
            };
            *spec.pointer_mut(&at)? = schema;
            Some(format!("{how} {at} -> $defs/{name}"))
        }
        // Inline one reference.
        2 => {
            let at = props
                .iter()
                .filter(|p| {
                    spec.pointer(p)
                        .and_then(|s| s.get("$ref"))
                        .and_then(Value::as_str)
                        .is_some_and(|r| r.starts_with("#/$defs/"))
                })
                .cloned()
                .collect::<Vec<_>>();
            let at = rng.pick(&at)?.clone();
            let r = spec.pointer(&at)?["$ref"].as_str()?.to_string();
            let def = spec.pointer(&r[1..])?.clone();
            *spec.pointer_mut(&at)? = def;
            Some(format!("inline {at} ({r})"))
        }
        // Remove a type (its references then dangle, unless nothing uses it).
        _ => {
            let name = rng.pick(&def_names)?.clone();
            spec["$defs"].as_object_mut()?.shift_remove(&name);
            Some(format!("remove $defs/{name}"))
        }
    }
}

fn op_output(spec: &mut Value, rng: &mut Rng, pool: &[Piece]) -> Option<String> {
    let names: Vec<String> = spec["tools"].as_object()?.keys().cloned().collect();
    let name = rng.pick(&names)?.clone();
    let at = format!("/tools/{}", seg(&name));
    let current = spec.pointer(&at)?.get("output").cloned();
    let (how, new) = match (current, rng.below(5)) {
        (Some(o), 0) => ("array of", Some(json!({"type": "array", "items": o}))),
        (Some(o), 1) => ("nullable", Some(json!({"anyOf": [o, {"type": "null"}]}))),
        (Some(_), 2) => ("removed", None),
        (_, 3) => {
            let defs: Vec<String> = spec["$defs"]
                .as_object()
                .map(|d| d.keys().cloned().collect())
                .unwrap_or_default();
            let d = rng.pick(&defs)?.clone();
            ("bare $ref", Some(json!({"$ref": format!("#/$defs/{d}")})))
        }
        _ => {
            let piece = rich(rng, pool)?;
            ("from the pool", Some(transplant(spec, &piece)))
        }
    };
    let tool = map_at(spec, &at)?;
    let shown = new.as_ref().map(compact).unwrap_or_default();
    match new {
        Some(o) => tool.insert("output".into(), o),
        None => tool.remove("output"),
    };
    Some(format!("output {how} {at} {shown}"))
}

fn flat_form(rng: &mut Rng) -> Value {
    if rng.chance(15) {
        // Not a flat form: `check` must say so, located.
        return json!({"type": "object", "properties": {"nested": {"type": "object"}}});
    }
    json!({
        "type": "object",
        "description": nasty_description(rng),
        "properties": {
            "ok": {"type": "boolean", "description": "Go on?"},
            "note": {"type": "string", "maxLength": 20, "description": "`why` */"},
            "level": {"type": "string", "enum": ["low", "high", "a-b"]},
            "count": {"type": "integer", "minimum": 0, "default": 1},
            "type": {"type": "number"}
        },
        "required": ["ok"]
    })
}

fn op_resolver(spec: &mut Value, rng: &mut Rng, pool: &[Piece], k: usize) -> Option<String> {
    let tools = tools_with_properties(spec);
    let (tool, props) = rng.pick(&tools)?.clone();
    let arg = rng.pick(&props)?.clone();
    const NAMES: &[&str] = &[
        "lookup",
        "fetch_it",
        "r#match",
        "type_of",
        "ask_user",
        "sample_it",
    ];
    let name = format!("{}_{k}", rng.pick(NAMES)?);
    let mut params = Map::new();
    params.insert(arg.clone(), json!("arg"));
    if rng.chance(40) {
        params.insert("ctx".into(), json!("context"));
    }
    // The verified caller, in a spec with `auth` (no draw otherwise: the other seeds' mutants
    // stay the same).
    if spec.get("auth").is_some() && rng.chance(50) {
        params.insert("caller".into(), json!("principal"));
    }
    let existing: Vec<String> = spec["resolvers"]
        .as_object()
        .map(|r| r.keys().cloned().collect())
        .unwrap_or_default();
    if rng.chance(25)
        && let Some(prev) = rng.pick(&existing)
    {
        params.insert("prev".into(), json!({"resolver": prev}));
    }
    let mut resolver = Map::new();
    resolver.insert("description".into(), json!(nasty_description(rng)));
    let kind = rng.below(5);
    let mut outcome = false;
    match kind {
        0 => {
            resolver.insert("asks".into(), json!("elicit"));
            resolver.insert("returns".into(), flat_form(rng));
            outcome = rng.chance(40);
        }
        1 => {
            resolver.insert("asks".into(), json!("sample"));
        }
        2 => {
            resolver.insert("asks".into(), json!("roots"));
        }
        _ => {
            let piece = rich(rng, pool)?;
            let returns = transplant(spec, &piece);
            resolver.insert("returns".into(), returns);
        }
    }
    resolver.insert("params".into(), Value::Object(params));
    let root = spec.as_object_mut()?;
    root.entry("resolvers")
        .or_insert_with(|| json!({}))
        .as_object_mut()?
        .insert(name.clone(), Value::Object(resolver));
    const PARAMS: &[&str] = &["extra", "type", "ctx", "args", "state", "fn", "value2"];
    let param = rng.pick(PARAMS)?.to_string();
    let binding = if outcome {
        json!({"resolver": name, "outcome": true})
    } else {
        json!(name)
    };
    let t = map_at(spec, &format!("/tools/{}", seg(&tool)))?;
    t.entry("resolve")
        .or_insert_with(|| json!({}))
        .as_object_mut()?
        .insert(param.clone(), binding);
    let arg_type = spec
        .pointer(&format!(
            "/tools/{}/input/properties/{}",
            seg(&tool),
            seg(&arg)
        ))
        .map(compact)
        .unwrap_or_default();
    Some(format!(
        "resolver {name} (kind {kind}) on tool {tool} param {param}, arg {arg:?}: {arg_type}"
    ))
}

fn op_prompt(spec: &mut Value, rng: &mut Rng, k: usize) -> Option<String> {
    let mut args = Map::new();
    let mut names = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let n = awkward(rng, &names);
        if names.contains(&n) {
            continue;
        }
        names.push(n.clone());
        args.insert(
            n,
            json!({"description": nasty_description(rng), "required": rng.chance(50)}),
        );
    }
    let mut prompt = Map::new();
    prompt.insert("description".into(), json!(nasty_description(rng)));
    prompt.insert("arguments".into(), Value::Object(args));
    if rng.chance(60) {
        let text: String = names
            .iter()
            .map(|n| format!("{{{n}}} "))
            .collect::<String>()
            + "{{literal}}";
        prompt.insert("messages".into(), json!([{"role": "user", "text": text}]));
    }
    let name = format!("prompt-{k}");
    spec.as_object_mut()?
        .entry("prompts")
        .or_insert_with(|| json!({}))
        .as_object_mut()?
        .insert(name.clone(), Value::Object(prompt));
    Some(format!("prompt {name} args {names:?}"))
}

fn op_describe(spec: &mut Value, rng: &mut Rng) -> Option<String> {
    let mut places: Vec<String> = property_schemas(spec);
    for section in ["tools", "resolvers", "prompts", "$defs"] {
        if let Some(items) = spec[section].as_object() {
            for n in items.keys() {
                places.push(format!("/{section}/{}", seg(n)));
            }
        }
    }
    let at = rng.pick(&places)?.clone();
    let text = nasty_description(rng);
    let m = spec.pointer_mut(&at)?.as_object_mut()?;
    m.insert("description".into(), json!(text));
    Some(format!("describe {at} {text:?}"))
}

fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 90 {
        format!("{}…", s.chars().take(90).collect::<String>())
    } else {
        s
    }
}

/// One mutant: a cut seed and 2 to 5 edits.
fn mutant(seed: &Value, pool: &[Piece], rng: &mut Rng, k: usize) -> (Value, Vec<String>) {
    let mut spec = cut(seed, rng, &format!("Mutant {k}"));
    let mut ops = Vec::new();
    let n = 2 + rng.below(4);
    let mut tries = 0;
    while ops.len() < n && tries < 20 {
        tries += 1;
        let done = match rng.below(16) {
            0..=3 => op_rename(&mut spec, rng),
            4..=6 => op_swap(&mut spec, rng, pool),
            7 => op_required(&mut spec, rng),
            8 | 9 => op_defs(&mut spec, rng),
            10 | 11 => op_output(&mut spec, rng, pool),
            12 | 13 => op_resolver(&mut spec, rng, pool, k),
            14 => op_prompt(&mut spec, rng, k),
            _ => op_describe(&mut spec, rng),
        };
        ops.extend(done);
    }
    (spec, ops)
}

// ---------------------------------------------------------------------------------------------
// Checking the verdict of `check`.

/// The problems with the diagnostics of a rejected spec (empty: all located).
fn unlocated(report: &mcpgen::diagnostics::Report, text: &str, spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if !report.has_errors() {
        out.push("rejected without an error".into());
    }
    for d in &report.diagnostics {
        match (&d.pointer, &d.span) {
            (Some(p), Some(span)) => {
                if spec.pointer(p.as_str()).is_none() {
                    out.push(format!(
                        "pointer {} is not in the spec: {}",
                        p.as_str(),
                        d.message
                    ));
                }
                if span.start > span.end || span.end > text.len() {
                    out.push(format!("span {span:?} is outside the text: {}", d.message));
                }
            }
            _ => out.push(format!("unlocated [{}] {}", d.code, d.message)),
        }
        if d.message.is_empty() {
            out.push(format!("[{}] has no message", d.code));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Advertised documents.

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The problems of one advertised document: not a valid 2020-12 schema, does not compile, or a
/// `$ref` that does not resolve inside it; tool schemas must also have an object root.
fn schema_problems(schema: &Value, tool: bool) -> Vec<String> {
    let mut out = Vec::new();
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        out.push(format!(
            "not a valid 2020-12 schema: {e} at {}",
            e.instance_path()
        ));
    }
    if let Err(e) = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
    {
        out.push(format!("does not compile: {e}"));
    }
    if tool && schema.get("type") != Some(&json!("object")) {
        out.push("no \"type\": \"object\" at the root".into());
    }
    let mut all = Vec::new();
    refs_in(schema, &mut all);
    for r in all {
        let resolves = r
            .strip_prefix('#')
            .and_then(percent_decode)
            .is_some_and(|p| p.is_empty() || schema.pointer(&p).is_some());
        if !resolves {
            out.push(format!("$ref {r:?} does not resolve inside the document"));
        }
    }
    out
}

/// The elicitation forms of `checked`, as the generator computes them.
fn forms(checked: &Checked) -> Vec<(String, Value)> {
    Signatures::new(&checked.model, &checked.types)
        .forms_of()
        .into_iter()
        .map(|(ty, s)| (ty.to_string(), s))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Building and serving.

/// A JSON-RPC session with a server over stdio.
struct Session {
    child: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Session {
    fn start(bin: &Path) -> Result<(Self, Value), String> {
        let mut child = Command::new(bin)
            // A mutant of a spec with `auth` (required by default) starts over stdio only with
            // a principal from the environment; the others ignore it.
            .env("MCP_PRINCIPAL_SUBJECT", "mutant")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Session {
            child,
            stdout,
            next: 1,
        };
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}, "sampling": {}, "roots": {}},
                   "clientInfo": {"name": "mutants", "version": "1"}}),
        )?;
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok((s, init))
    }

    fn send(&mut self, message: Value) -> Result<(), String> {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").map_err(|e| e.to_string())?;
        stdin.flush().map_err(|e| e.to_string())
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let mut line = String::new();
            if self
                .stdout
                .read_line(&mut line)
                .map_err(|e| e.to_string())?
                == 0
            {
                return Err(format!(
                    "the server closed stdout before answering {method}"
                ));
            }
            let v: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
            if v["id"] == json!(id) {
                return Ok(v);
            }
        }
    }

    /// Every item of a paginated list method.
    fn list(&mut self, method: &str, key: &str) -> Result<Vec<Value>, String> {
        let mut items = Vec::new();
        let mut params = json!({});
        loop {
            let answer = self.request(method, params)?;
            let result = &answer["result"];
            items.extend(
                result[key]
                    .as_array()
                    .ok_or_else(|| format!("{method}: {answer}"))?
                    .iter()
                    .cloned(),
            );
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(c) => params = json!({"cursor": c}),
                None => return Ok(items),
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes the workspace of `crates` (name, spec file) under `ws` (emptied first).
fn workspace(ws: &Path, crates: &[(String, PathBuf)]) {
    let _ = std::fs::remove_dir_all(ws);
    std::fs::create_dir_all(ws).unwrap();
    let members: Vec<&str> = crates.iter().map(|(n, _)| n.as_str()).collect();
    common::workspace(ws, &members);
    for (name, spec) in crates {
        let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
            .args(["new", name, "--spec"])
            .arg(spec)
            .arg("--dir")
            .arg(ws.join(name))
            .arg("--runtime-path")
            .arg(root().join("runtime"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`mcpgen new` refused {} that `check` accepted: {}",
            spec.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Starts the server `bin` of spec `spec` and returns what is wrong with what it answers.
/// What a server built without the `telemetry` feature does wrong with `--metrics-bind` (exit 2
/// and the exact refusal) and with `OTEL_EXPORTER_OTLP_ENDPOINT` set (the exact warning, once).
fn without_telemetry_problems(bin: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let refused = Command::new(bin)
        .args(["--transport", "stdio", "--metrics-bind", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    if refused.status.code() != Some(2)
        || stderr
            != "error: --metrics-bind: this server was built without its `telemetry` feature \
                (build it with the default features to serve metrics)\n"
    {
        out.push(format!(
            "--metrics-bind without telemetry: exit {:?}, stderr {stderr:?}",
            refused.status.code()
        ));
    }
    let warned = Command::new(bin)
        .args(["--transport", "stdio"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&warned.stderr);
    let warning = "the OpenTelemetry variables ask for OTLP export, but this server was built \
                   without its `telemetry` feature: no spans or metrics are exported";
    // (stdin is empty: the session ends before initialize, whatever the exit code says of it.)
    if stderr.matches(warning).count() != 1 {
        out.push(format!(
            "OTEL_EXPORTER_OTLP_ENDPOINT without telemetry: exit {:?}, stderr {stderr:?}",
            warned.status.code()
        ));
    }
    out
}

fn serve_problems(bin: &Path, spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let (mut session, init) = match Session::start(bin) {
        Ok(s) => s,
        Err(e) => return vec![format!("does not start: {e}")],
    };
    if init.get("result").is_none() {
        out.push(format!("initialize: {init}"));
        return out;
    }
    match session.list("tools/list", "tools") {
        Ok(tools) => {
            let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
            let declared: Vec<&str> = spec["tools"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            if names != declared {
                out.push(format!("tools/list names {names:?}, the spec {declared:?}"));
            }
            for t in &tools {
                for key in ["inputSchema", "outputSchema"] {
                    if let Some(s) = t.get(key) {
                        for p in schema_problems(s, true) {
                            out.push(format!("tool {} {key}: {p}\n  {s}", t["name"]));
                        }
                    }
                }
                let has_output = spec["tools"][t["name"].as_str().unwrap_or_default()]
                    .get("output")
                    .is_some();
                if has_output != t.get("outputSchema").is_some() {
                    out.push(format!(
                        "tool {}: outputSchema advertised: {}, output in the spec: {has_output}",
                        t["name"], !has_output
                    ));
                }
            }
        }
        Err(e) => out.push(format!("tools/list: {e}")),
    }
    if let Some(prompts) = spec.get("prompts").and_then(Value::as_object)
        && !prompts.is_empty()
    {
        match session.list("prompts/list", "prompts") {
            Ok(listed) => {
                let names: Vec<&str> = listed.iter().filter_map(|p| p["name"].as_str()).collect();
                let declared: Vec<&str> = prompts.keys().map(String::as_str).collect();
                if names != declared {
                    out.push(format!(
                        "prompts/list names {names:?}, the spec {declared:?}"
                    ));
                }
            }
            Err(e) => out.push(format!("prompts/list: {e}")),
        }
    }
    out
}

#[test]
fn mutated_specs_that_check_accepts_build_start_and_advertise_valid_schemas() {
    let started = Instant::now();
    let seeds = seeds();
    let pool = pool(&seeds);
    let mut rng = Rng(SEED);
    let base = root().join("target/mutated-specs");
    let spec_dir = base.join("specs");
    let _ = std::fs::remove_dir_all(&spec_dir);
    std::fs::create_dir_all(&spec_dir).unwrap();

    let mut failures: Vec<String> = Vec::new();
    let mut made = 0;
    let mut rejected: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut accepted: Vec<(String, PathBuf, Value)> = Vec::new();
    let mut form_count = 0;
    let mut manifest = String::new();
    while accepted.len() < ACCEPTED && made < MAX_MADE {
        let (seed_name, seed) = &seeds[made % seeds.len()];
        let (spec, ops) = mutant(seed, &pool, &mut rng, made);
        made += 1;
        let text = serde_json::to_string_pretty(&spec).unwrap();
        let name = format!("mutant-{made:03}");
        let file = spec_dir.join(format!("{name}.json"));
        std::fs::write(&file, &text).unwrap();
        let about = format!("{name} (from {seed_name}: {})", ops.join("; "));
        manifest.push_str(&format!("{about}\n"));
        let verdict = std::panic::catch_unwind(|| check_str(&file, &text));
        match verdict {
            Err(_) => failures.push(format!("{about}: check panicked")),
            Ok(Err(report)) => {
                for p in unlocated(&report, &text, &spec) {
                    failures.push(format!("{about}: {p}"));
                }
                let first = report
                    .diagnostics
                    .iter()
                    .find(|d| d.is_error())
                    .map_or("none", |d| d.code.as_str());
                *rejected.entry(first).or_default() += 1;
            }
            Ok(Ok(checked)) => {
                for (ty, form) in forms(&checked) {
                    form_count += 1;
                    for p in schema_problems(&form, false) {
                        failures.push(format!("{about}: form {ty}: {p}\n  {form}"));
                    }
                }
                accepted.push((name, file, spec));
            }
        }
    }
    let checked_in = started.elapsed();
    std::fs::write(base.join("mutants.txt"), &manifest).unwrap();

    let ws = base.join("ws");
    let target = common::target_dir();
    // The known failures join the workspace, to show that they still fail.
    let known: Vec<(String, PathBuf, Value)> = KNOWN_FAILURES
        .iter()
        .map(|k| {
            let file = root().join("tests/mutants").join(k);
            let spec = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            let name = format!("known-{}", k.trim_end_matches(".json"));
            (name, file, spec)
        })
        .collect();
    let crates: Vec<(String, PathBuf)> = accepted
        .iter()
        .chain(&known)
        .map(|(n, f, _)| (n.clone(), f.clone()))
        .collect();
    workspace(&ws, &crates);
    // No binary of an earlier run may stand in for one that does not build now.
    if let Ok(entries) = std::fs::read_dir(target.join("debug")) {
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if file.starts_with("mutant-") || file.starts_with("known-") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    // One pass that builds and lints: clippy's driver as the workspace members' compiler, as
    // `cargo clippy` runs it but with code generation, so the binaries come out of the same
    // compilation (deps are compiled by rustc as usual). `--keep-going`: one crate that does
    // not build hides none of the others. Without the default feature `telemetry`: these crates
    // are only started and listed, and the OpenTelemetry crates add about 40 % to the
    // dependencies' build and 30 % to each crate's (the examples build and lint the feature).
    let out = common::cargo(
        &ws,
        &[
            "build",
            "--workspace",
            "--keep-going",
            "--no-default-features",
        ],
        Lints::Clippy,
    );
    let build = if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let built = started.elapsed();
    let mut served = 0;
    let mut broken = Vec::new();
    for (name, file, spec) in accepted.iter().chain(&known) {
        let bin = target.join("debug").join(name);
        let problems = if bin.exists() {
            serve_problems(&bin, spec)
        } else {
            vec!["does not build clippy-clean (see the cargo output below)".to_string()]
        };
        if name.starts_with("known-") {
            if problems.is_empty() {
                failures.push(format!(
                    "{}: builds and serves now; remove it from KNOWN_FAILURES and tests/mutants/",
                    file.display()
                ));
            }
            continue;
        }
        if problems.is_empty() {
            served += 1;
        } else {
            broken.push(name.clone());
        }
        for p in problems {
            failures.push(format!("{name} ({}): {p}", file.display()));
        }
    }
    if let Err(e) = &build
        && !broken.is_empty()
    {
        failures.push(format!("cargo build:\n{e}"));
    }
    // Built without the `telemetry` feature, a server refuses `--metrics-bind` and warns that
    // the OTLP variables are ignored (the runtime's own tests run with the feature).
    // A spec with `auth` would refuse stdio without a principal: one without.
    let plain = accepted
        .iter()
        .find(|(n, _, spec)| spec.get("auth").is_none() && target.join("debug").join(n).exists());
    match plain {
        Some((name, _, _)) => {
            failures.extend(without_telemetry_problems(&target.join("debug").join(name)))
        }
        None => failures.push("no mutant without `auth` built: telemetry-off not tried".into()),
    }
    let served_at = started.elapsed();
    eprintln!(
        "mutated specs: {made} made, {} rejected by check (by first error: {rejected:?}), {} accepted \
         ({form_count} elicitation forms), {} built clippy-clean, {served} started and listed their \
         tools; check {:.1?}, build and clippy {:.1?}, serve {:.1?}",
        made - accepted.len(),
        accepted.len(),
        accepted.len()
            - broken
                .iter()
                .filter(|b| !target.join("debug").join(b).exists())
                .count(),
        checked_in,
        built - checked_in,
        served_at - built,
    );
    assert!(
        accepted.len() >= ACCEPTED,
        "only {} of {made} mutants accepted",
        accepted.len()
    );
    if failures.is_empty() {
        // About 90 binaries and libraries nothing else uses (2.7 GB with line tables): gone once
        // they have passed (kept for a look when something failed; cargo builds them again when
        // their files are missing).
        common::remove_outputs(&["mutant-", "known-"]);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
