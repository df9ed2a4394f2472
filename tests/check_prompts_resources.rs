//! The errors of docs/spec.md (prompts, resources, templates), with exact
//! expectations: message, line:column, JSON pointer and subjects; and what a valid spec plans.

use mcpgen::check::check_str;
use mcpgen::diagnostics::{Severity, Subject};

const BASE: &str = r#"{
  "name": "Shop",
  "resolvers": {
    "check_stock": {"params": {"title": "arg"}, "returns": {"type": "integer"}},
    "confirm": {"params": {"title": "arg"}, "returns": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}, "asks": "elicit"}
  },
  "tools": {
    "order": {"description": "Order.", "input": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}, "resolve": {"stock": "check_stock"}}
  },
  "prompts": {
    "greet": {"description": "Greets.", "arguments": {"who": {"required": true, "complete": ["Alice", "Bob"]}}, "messages": [{"role": "user", "text": "Hello {who}!"}]},
    "pitch": {"description": "Pitches a title.", "arguments": {"title": {"required": true}}, "resolve": {"answer": "confirm"}}
  },
  "resources": {
    "test://readme": {"name": "readme", "mimeType": "text/plain", "text": "Read me."},
    "test://logo": {"name": "logo", "mimeType": "image/png", "blob": "iVBORw0KGgo="},
    "test://live": {"name": "live", "description": "Read in code."}
  },
  "resourceTemplates": {
    "test://items/{id}": {"name": "item", "complete": {"id": ["1", "2"]}}
  }
}"#;

struct Found {
    code: &'static str,
    message: String,
    line: usize,
    column: usize,
    pointer: String,
    help: Option<String>,
    subjects: Vec<Subject>,
}

fn errors(text: &str) -> Vec<Found> {
    let report = match check_str("spec.json", text) {
        Ok(c) => c.report,
        Err(r) => r,
    };
    report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| {
            let lc = report.line_col(d).expect("located");
            Found {
                code: d.code.as_str(),
                message: d.message.clone(),
                line: lc.line,
                column: lc.column,
                pointer: d.pointer.as_ref().expect("pointer").as_str().to_string(),
                help: d.help.clone(),
                subjects: d.subjects.clone(),
            }
        })
        .collect()
}

fn only_error(text: &str) -> Found {
    let mut e = errors(text);
    assert_eq!(
        e.len(),
        1,
        "{:#?}",
        e.iter().map(|f| &f.message).collect::<Vec<_>>()
    );
    e.remove(0)
}

fn at(text: &str, needle: &str) -> (usize, usize) {
    let offset = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in spec"));
    let before = &text[..offset];
    (
        before.matches('\n').count() + 1,
        before.rsplit('\n').next().unwrap().chars().count() + 1,
    )
}

#[test]
fn the_base_spec_is_valid_and_planned() {
    let checked = check_str("spec.json", BASE).unwrap_or_else(|r| panic!("{r:?}"));
    let plan = &checked.model;
    assert_eq!(
        plan.prompts
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        ["greet", "pitch"]
    );
    let order = &plan.prompts[1].chain.run_order;
    assert_eq!(
        order
            .iter()
            .map(|r| plan[*r].name.as_str())
            .collect::<Vec<_>>(),
        ["confirm"]
    );
    assert!(plan.resolvers.iter().all(|r| r.used));
    let caps = plan.capabilities;
    assert!(caps.prompts && caps.resources && caps.completions);
    assert!(!caps.logging);
    assert_eq!(plan.templates[0].variables, ["id"]);
    assert_eq!(
        checked
            .types
            .prompt_args(plan.prompts[1].id)
            .unwrap()
            .ty
            .to_string(),
        "types :: PitchArguments"
    );
    assert_eq!(
        checked.types.vars(plan.templates[0].id).ty.to_string(),
        "types :: ItemVars"
    );
    assert!(checked.types.prompt_args(plan.prompts[0].id).is_none());
}

