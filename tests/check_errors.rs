//! Every error class of spec-v1.md "Errors found at generation time", with exact expectations:
//! message, line:column, JSON pointer, subjects and suggestions.

use mcpgen::check::check_str;
use mcpgen::diagnostics::{Severity, Subject};

#[derive(Debug, Clone, PartialEq)]
struct Found {
    severity: Severity,
    code: &'static str,
    message: String,
    line: usize,
    column: usize,
    pointer: String,
    help: Option<String>,
    subjects: Vec<Subject>,
    notes: Vec<String>,
}

/// All diagnostics of checking `text` (errors and warnings).
fn diagnostics(text: &str) -> Vec<Found> {
    let report = match check_str("spec.json", text) {
        Ok(c) => c.report,
        Err(r) => r,
    };
    report
        .diagnostics
        .iter()
        .map(|d| {
            let lc = report.line_col(d).expect("every diagnostic is located");
            Found {
                severity: d.severity,
                code: d.code.as_str(),
                message: d.message.clone(),
                line: lc.line,
                column: lc.column,
                pointer: d
                    .pointer
                    .as_ref()
                    .expect("every diagnostic has a pointer")
                    .as_str()
                    .to_string(),
                help: d.help.clone(),
                subjects: d.subjects.clone(),
                notes: d.notes.clone(),
            }
        })
        .collect()
}

fn errors(text: &str) -> Vec<Found> {
    diagnostics(text)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .collect()
}

fn only_error(text: &str) -> Found {
    let e = errors(text);
    assert_eq!(e.len(), 1, "expected exactly one error, got {e:#?}");
    e.into_iter().next().unwrap()
}

/// Line and column (1-based, in characters) of the `nth` occurrence of `needle`.
fn at(text: &str, needle: &str, nth: usize) -> (usize, usize) {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} #{nth} not in spec"))
        .0;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, column)
}

fn tool(n: &str) -> Subject {
    Subject::Tool(n.into())
}
fn resolver(n: &str) -> Subject {
    Subject::Resolver(n.into())
}
fn param(n: &str) -> Subject {
    Subject::Parameter(n.into())
}

const BOOKSHOP: &str = r##"{
  "name": "Bookshop",
  "$defs": {
    "Stock": {"type": "object", "properties": {"title": {"type": "string"}, "copies": {"type": "integer"}}, "required": ["title", "copies"]},
    "Backorder": {"type": "object", "properties": {"confirm": {"type": "boolean", "description": "Order anyway and wait?"}}, "required": ["confirm"]}
  },
  "resolvers": {
    "check_stock": {"params": {"title": "arg"}, "returns": {"$ref": "#/$defs/Stock"}},
    "estimate_delivery": {"params": {"stock": {"resolver": "check_stock"}}, "returns": {"type": "string"}},
    "confirm_backorder": {"params": {"title": "arg", "stock": {"resolver": "check_stock"}}, "returns": {"$ref": "#/$defs/Backorder"}, "asks": "elicit"}
  },
  "tools": {
    "order_book": {
      "description": "Order a book from the shop.",
      "input": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
      "output": {"type": "string"},
      "resolve": {"stock": "check_stock", "delivery": "estimate_delivery", "backorder": "confirm_backorder"}
    }
  }
}
"##;

#[test]
fn the_example_of_spec_v1_is_valid() {
    assert_eq!(diagnostics(BOOKSHOP), vec![]);
}

/// A schema that is valid JSON Schema but that the validator cannot compile (a `$dynamicRef`
/// to an anchor it does not have) would stop the server at start-up: refused at the input.
#[test]
fn an_input_the_validator_cannot_compile_is_an_error() {
    let text = BOOKSHOP.replace(
        r#""properties": {"title": {"type": "string"}}, "required": ["title"]},"#,
        r##""properties": {"title": {"type": "string"}, "xs": {"type": "array", "items": {"$dynamicRef": "#item"}}}, "required": ["title"]},"##,
    );
    let e = only_error(&text);
    let (line, column) = at(
        &text,
        r#"{"type": "object", "properties": {"title": {"type": "string"}, "xs""#,
        0,
    );
    assert_eq!(
        e,
        Found {
            severity: Severity::Error,
            code: "invalid-schema",
            message: "the input schema of tool `order_book` does not compile with the JSON \
                      Schema validator, as the server would at start-up: Anchor 'item' does not \
                      exist"
                .into(),
            line,
            column,
            pointer: "/tools/order_book/input".into(),
            help: Some(
                "every `$ref`, `$dynamicRef` and anchor must resolve inside the schema".into()
            ),
            subjects: vec![tool("order_book")],
            notes: vec![],
        }
    );
}

