//! The README's "Testing" section (`templates/README.md.j2`): the crate's names, what an older
//! crate adds to get the test kit (taken from the `Cargo.toml` `new` writes, so the two cannot
//! differ), and a worked example: the one change to `src/handlers.rs` and a complete test, with an
//! accepted answer and a decline, for the crate's first tool whose only resolver asks a form
//! question. `tests/readme_testing.rs` follows it word for word on a crate of its own.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::model::wire::form_document;
use crate::model::{Model, Param, Tool};
use crate::names;

/// What the section shows.
#[derive(Debug, Clone, Serialize)]
pub struct TestingView {
    /// The crate's name as Rust spells it in paths (`my_server` for `my-server`).
    pub crate_ident: String,
    /// `src/lib.rs` of an older crate.
    pub lib_rs: String,
    /// The dependency lines the kit adds to `[dependencies]` (empty when none).
    pub optional_deps: String,
    /// The tables the kit adds to `Cargo.toml` (`[lib]`, `[features]`, `[dev-dependencies]`).
    pub manifest: String,
    /// The worked example, when some tool qualifies.
    pub example: Option<Example>,
}

/// A test for a tool that asks.
#[derive(Debug, Clone, Serialize)]
pub struct Example {
    /// The tool's name.
    pub tool: String,
    /// The tool's method (and the name of its test in `tests/tools.rs`).
    pub tool_method: String,
    /// The resolver that asks.
    pub resolver: String,
    /// Its method in `Resolvers`.
    pub resolver_method: String,
    /// The stub's line the change replaces.
    pub stub: String,
    /// The line that replaces it.
    pub change: String,
    /// The test file's name, without `tests/` and `.rs`.
    pub file: String,
    /// The test file.
    pub test: String,
    /// True when the tool takes the whole outcome (`"outcome": true`).
    pub outcome: bool,
}

/// The section's view of a crate named `crate_name` whose `new` manifest is `cargo_toml`.
pub fn testing_view(
    model: &Model,
    crate_name: &str,
    state_type: &str,
    cargo_toml: &str,
    build_rs: bool,
) -> TestingView {
    let crate_ident = crate_name.replace('-', "_");
    let lib_rs = if build_rs {
        "/// The code mcpgen generates from the spec (by `build.rs`, into `OUT_DIR`).\n\
         pub mod generated {\n    include!(concat!(env!(\"OUT_DIR\"), \"/mcpgen/generated.rs\"));\n}\n\
         pub mod handlers;"
            .to_string()
    } else {
        "#[rustfmt::skip]\npub mod generated;\npub mod handlers;".to_string()
    };
    let (optional_deps, manifest) = kit_manifest(cargo_toml);
    let example = if model.auth.is_some() {
        // Its clients need a principal over HTTP: `tests/tools.rs` shows how.
        None
    } else {
        model
            .tools
            .iter()
            .find_map(|t| example(model, t, &crate_ident, state_type))
    };
    TestingView {
        crate_ident,
        lib_rs,
        optional_deps,
        manifest,
        example,
    }
}

/// The kit's part of a `new` manifest: its optional dependencies, and its tables.
fn kit_manifest(cargo_toml: &str) -> (String, String) {
    let mut optional = Vec::new();
    let mut tables: Vec<Vec<&str>> = Vec::new();
    let mut section = "";
    for line in cargo_toml.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            section = trimmed;
            if matches!(trimmed, "[lib]" | "[features]" | "[dev-dependencies]") {
                tables.push(vec![line]);
            }
            continue;
        }
        match section {
            "[dependencies]" if trimmed.contains("optional = true") => optional.push(line),
            "[lib]" | "[features]" | "[dev-dependencies]"
                if !trimmed.is_empty() && !trimmed.starts_with('#') =>
            {
                tables.last_mut().expect("a table").push(line)
            }
            _ => {}
        }
    }
    let tables = (tables.iter().map(|t| t.join("\n")))
        .collect::<Vec<_>>()
        .join("\n\n");
    (optional.join("\n"), tables)
}

