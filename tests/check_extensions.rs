//! `x-` keys: kept and ignored on every object of the spec format, left alone inside JSON
//! Schemas (where they are keywords like any other) and in maps of names (where they are names);
//! and every other decoding problem is located at the offending key or value, never at 1:1.

use mcpgen::check::check_str;
use mcpgen::spec::format::format_schema;
use serde_json::{Value, json};

/// A spec with an `x-` key on every kind of object the format has.
const EVERYWHERE: &str = r##"{
  "name": "Everywhere",
  "x-top": 1,
  "$defs": {"Form": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "x-ui": "keyword"}},
  "resolvers": {
    "base": {"params": {"ctx": "context"}, "returns": {"type": "string"}, "x-resolver": 2},
    "ask": {"params": {"v": {"resolver": "base", "x-source": 3}}, "returns": {"$ref": "#/$defs/Form"}, "asks": "elicit"}
  },
  "tools": {
    "t": {
      "title": "T",
      "description": "d",
      "x-tool": 4,
      "annotations": {"readOnlyHint": true, "x-annotation": 5},
      "input": {"type": "object", "properties": {"q": {"type": "string", "x-widget": "text"}}, "x-schema": true},
      "resolve": {"b": "base", "o": {"resolver": "ask", "outcome": true, "x-binding": 6}}
    }
  },
  "prompts": {
    "code": {"description": "d", "x-prompt": 7, "arguments": {"a": {"required": true, "x-argument": 8}}, "resolve": {"b": {"resolver": "base", "x-binding": 9}}},
    "fixed": {"description": "d", "messages": [
      {"role": "user", "text": "hi", "x-message": 10},
      {"role": "user", "image": {"data": "aGk=", "mimeType": "image/png", "x-image": 11}}
    ]}
  },
  "resources": {"res://a": {"name": "a", "text": "a", "x-resource": 12}},
  "resourceTemplates": {"res://{id}": {"name": "item", "complete": {"id": ["1"]}, "x-template": 13}},
  "notifications": {"toolsListChanged": true, "x-notifications": 14},
  "auth": {"required": false, "x-auth": 15},
  "limits": {"timeoutMs": 1000, "x-limits": 16}
}
"##;

#[test]
fn x_keys_on_every_object_of_the_format_are_kept_and_ignored() {
    let checked = check_str("spec.json", EVERYWHERE).expect("x- keys are allowed everywhere");
    let kept: Vec<(&str, &Value)> = checked
        .loaded
        .extensions
        .iter()
        .map(|(p, v)| (p.as_str(), v))
        .collect();
    assert_eq!(
        kept,
        vec![
            ("/x-top", &json!(1)),
            ("/resolvers/base/x-resolver", &json!(2)),
            ("/resolvers/ask/params/v/x-source", &json!(3)),
            ("/tools/t/x-tool", &json!(4)),
            ("/tools/t/annotations/x-annotation", &json!(5)),
            ("/tools/t/resolve/o/x-binding", &json!(6)),
            ("/prompts/code/x-prompt", &json!(7)),
            ("/prompts/code/arguments/a/x-argument", &json!(8)),
            ("/prompts/code/resolve/b/x-binding", &json!(9)),
            ("/prompts/fixed/messages/0/x-message", &json!(10)),
            ("/prompts/fixed/messages/1/image/x-image", &json!(11)),
            ("/resources/res:~1~1a/x-resource", &json!(12)),
            ("/resourceTemplates/res:~1~1{id}/x-template", &json!(13)),
            ("/notifications/x-notifications", &json!(14)),
            ("/auth/x-auth", &json!(15)),
            ("/limits/x-limits", &json!(16)),
        ]
    );
    // Inside JSON Schemas they are keywords, kept in the schema as written.
    let spec = &checked.loaded.spec;
    assert_eq!(spec.defs["Form"]["x-ui"], json!("keyword"));
    let input = spec.tools["t"].input.as_ref().unwrap();
    assert_eq!(input["x-schema"], json!(true));
    assert_eq!(input["properties"]["q"]["x-widget"], json!("text"));
}