#[test]
fn a_placeholder_naming_no_argument() {
    let text = BASE.replace("Hello {who}!", "Hello {whom}!");
    let e = only_error(&text);
    assert_eq!(e.code, "unknown-placeholder");
    assert_eq!(
        e.message,
        "message 0 of prompt `greet` uses `{whom}`, but the prompt has no argument `whom`"
    );
    assert_eq!(e.pointer, "/prompts/greet/messages/0/text");
    assert_eq!((e.line, e.column), at(&text, r#""Hello {whom}!""#));
    assert_eq!(e.help.as_deref(), Some("did you mean `{who}`?"));
    assert_eq!(
        e.subjects,
        [
            Subject::Prompt("greet".into()),
            Subject::Parameter("whom".into())
        ]
    );
}

#[test]
fn malformed_placeholders() {
    let e = only_error(&BASE.replace("Hello {who}!", "Hello {who!"));
    assert_eq!(e.code, "invalid-placeholder");
    assert_eq!(
        e.message,
        "message 0 of prompt `greet`: `{who!` is not closed by `}` (write `{{` for a literal brace)"
    );
    let e = only_error(&BASE.replace("Hello {who}!", "Hello } {who}"));
    assert_eq!(
        e.message,
        "message 0 of prompt `greet`: a lone `}` (write `}}` for a literal brace)"
    );
    // Doubled braces are literal.
    assert!(errors(&BASE.replace("Hello {who}!", "{{Hello}} {who}")).is_empty());
}

#[test]
fn resolve_together_with_messages() {
    let text = BASE.replace(
        r#""messages": [{"role": "user", "text": "Hello {who}!"}]"#,
        r#""messages": [{"role": "user", "text": "Hello {who}!"}], "resolve": {"stock": "check_stock"}"#,
    );
    // Diagnostics come in file order: the resolver's parameter first.
    let mut errs = errors(&text);
    errs.reverse();
    assert_eq!(errs[0].code, "resolve-with-messages");
    assert_eq!(
        errs[0].message,
        "prompt `greet` has fixed `messages` and also `resolve`; resolved values reach only prompts written in code, so remove `messages` (and return the messages from the prompt's method) or remove `resolve`"
    );
    assert_eq!(errs[0].pointer, "/prompts/greet/resolve");
    // check_stock takes `title`, which greet lacks.
    assert_eq!(errs[1].code, "missing-arg");
    assert_eq!(
        errs[1].message,
        "resolver `check_stock` takes `title` from the tool's arguments, but prompt `greet` has no argument `who`"
            .replace("`who`", "`title`")
    );
    assert_eq!(errs.len(), 2);
}

#[test]
fn a_message_needs_exactly_one_content() {
    let text = BASE.replace(
        r#"{"role": "user", "text": "Hello {who}!"}"#,
        r#"{"role": "user", "text": "Hello {who}!", "resource": "test://readme"}"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-message");
    assert_eq!(
        e.message,
        "message 0 of prompt `greet` must have exactly one of `text`, `image` or `resource`, but it has 2"
    );
    assert_eq!(e.pointer, "/prompts/greet/messages/0");
}

#[test]
fn an_embedded_resource_must_be_fixed() {
    let text = BASE.replace(r#""text": "Hello {who}!""#, r#""resource": "test://live""#);
    let e = only_error(&text);
    assert_eq!(e.code, "unknown-resource");
    assert_eq!(
        e.message,
        "message 0 of prompt `greet` embeds resource `test://live`, which is read in code (it has neither `text` nor `blob`); a fixed message can embed only a resource with `text` or `blob`"
    );
    let text = BASE.replace(r#""text": "Hello {who}!""#, r#""resource": "test://readm""#);
    let e = only_error(&text);
    assert_eq!(
        e.message,
        "message 0 of prompt `greet` embeds resource `test://readm`, which is not a resource of this spec; a fixed message can embed only a resource with `text` or `blob`"
    );
    assert_eq!(e.help.as_deref(), Some("did you mean `test://readme`?"));
    assert_eq!(
        e.subjects,
        [
            Subject::Prompt("greet".into()),
            Subject::Resource("test://readm".into())
        ]
    );
}

#[test]
fn resource_contents() {
    let text = BASE.replace(
        r#""text": "Read me."}"#,
        r#""text": "Read me.", "blob": "AA=="}"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "resource-content");
    assert_eq!(
        e.message,
        "resource `test://readme` has both `text` and `blob`; give one, or neither to read it in code"
    );
    assert_eq!(e.pointer, "/resources/test:~1~1readme");
    assert_eq!((e.line, e.column), at(&text, r#""test://readme""#));

    let text = BASE.replace("iVBORw0KGgo=", "not base64!");
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-base64");
    assert_eq!(
        e.message,
        "the `blob` of resource `test://logo` is not valid base64: Invalid symbol 32, offset 3."
    );
    assert_eq!(e.pointer, "/resources/test:~1~1logo/blob");
}

#[test]
fn template_variables_and_completions() {
    let text = BASE.replace(
        r#""complete": {"id": ["1", "2"]}"#,
        r#""complete": {"ids": ["1"]}"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "unknown-variable");
    assert_eq!(
        e.message,
        "template `test://items/{id}` offers completions for `ids`, which is not one of its variables (`id`)"
    );
    assert_eq!(e.help.as_deref(), Some("did you mean `id`?"));
    assert_eq!(
        e.pointer,
        "/resourceTemplates/test:~1~1items~1{id}/complete/ids"
    );

    let text = BASE.replace(
        r#""complete": {"id": ["1", "2"]}"#,
        r#""exemptFromPathChecks": ["id", "iid"]"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "unknown-variable");
    assert_eq!(
        e.message,
        "template `test://items/{id}` exempts `iid` from the path checks, which is not one of its variables (`id`)"
    );
    assert_eq!(e.help.as_deref(), Some("did you mean `id`?"));
    assert_eq!(
        e.pointer,
        "/resourceTemplates/test:~1~1items~1{id}/exemptFromPathChecks/1"
    );
    assert_eq!((e.line, e.column), at(&text, r#""iid""#));

    let text = BASE.replace(
        "test://items/{id}\": {\"name\": \"item\", \"complete\": {\"id\": [\"1\", \"2\"]}}",
        "test://items/{i-d}\": {\"name\": \"item\"}",
    );
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-template");
    assert_eq!(
        e.message,
        "template `test://items/{i-d}` has the variable `{i-d}`; variables are names of letters, digits and `_`"
    );
    assert_eq!(e.help.as_deref(), Some("rename it, e.g. to `{i_d}`"));
}

#[test]
fn names_of_prompts_and_readers() {
    let text = BASE.replace(r#""pitch": {"#, r#""pi tch": {"#);
    let e = only_error(&text);
    assert_eq!(e.code, "invalid-prompt-name");
    assert_eq!(
        e.message,
        "prompt name `pi tch` must match ^[A-Za-z0-9_.-]{1,64}$ (1 to 64 letters, digits, `_`, `.` or `-`)"
    );

    let text = BASE.replace(r#""name": "item""#, r#""name": "live""#);
    let errs = errors(&text);
    assert_eq!(errs[0].code, "name-collision");
    assert_eq!(
        errs[0].message,
        "`test://live` and `test://items/{id}` are both read by the Rust method `read_live`; give them different names"
    );
    assert_eq!(
        errs[0].pointer,
        "/resourceTemplates/test:~1~1items~1{id}/name"
    );
}

#[test]
fn prompt_arguments_take_part_in_arg_agreement() {
    // `title` is a string argument of prompt `pitch`; a tool typing it as an integer clashes.
    let text = BASE.replace(
        r#""title": {"type": "string"}}, "required": ["title"]}, "resolve": {"stock": "check_stock"}"#,
        r#""title": {"type": "integer"}}, "required": ["title"]}, "resolve": {"stock": "confirm"}"#,
    );
    let e = only_error(&text);
    assert_eq!(e.code, "arg-type-mismatch");
    assert_eq!(
        e.message,
        "resolver `confirm` takes `title` from the tool's arguments, but tool `order` and prompt `pitch` type it differently: integer and string"
    );
}