#[test]
fn invalid_json_is_located() {
    let text = BOOKSHOP.replace(r#""name": "Bookshop","#, r#""name": "Bookshop""#);
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-json");
    assert_eq!(e.message, "invalid JSON: expected `,` or `}`");
    assert_eq!((e.line, e.column), (3, 3));
    assert_eq!(e.pointer, "");
}

#[test]
fn duplicate_keys_are_errors() {
    let text = BOOKSHOP.replace(
        r#""name": "Bookshop","#,
        r#""name": "Bookshop", "name": "Other","#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "duplicate-key");
    assert_eq!(
        e.message,
        "duplicate key `name`: JSON objects in a spec must not repeat a key"
    );
    assert_eq!((e.line, e.column), at(&text, r#""name""#, 1));
    assert_eq!(e.pointer, "/name");
}

#[test]
fn unknown_keys_are_errors_with_a_suggestion() {
    let text = BOOKSHOP.replace(r#""description": "Order"#, r#""descripton": "Order"#);
    let e = errors(&text);
    assert_eq!(e.len(), 2, "{e:#?}");
    // The required description is now missing: reported at the tool, which comes first.
    assert_eq!(e[0].code, "missing-key");
    assert_eq!(
        e[0].message,
        "tool `order_book` lacks the required key `description`"
    );
    assert_eq!(e[0].pointer, "/tools/order_book");
    assert_eq!(
        (e[0].line, e[0].column),
        at(&text, "{\n      \"descripton\"", 0)
    );
    assert_eq!(e[1].code, "unknown-key");
    assert_eq!(
        e[1].message,
        "unknown key `descripton` in tool `order_book`"
    );
    assert_eq!(e[1].help.as_deref(), Some("did you mean `description`?"));
    assert_eq!(e[1].pointer, "/tools/order_book/descripton");
    // (The first `"descripton"` is inside the Backorder schema, where unknown keywords are fine.)
    assert_eq!((e[1].line, e[1].column), at(&text, r#""descripton""#, 1));
    assert_eq!(e[1].subjects, vec![tool("order_book")]);
}

#[test]
fn extension_keys_are_kept_and_ignored() {
    let text = BOOKSHOP
        .replace(
            r#""name": "Bookshop","#,
            r#""name": "Bookshop", "x-owner": "shop team","#,
        )
        .replace(
            r#""description": "Order"#,
            r#""x-internal": {"a": 1}, "description": "Order"#,
        );
    let checked = check_str("spec.json", &text).expect("x- keys are allowed");
    let keys: Vec<&str> = checked
        .loaded
        .extensions
        .keys()
        .map(|p| p.as_str())
        .collect();
    assert_eq!(keys, vec!["/x-owner", "/tools/order_book/x-internal"]);
    assert_eq!(checked.loaded.extensions[0], serde_json::json!("shop team"));
}

#[test]
fn wrong_value_types_are_errors() {
    let text = BOOKSHOP.replace(
        r#""description": "Order a book from the shop.""#,
        r#""description": 5"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "wrong-type");
    assert_eq!(
        e.message,
        "wrong value type for `description` of tool `order_book`: expected a string, found a number"
    );
    assert_eq!(e.pointer, "/tools/order_book/description");
    assert_eq!((e.line, e.column), at(&text, "5,", 0));
}

#[test]
fn a_parameter_source_of_none_of_the_three_kinds() {
    let text = BOOKSHOP.replace(
        r##"{"title": "arg"}, "returns": {"$ref": "#/$defs/Stock"}"##,
        r##"{"title": "args"}, "returns": {"$ref": "#/$defs/Stock"}"##,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-param-source");
    assert_eq!(
        e.message,
        r#"the source of parameter `title` of resolver `check_stock` is "args", which is none of the kinds of source: "arg", "context", "principal" or {"resolver": "<name>"}"#
    );
    assert_eq!(e.help.as_deref(), Some(r#"did you mean "arg"?"#));
    assert_eq!(e.pointer, "/resolvers/check_stock/params/title");
    assert_eq!((e.line, e.column), at(&text, r#""args""#, 0));
    assert_eq!(e.subjects, vec![resolver("check_stock"), param("title")]);

    let text = BOOKSHOP.replace(
        r#"{"stock": {"resolver": "check_stock"}}, "returns": {"type": "string"}"#,
        r#"{"stock": {"resolvr": "check_stock"}}, "returns": {"type": "string"}"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-param-source");
    assert_eq!(e.pointer, "/resolvers/estimate_delivery/params/stock");
}

#[test]
fn unknown_resolvers_suggest_the_closest_name() {
    let text = BOOKSHOP.replace(
        r#""stock": "check_stock", "delivery""#,
        r#""stock": "check_stok", "delivery""#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "unknown-resolver");
    assert_eq!(
        e.message,
        "parameter `stock` of tool `order_book` is bound to `check_stok`, which is not a resolver of this spec"
    );
    assert_eq!(e.help.as_deref(), Some("did you mean `check_stock`?"));
    assert_eq!(e.pointer, "/tools/order_book/resolve/stock");
    assert_eq!((e.line, e.column), at(&text, r#""check_stok""#, 0));
    assert_eq!(e.subjects, vec![tool("order_book"), param("stock")]);

    let text = BOOKSHOP.replace(
        r#"{"stock": {"resolver": "check_stock"}}, "returns": {"type": "string"}"#,
        r#"{"stock": {"resolver": "chek_stock"}}, "returns": {"type": "string"}"#,
    );
    let e = only_error(&text);
    assert_eq!(
        e.message,
        "parameter `stock` of resolver `estimate_delivery` takes the value of `chek_stock`, which is not a resolver of this spec"
    );
    assert_eq!(e.help.as_deref(), Some("did you mean `check_stock`?"));
    assert_eq!(
        e.pointer,
        "/resolvers/estimate_delivery/params/stock/resolver"
    );
    assert_eq!((e.line, e.column), at(&text, r#""chek_stock""#, 0));
}

#[test]
fn an_arg_source_that_a_consuming_tool_lacks() {
    // reserve_book uses check_stock (which takes `title`) but has no `title` argument;
    // order_book reaches check_stock only through estimate_delivery.
    let text = BOOKSHOP.replace(
        r#"    "order_book": {"#,
        r#"    "reserve_book": {"description": "Reserve.", "input": {"type": "object", "properties": {"name": {"type": "string"}}}, "resolve": {"stock": "check_stock"}},
    "order_book": {"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "missing-arg");
    assert_eq!(
        e.message,
        "resolver `check_stock` takes `title` from the tool's arguments, but tool `reserve_book` has no argument `title`"
    );
    assert_eq!(e.pointer, "/resolvers/check_stock/params/title");
    assert_eq!((e.line, e.column), at(&text, r#""arg""#, 0));
    assert_eq!(
        e.subjects,
        vec![
            resolver("check_stock"),
            param("title"),
            tool("reserve_book")
        ]
    );

    let text = BOOKSHOP
        .replace(r#""properties": {"title": {"type": "string"}}, "required": ["title"]}"#, r#""properties": {"name": {"type": "string"}}, "required": ["name"]}"#)
        .replace(r#""stock": "check_stock", "delivery": "estimate_delivery", "backorder": "confirm_backorder""#, r#""delivery": "estimate_delivery""#);
    let e = errors(&text);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(
        e[0].message,
        "resolver `check_stock` takes `title` from the tool's arguments, but tool `order_book` (which uses it through `estimate_delivery`) has no argument `title`"
    );
}

#[test]
fn an_arg_typed_differently_by_two_consuming_tools() {
    let text = BOOKSHOP.replace(
        r#"    "order_book": {"#,
        r#"    "reserve_book": {"description": "Reserve.", "input": {"type": "object", "properties": {"title": {"type": "integer"}}, "required": ["title"]}, "resolve": {"stock": "check_stock"}},
    "order_book": {"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "arg-type-mismatch");
    assert_eq!(
        e.message,
        "resolver `check_stock` takes `title` from the tool's arguments, but tools `reserve_book` and `order_book` type it differently: integer and string"
    );
    assert_eq!(e.pointer, "/resolvers/check_stock/params/title");
    assert_eq!(
        e.subjects,
        vec![
            resolver("check_stock"),
            param("title"),
            tool("reserve_book"),
            tool("order_book")
        ]
    );

    // Constraints may differ; optionality may not.
    let differing_constraints = BOOKSHOP.replace(
        r#"    "order_book": {"#,
        r#"    "reserve_book": {"description": "Reserve.", "input": {"type": "object", "properties": {"title": {"type": "string", "minLength": 1}}, "required": ["title"]}, "resolve": {"stock": "check_stock"}},
    "order_book": {"#,
    );
    assert_eq!(errors(&differing_constraints), vec![]);
    let optional = BOOKSHOP.replace(
        r#"    "order_book": {"#,
        r#"    "reserve_book": {"description": "Reserve.", "input": {"type": "object", "properties": {"title": {"type": "string"}}}, "resolve": {"stock": "check_stock"}},
    "order_book": {"#,
    );
    assert_eq!(
        only_error(&optional).message,
        "resolver `check_stock` takes `title` from the tool's arguments, but tools `reserve_book` and `order_book` type it differently: optional string and string"
    );
}

#[test]
fn a_cycle_shows_the_whole_cycle() {
    let text = BOOKSHOP.replace(
        r#""check_stock": {"params": {"title": "arg"}"#,
        r#""check_stock": {"params": {"title": "arg", "eta": {"resolver": "estimate_delivery"}}"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "resolver-cycle");
    assert_eq!(
        e.message,
        "resolvers form a cycle: check_stock -> estimate_delivery -> check_stock"
    );
    assert_eq!(e.pointer, "/resolvers/check_stock/params/eta/resolver");
    assert_eq!((e.line, e.column), at(&text, r#""estimate_delivery"}}"#, 0));
    assert_eq!(
        e.subjects,
        vec![resolver("check_stock"), resolver("estimate_delivery")]
    );

    let self_cycle = BOOKSHOP.replace(
        r#""estimate_delivery": {"params": {"stock": {"resolver": "check_stock"}}"#,
        r#""estimate_delivery": {"params": {"stock": {"resolver": "estimate_delivery"}}"#,
    );
    let e = only_error(&self_cycle);
    assert_eq!(
        e.message,
        "resolvers form a cycle: estimate_delivery -> estimate_delivery"
    );

    let three = r#"{"name": "C", "resolvers": {
  "a": {"params": {"x": {"resolver": "b"}}, "returns": {"type": "string"}},
  "b": {"params": {"x": {"resolver": "c"}}, "returns": {"type": "string"}},
  "c": {"params": {"x": {"resolver": "a"}}, "returns": {"type": "string"}}},
 "tools": {"t": {"description": "d", "resolve": {"v": "b"}}}}"#;
    let e = only_error(three);
    assert_eq!(e.message, "resolvers form a cycle: a -> b -> c -> a");
    assert_eq!((e.line, e.column), (2, 38));
}

#[test]
fn a_resolved_parameter_that_is_also_an_input_property() {
    let text = BOOKSHOP.replace(r#""properties": {"title": {"type": "string"}}, "required": ["title"]}"#, r#""properties": {"title": {"type": "string"}, "stock": {"type": "integer"}}, "required": ["title"]}"#);
    let e = only_error(&text);
    assert_eq!(e.code, "resolved-is-input");
    assert_eq!(
        e.message,
        "parameter `stock` of tool `order_book` is resolved and also an input property; a resolved parameter never comes from the model, so remove it from `input`"
    );
    assert_eq!(e.pointer, "/tools/order_book/resolve/stock");
    assert_eq!(
        (e.line, e.column),
        at(&text, r#""stock": "check_stock""#, 0)
    );
}

#[test]
fn parameter_names_starting_with_an_underscore() {
    let text = BOOKSHOP.replace(
        r#""delivery": "estimate_delivery""#,
        r#""_delivery": "estimate_delivery""#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "underscore-parameter");
    assert_eq!(
        e.message,
        "parameter `_delivery` of tool `order_book` cannot start with `_`"
    );
    assert_eq!(e.pointer, "/tools/order_book/resolve/_delivery");
    assert_eq!((e.line, e.column), at(&text, r#""_delivery""#, 0));

    let text = BOOKSHOP.replace(
        r#"{"stock": {"resolver": "check_stock"}}, "returns": {"type": "string"}"#,
        r#"{"_stock": {"resolver": "check_stock"}}, "returns": {"type": "string"}"#,
    );
    assert_eq!(
        only_error(&text).message,
        "parameter `_stock` of resolver `estimate_delivery` cannot start with `_`"
    );

    assert_eq!(
        only_error(&text).help.as_deref(),
        Some("rename it to `stock`")
    );

    // Input properties may have any name JSON allows (spec-v1.md), `_page` included, and two
    // that become one Rust field (`title` and `_title`) are told apart, not refused.
    let text = BOOKSHOP.replace(
        r#""properties": {"title": {"type": "string"}}, "required""#,
        r#""properties": {"title": {"type": "string"}, "_page": {"type": "integer"}}, "required""#,
    );
    assert_eq!(errors(&text), vec![]);
    let text = BOOKSHOP.replace(
        r#""properties": {"title": {"type": "string"}}, "required""#,
        r#""properties": {"title": {"type": "string"}, "_title": {"type": "integer"}}, "required""#,
    );
    assert_eq!(errors(&text), vec![]);
}

#[test]
fn outcome_on_a_resolver_that_does_not_ask_elicit() {
    let text = BOOKSHOP.replace(
        r#""delivery": "estimate_delivery""#,
        r#""delivery": {"resolver": "estimate_delivery", "outcome": true}"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "outcome-without-elicit");
    assert_eq!(
        e.message,
        r#"parameter `delivery` of tool `order_book` takes the elicitation outcome of resolver `estimate_delivery`, which does not ask anything; `outcome: true` needs a resolver with `"asks": "elicit"`"#
    );
    assert_eq!(e.pointer, "/tools/order_book/resolve/delivery/outcome");
    assert_eq!((e.line, e.column), at(&text, "true}", 0));
    assert_eq!(
        e.subjects,
        vec![
            tool("order_book"),
            param("delivery"),
            resolver("estimate_delivery")
        ]
    );
    // outcome on an elicit resolver is fine
    let ok = BOOKSHOP.replace(
        r#""backorder": "confirm_backorder""#,
        r#""backorder": {"resolver": "confirm_backorder", "outcome": true}"#,
    );
    assert_eq!(errors(&ok), vec![]);
}

#[test]
fn elicit_forms_must_be_flat_objects_of_primitives() {
    let nested = BOOKSHOP.replace(
        r#"{"confirm": {"type": "boolean", "description": "Order anyway and wait?"}}"#,
        r#"{"confirm": {"type": "boolean", "description": "Order anyway and wait?"}, "address": {"type": "object", "properties": {"city": {"type": "string"}}}}"#,
    );
    let e = only_error(&nested);
    assert_eq!(e.code, "elicit-non-primitive");
    assert_eq!(
        e.message,
        "elicitation form of resolver `confirm_backorder`: field `address` is a nested object, which is not a primitive (string, number, integer, boolean or enum)"
    );
    assert_eq!(e.pointer, "/$defs/Backorder/properties/address");
    assert_eq!(
        (e.line, e.column),
        at(&nested, r#"{"type": "object", "properties": {"city""#, 0)
    );
    assert_eq!(
        e.notes,
        vec![
            r#"the field's schema: {"type":"object","properties":{"city":{"type":"string"}}}"#.to_string(),
            "the form is `returns` of resolver `confirm_backorder` at /resolvers/confirm_backorder/returns".to_string()
        ]
    );
    let reference = BOOKSHOP.replace(
        r#"{"confirm": {"type": "boolean", "description": "Order anyway and wait?"}}"#,
        r##"{"confirm": {"type": "boolean"}, "stock": {"$ref": "#/$defs/Stock"}}"##,
    );
    assert_eq!(
        only_error(&reference).message,
        "elicitation form of resolver `confirm_backorder`: field `stock` is a reference to an object (`#/$defs/Stock`), which is not a primitive (string, number, integer, boolean or enum)"
    );
    let array = BOOKSHOP.replace(
        r#"{"confirm": {"type": "boolean", "description": "Order anyway and wait?"}}"#,
        r#"{"confirm": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}}}"#,
    );
    assert_eq!(
        only_error(&array).message,
        "elicitation form of resolver `confirm_backorder`: field `tags` is an array of non-enum items, which is not a primitive (string, number, integer, boolean or enum)"
    );
    let multi_select = BOOKSHOP.replace(
        r#"{"confirm": {"type": "boolean", "description": "Order anyway and wait?"}}"#,
        r#"{"confirm": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}"#,
    );
    assert_eq!(errors(&multi_select), vec![]);
    let union = BOOKSHOP.replace(
        r#"{"confirm": {"type": "boolean", "description": "Order anyway and wait?"}}"#,
        r#"{"confirm": {"type": "boolean"}, "n": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}"#,
    );
    assert_eq!(
        only_error(&union).message,
        "elicitation form of resolver `confirm_backorder`: field `n` is a union or combination (`anyOf`), which is not a primitive (string, number, integer, boolean or enum)"
    );
    let not_object = BOOKSHOP.replace(
        r##""returns": {"$ref": "#/$defs/Backorder"}"##,
        r#""returns": {"type": "boolean"}"#,
    );
    let e = only_error(&not_object);
    assert_eq!(e.code, "elicit-not-object");
    assert_eq!(
        e.message,
        r#"resolver `confirm_backorder` asks `elicit`, so `returns` must be a flat object of primitive fields (the form), but it is {"type":"boolean"}"#
    );
    assert_eq!(e.pointer, "/resolvers/confirm_backorder/returns");
}

#[test]
fn an_input_whose_root_is_not_an_object() {
    let text = BOOKSHOP.replace(
        r#""input": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}"#,
        r#""input": {"type": "string"}"#,
    );
    let all = errors(&text);
    // The tool also lacks the `title` its resolvers take; that is reported too.
    assert_eq!(
        all.iter().map(|e| e.code).collect::<Vec<_>>(),
        vec!["missing-arg", "missing-arg", "input-not-object"]
    );
    let e = &all[2..];
    assert_eq!(
        e[0].message,
        r##"the input schema of tool `order_book` must have `"type": "object"` at its root (the arguments are an object; a `$defs` object is written `{"type": "object", "$ref": "#/$defs/Name"}`), but it is {"type":"string"}"##
    );
    assert_eq!(e[0].pointer, "/tools/order_book/input");
    let (line, column) = at(&text, r#""input": {"type""#, 0);
    assert_eq!(
        (e[0].line, e[0].column),
        (line, column + r#""input": "#.len())
    );
}

#[test]
fn refs_that_do_not_resolve() {
    let text = BOOKSHOP.replace(
        r##""returns": {"$ref": "#/$defs/Stock"}"##,
        r##""returns": {"$ref": "#/$defs/Stok"}"##,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "unresolved-ref");
    assert_eq!(
        e.message,
        r##"`$ref` "#/$defs/Stok" does not resolve: `$defs` has no `Stok`"##
    );
    assert_eq!(
        e.help.as_deref(),
        Some(r##"did you mean "#/$defs/Stock"?"##)
    );
    assert_eq!(e.pointer, "/resolvers/check_stock/returns/$ref");
    assert_eq!((e.line, e.column), at(&text, r##""#/$defs/Stok""##, 0));

    let remote = BOOKSHOP.replace(
        r##""returns": {"$ref": "#/$defs/Stock"}"##,
        r#""returns": {"$ref": "https://example.com/stock.json"}"#,
    );
    let e = only_error(&remote);
    assert_eq!(e.code, "unsupported-ref");
    assert_eq!(
        e.message,
        r##"`$ref` "https://example.com/stock.json" is not supported: references must name a type of the spec's `$defs`, as "#/$defs/<Name>""##
    );
}

#[test]
fn assertions_the_types_do_not_express_are_left_to_the_validator() {
    // `if`/`then`/`else` and `not` only restrict what a call may carry: the schema checks
    // them at call time, the types leave them out; no diagnostic.
    let text = BOOKSHOP.replace(
        r#""properties": {"title": {"type": "string"}}, "required": ["title"]}"#,
        r#""properties": {"title": {"type": "string"}, "n": {"if": {"type": "string"}, "then": {"minLength": 1}, "else": {"type": "integer"}}}, "required": ["title"]}"#,
    );
    assert_eq!(diagnostics(&text), vec![]);
    let in_defs = BOOKSHOP.replace(
        r#""Stock": {"type": "object", "properties": {"title": {"type": "string"},"#,
        r#""Stock": {"type": "object", "properties": {"title": {"not": {"type": "integer"}},"#,
    );
    assert_eq!(diagnostics(&in_defs), vec![]);
}

#[test]
fn invalid_json_schemas_are_located() {
    let text = BOOKSHOP.replace(
        r#""output": {"type": "string"}"#,
        r#""output": {"type": "strng"}"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-schema");
    assert_eq!(
        e.message,
        "the output schema of tool `order_book` is not a valid JSON Schema: `strng` is not a JSON Schema type"
    );
    assert_eq!(e.help.as_deref(), Some(r#"did you mean "string"?"#));
    assert_eq!(e.pointer, "/tools/order_book/output/type");
    let text = BOOKSHOP.replace(
        r#""title": {"type": "string"}}, "required": ["title"]}"#,
        r#""title": {"type": "string", "pattern": "[a-"}}, "required": ["title"]}"#,
    );
    let e = only_error(&text);
    assert_eq!(
        e.message,
        r#"the input schema of tool `order_book` is not a valid JSON Schema: "[a-" is not a "regex""#
    );
    assert_eq!(
        e.pointer,
        "/tools/order_book/input/properties/title/pattern"
    );
}

#[test]
fn tool_names_outside_the_pattern() {
    let text = BOOKSHOP.replace(r#""order_book": {"#, r#""order book!": {"#);
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-tool-name");
    assert_eq!(
        e.message,
        "tool name `order book!` must match ^[A-Za-z0-9_.-]{1,64}$ (1 to 64 letters, digits, `_`, `.` or `-`)"
    );
    assert_eq!(e.pointer, "/tools/order book!");
    assert_eq!((e.line, e.column), at(&text, r#""order book!""#, 0));
    assert_eq!(e.help.as_deref(), Some("rename it, e.g. to `order_book_`"));
    let long = format!("t{}", "x".repeat(64));
    let text = BOOKSHOP.replace(r#""order_book": {"#, &format!(r#""{long}": {{"#));
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-tool-name");
    assert_eq!(
        e.help,
        Some(format!("rename it, e.g. to `{}`", &long[..64]))
    );
    let sixty_four = "x".repeat(64);
    let text = BOOKSHOP.replace(r#""order_book": {"#, &format!(r#""{sixty_four}": {{"#));
    assert_eq!(errors(&text), vec![]);
}

#[test]
fn two_names_that_become_the_same_rust_identifier() {
    let text = BOOKSHOP.replace(
        r#"    "order_book": {"#,
        r#"    "order-book": {"description": "Same name in Rust."},
    "order_book": {"#,
    );
    // One finding: their argument types (`OrderBookArgs`) collide as a consequence.
    let e = only_error(&text);
    assert_eq!(e.code, "name-collision");
    assert_eq!(
        e.message,
        "tools `order-book` and `order_book` both become the Rust identifier `order_book`"
    );
    assert_eq!(e.pointer, "/tools/order_book");
    assert_eq!(
        e.help.as_deref(),
        Some("rename `order_book` or `order-book`")
    );

    let text = BOOKSHOP.replace(
        r#""Backorder": {"#,
        r#""OrderBookArgs": {"type": "string"}, "Backorder": {"#,
    );
    let e = only_error(&text);
    assert_eq!(
        e.message,
        "type `OrderBookArgs` in `$defs` and the arguments of tool `order_book` both become the Rust type `OrderBookArgs`"
    );
    assert_eq!(
        e.help.as_deref(),
        Some("rename tool `order_book` or `$defs` type `OrderBookArgs`")
    );

    // typify would give a second schema the first one's type: a collision, not a silent
    // change of type.
    let text = BOOKSHOP.replace(
        r#""Backorder": {"#,
        r#""EstimateDeliveryValue": {"type": "object", "properties": {"days": {"type": "integer"}}}, "Backorder": {"#,
    ).replace(
        r#"{"stock": {"resolver": "check_stock"}}, "returns": {"type": "string"}"#,
        r#"{"stock": {"resolver": "check_stock"}}, "returns": {"type": "string", "enum": ["soon", "later"]}"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "name-collision");
    assert_eq!(
        e.message,
        "the returns schema of resolver `estimate_delivery`: its type would be named `EstimateDeliveryValue`, which is taken by type `EstimateDeliveryValue` in `$defs`"
    );
    assert_eq!(e.pointer, "/resolvers/estimate_delivery/returns");
    let text = BOOKSHOP.replace(
        r#""check_stock": {"params""#,
        r#""Check-Stock": {"returns": {"type": "string"}}, "check_stock": {"params""#,
    );
    let e = errors(&text);
    assert_eq!(
        e[0].message,
        "resolvers `Check-Stock` and `check_stock` both become the Rust identifier `check_stock`"
    );
}

#[test]
fn names_the_generated_code_uses_are_accepted_and_impossible_ones_say_what_to_rename() {
    // `ctx` and `args` beside the generated `ctx` and `args`, a leading digit, `self`.
    for name in ["ctx", "args", "9lives", "self", "type"] {
        let text = BOOKSHOP.replace(
            r#""delivery": "estimate_delivery""#,
            &format!(r#""{name}": "estimate_delivery""#),
        );
        assert_ne!(text, BOOKSHOP);
        assert_eq!(errors(&text), vec![], "{name}");
    }
    // The seeds' `ctx: Context`, and a context parameter of any name at all.
    for name in ["ctx", "_context", "-", "contexte élargi"] {
        let text = BOOKSHOP.replace(
            r##""params": {"title": "arg"}, "returns": {"$ref": "#/$defs/Stock"}"##,
            &format!(r##""params": {{"{name}": "context", "title": "arg"}}, "returns": {{"$ref": "#/$defs/Stock"}}"##),
        );
        assert_ne!(text, BOOKSHOP);
        assert_eq!(errors(&text), vec![], "{name}");
    }
    let text = BOOKSHOP.replace(
        r#""delivery": "estimate_delivery""#,
        r#""-": "estimate_delivery""#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-identifier");
    assert_eq!(
        e.message,
        "parameter `-` of tool `order_book` cannot become a Rust identifier: it has no letters or digits"
    );
    assert_eq!(
        e.help.as_deref(),
        Some("rename it to a name with ASCII letters or digits")
    );
    let text = BOOKSHOP.replace(
        r#""delivery": "estimate_delivery""#,
        r#""livraison_prévue": "estimate_delivery""#,
    );
    let e = only_error(&text);
    assert_eq!(
        e.message,
        "parameter `livraison_prévue` of tool `order_book` cannot become a Rust identifier: it has characters other than ASCII letters, digits and `_`"
    );
    assert_eq!(
        e.help.as_deref(),
        Some("rename it, e.g. to `livraison_prvue`")
    );
    assert_eq!(e.pointer, "/tools/order_book/resolve/livraison_prévue");
}

#[test]
fn returns_is_required_unless_the_resolver_samples_or_lists_roots() {
    let text = BOOKSHOP.replace(r#", "returns": {"type": "string"}},"#, "},");
    let e = only_error(&text);
    assert_eq!(e.code, "missing-returns");
    assert_eq!(
        e.message,
        "resolver `estimate_delivery` lacks `returns`: it does not ask, so it produces a value"
    );
    assert_eq!(e.pointer, "/resolvers/estimate_delivery");
    let text = BOOKSHOP.replace(
        r#", "returns": {"type": "string"}},"#,
        r#", "returns": {"type": "string"}, "asks": "sample"},"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "unused-returns");
    assert_eq!(
        e.message,
        "resolver `estimate_delivery` asks `sample`, so its value is the client's `CreateMessageResult`; remove `returns`, which would be ignored"
    );
}

#[test]
fn several_errors_are_reported_in_one_run() {
    let text = BOOKSHOP
        .replace(
            r#""stock": "check_stock", "delivery""#,
            r#""stock": "check_stok", "delivery""#,
        )
        .replace(
            r##""returns": {"$ref": "#/$defs/Stock"}"##,
            r##""returns": {"$ref": "#/$defs/Stok"}"##,
        )
        .replace(
            r#""delivery": "estimate_delivery""#,
            r#""_delivery": "estimate_delivery""#,
        );
    let codes: Vec<&str> = errors(&text).iter().map(|e| e.code).collect();
    // In the order of the file.
    assert_eq!(
        codes,
        vec!["unresolved-ref", "unknown-resolver", "underscore-parameter"]
    );
}

#[test]
fn warnings_do_not_fail_the_check() {
    let text = BOOKSHOP
        .replace(r#""backorder": "confirm_backorder""#, r#""other": "estimate_delivery""#)
        .replace(r#""description": "Order a book from the shop.","#, r#""description": "Order a book from the shop.", "annotations": {"readOnlyHint": false},"#);
    let checked = check_str("spec.json", &text).expect("warnings only");
    let d = diagnostics(&text);
    assert_eq!(d.len(), 2);
    assert_eq!(d[0].severity, Severity::Warning);
    assert_eq!(d[0].code, "unused-resolver");
    assert_eq!(
        d[0].message,
        "resolver `confirm_backorder` is not used by any tool"
    );
    assert_eq!(
        (d[0].line, d[0].column),
        at(&text, r#""confirm_backorder": {"#, 0)
    );
    assert_eq!(d[1].code, "annotations-without-title");
    assert_eq!(
        d[1].message,
        "tool `order_book` has annotations but no `title`; clients show the title next to the hints"
    );
    assert!(!checked.report.has_errors());
}