#[test]
fn the_format_schema_allows_x_keys_wherever_it_closes_an_object() {
    fn walk(v: &Value, at: &str, closed: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if m.get("additionalProperties") == Some(&json!(false)) {
                    assert_eq!(
                        m.get("patternProperties"),
                        Some(&json!({"^x-": {}})),
                        "{at}"
                    );
                    closed.push(at.to_string());
                }
                for (k, c) in m {
                    walk(c, &format!("{at}/{k}"), closed);
                }
            }
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, c)| walk(c, &format!("{at}/{i}"), closed)),
            _ => {}
        }
    }
    let mut closed = Vec::new();
    walk(&format_schema(), "", &mut closed);
    closed.sort();
    assert_eq!(
        closed,
        vec![
            "",
            "/$defs/Annotations",
            "/$defs/Auth",
            "/$defs/DetailedBinding",
            "/$defs/Image",
            "/$defs/Limits",
            "/$defs/Notifications",
            "/$defs/Prompt",
            "/$defs/PromptArgument",
            "/$defs/PromptMessage",
            "/$defs/Resolver",
            "/$defs/ResolverSource",
            "/$defs/Resource",
            "/$defs/ResourceTemplate",
            "/$defs/Tool",
        ]
    );
}

#[test]
fn in_maps_of_names_an_x_key_is_a_name() {
    let text = EVERYWHERE.replace(
        r#""resources": {"#,
        r#""resources": {"x-res": {"text": "a"}, "#,
    );
    let report = check_str("spec.json", &text).err().expect("rejected");
    let d = &report.diagnostics[0];
    assert_eq!(d.message, "resource `x-res` lacks the required key `name`");
    assert_eq!(d.pointer.as_ref().unwrap().as_str(), "/resources/x-res");
}

/// Line and column (1-based) where `rest`, a tail of `text`, starts.
fn at(text: &str, rest: &str) -> (usize, usize) {
    let offset = text.len() - rest.len();
    let before = &text[..offset];
    (
        before.matches('\n').count() + 1,
        before.rsplit('\n').next().unwrap().chars().count() + 1,
    )
}

#[test]
fn unknown_keys_and_wrong_types_anywhere_are_located_at_the_offending_item() {
    // (what the spec says instead, where the error is, the text it points at, the message)
    let cases = [
        (
            (r#""x-prompt": 7"#, r#""xprompt": 7"#),
            "/prompts/code/xprompt",
            r#""xprompt""#,
            "unknown key `xprompt` in prompt `code`",
        ),
        (
            (r#""x-argument": 8"#, r#""requird": true"#),
            "/prompts/code/arguments/a/requird",
            r#""requird""#,
            "unknown key `requird` in argument `a` of prompt `code`",
        ),
        (
            (r#""x-message": 10"#, r#""x-message": 10, "rol": 1"#),
            "/prompts/fixed/messages/0/rol",
            r#""rol""#,
            "unknown key `rol` in message 0 of prompt `fixed`",
        ),
        (
            (r#""x-resource": 12"#, r#""mimetype": "text/plain""#),
            "/resources/res:~1~1a/mimetype",
            r#""mimetype""#,
            "unknown key `mimetype` in resource `res://a`",
        ),
        (
            (r#""x-template": 13"#, r#""exemptFromPathChecks": "id""#),
            "/resourceTemplates/res:~1~1{id}/exemptFromPathChecks",
            r#""id""#,
            "wrong value type for `exemptFromPathChecks` of template `res://{id}`: expected an array, found a string",
        ),
        (
            (
                r#""toolsListChanged": true"#,
                r#""toolsListChanged": "yes""#,
            ),
            "/notifications/toolsListChanged",
            r#""yes""#,
            "wrong value type for `toolsListChanged` of `notifications`: expected a boolean, found a string",
        ),
        (
            (r#""required": true, "x-argument": 8"#, r#""required": 1"#),
            "/prompts/code/arguments/a/required",
            "1}",
            "wrong value type for `required` of argument `a` of prompt `code`: expected a boolean, found a number",
        ),
    ];
    for ((from, to), pointer, needle, message) in cases {
        let text = EVERYWHERE.replacen(from, to, 1);
        assert_ne!(text, EVERYWHERE, "{from}");
        let report = check_str("spec.json", &text).err().expect("rejected");
        assert_eq!(report.diagnostics.len(), 1, "{:#?}", report.diagnostics);
        let d = &report.diagnostics[0];
        let lc = report.line_col(d).unwrap();
        let start = text.find(to).unwrap();
        let offset = start + text[start..].find(needle).unwrap();
        assert_eq!(
            (
                d.message.as_str(),
                d.pointer.as_ref().unwrap().as_str(),
                (lc.line, lc.column)
            ),
            (message, pointer, at(&text, &text[offset..])),
            "{from}"
        );
    }
}