/// The example for tool `t`, when its one resolver asks a form question and a valid argument
/// and a valid answer can be written without knowing more.
fn example(model: &Model, t: &Tool, crate_ident: &str, state_type: &str) -> Option<Example> {
    let [id] = t.chain.run_order.as_slice() else {
        return None;
    };
    let r = &model[*id];
    if !r.asks.is_some_and(|a| a.form) || r.params.iter().any(|p| !matches!(p, Param::Arg { .. })) {
        return None;
    }
    let binding = t.chain.bindings.iter().find(|b| b.resolver == *id)?;
    let returns = r.returns.as_ref()?;
    let form = match returns.get("$ref").and_then(Value::as_str) {
        Some(r) => model.defs.get(r.strip_prefix("#/$defs/")?)?,
        None => returns,
    };
    let schema = form_document(&model.defs, form);
    let input = &t.input_schema;
    let args = minimal(input).filter(|v| valid(input, v))?;
    let answer = minimal(&schema).filter(|v| valid(&schema, v))?;

    let tool_method = names::fn_name(&t.name);
    let resolver_method = names::fn_name(&r.name);
    let message = format!("Go ahead with {}?", t.name);
    let stub_error = format!(
        "Error executing tool {}: '{}' is not implemented yet (write it in src/handlers.rs)",
        t.name, t.name
    );
    let declined = if binding.outcome {
        stub_error.clone()
    } else {
        format!(
            "Error executing tool {}: Resolver for parameter '{}' could not resolve: elicitation was decline",
            t.name, binding.param
        )
    };
    let declined_comment = if binding.outcome {
        "Declined: the tool takes the outcome, and its stub answers next."
    } else {
        "Declined: the tool does not run."
    };
    let schema_text = indented(&pretty(&schema), 8);
    // 2026-07-28 sends a form without its top-level `title` (legacy keeps it).
    let (era_import, schema_binding) = if schema.get("title").is_some() {
        (
            "Era, ",
            format!(
                "let mut schema = json!({schema_text});\n        \
                 // 2026-07-28 sends the form without its top-level `title`.\n        \
                 if client.era() == Era::Modern {{\n            \
                 schema.as_object_mut().unwrap().remove(\"title\");\n        \
                 }}"
            ),
        )
    } else {
        ("", format!("let schema = json!({schema_text});"))
    };
    let (answer, args) = (inline(&answer), inline(&args));
    let test = format!(
        r#"//! `{tool}` asks before it runs: an accepted answer and a decline, on the four clients.

use {crate_ident}::generated::testing::{{Answer, CallError, {era_import}Question, TestServer}};
use {crate_ident}::handlers::{state_type};
use serde_json::json;

#[tokio::test]
async fn {tool_method}_asks_first() {{
    let server = TestServer::new({state_type}::default());
    for client in server.clients().await {{
        {schema_binding}
        let question = Question::Form {{
            resolver: Some({resolver:?}.into()),
            message: {message:?}.into(),
            schema,
        }};
        // Accepted: the answer reaches the tool, whose stub answers next.
        client.answer_elicitation(|_| Answer::accept(json!({answer})));
        let error = client
            .{tool_method}(serde_json::from_value(json!({args})).unwrap())
            .await
            .unwrap_err();
        assert_eq!(
            error,
            CallError::Tool({stub_error:?}.into()),
            "{{}}",
            client.label()
        );
        // {declined_comment}
        client.decline();
        let error = client
            .{tool_method}(serde_json::from_value(json!({args})).unwrap())
            .await
            .unwrap_err();
        assert_eq!(
            error,
            CallError::Tool({declined:?}.into()),
            "{{}}",
            client.label()
        );
        // The same question both times, from `{resolver}`.
        assert_eq!(
            client.questions(),
            vec![question.clone(), question],
            "{{}}",
            client.label()
        );
    }}
}}"#,
        tool = t.name,
        resolver = r.name,
    );
    Some(Example {
        tool: t.name.clone(),
        tool_method: tool_method.clone(),
        resolver: r.name.clone(),
        resolver_method,
        stub: format!("Err(ToolError::not_implemented({:?}))", r.name),
        change: format!("Ok(Ask::elicit({message:?}))"),
        file: format!("{tool_method}_asks"),
        test,
        outcome: binding.outcome,
    })
}

/// `text` with every line after the first indented by `width` spaces.
fn indented(text: &str, width: usize) -> String {
    text.lines()
        .collect::<Vec<_>>()
        .join(&format!("\n{}", " ".repeat(width)))
}

/// `value` as JSON over several lines, indented by four spaces a level; arrays of scalars on one
/// line.
fn pretty(value: &Value) -> String {
    fn write(value: &Value, level: usize, out: &mut String) {
        let pad = "    ".repeat(level + 1);
        match value {
            Value::Object(map) if !map.is_empty() => {
                out.push_str("{\n");
                for (i, (key, v)) in map.iter().enumerate() {
                    out.push_str(&format!("{pad}{}: ", Value::from(key.as_str())));
                    write(v, level + 1, out);
                    out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
                }
                out.push_str(&format!("{}}}", "    ".repeat(level)));
            }
            other => out.push_str(&inline(other)),
        }
    }
    let mut out = String::new();
    write(value, 0, &mut out);
    out
}

/// `value` as JSON on one line, with a space after each `:` and `,`.
fn inline(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let fields = (map.iter())
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), inline(v)))
                .collect::<Vec<_>>();
            format!("{{{}}}", fields.join(", "))
        }
        Value::Array(items) => {
            let items = items.iter().map(inline).collect::<Vec<_>>();
            format!("[{}]", items.join(", "))
        }
        scalar => scalar.to_string(),
    }
}

/// True when `value` is an instance of `schema`.
fn valid(schema: &Value, value: &Value) -> bool {
    jsonschema::validator_for(schema).is_ok_and(|v| v.is_valid(value))
}

/// A small instance of `schema` (required properties only; a `default`, `const`, `enum` or
/// `examples` value first; `true` for a boolean, so that a confirmation confirms), or `None`
/// when it takes more than that (check it with [`valid`]).
fn minimal(schema: &Value) -> Option<Value> {
    for key in ["const", "default"] {
        if let Some(v) = schema.get(key) {
            return Some(v.clone());
        }
    }
    for key in ["enum", "examples"] {
        if let Some(v) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return Some(v.clone());
        }
    }
    match schema.get("type").and_then(Value::as_str)? {
        "object" => {
            let props = schema.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for name in (schema.get("required").and_then(Value::as_array))
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let prop = props.and_then(|p| p.get(name))?;
                let prop = match prop.get("$ref").and_then(Value::as_str) {
                    Some(r) => {
                        let name = r.strip_prefix("#/$defs/")?;
                        schema.get("$defs").and_then(|d| d.get(name))?
                    }
                    None => prop,
                };
                out.insert(name.to_string(), minimal(prop)?);
            }
            Some(Value::Object(out))
        }
        "string" => {
            let len = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0);
            Some(json!("x".repeat(len.max(1) as usize)))
        }
        "integer" | "number" => Some(schema.get("minimum").cloned().unwrap_or(json!(0))),
        "boolean" => Some(json!(true)),
        "array" if schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) == 0 => {
            Some(json!([]))
        }
        _ => None,
    }
}
