//! Authorization in the spec, with exact expectations (code, message, line:column, JSON pointer,
//! help, subjects, the second place where there is one): a `"principal"` parameter or `scopes`
//! without `auth`, scopes that are not RFC 6749 scope-tokens, scopes `auth.scopesSupported`
//! does not list, a keyword source written as a binding; and what a valid spec's model holds.

use mcpgen::check::check_str;
use mcpgen::diagnostics::{Severity, Subject};
use serde_json::json;

#[derive(Debug, Clone, PartialEq)]
struct Found {
    code: &'static str,
    message: String,
    line: usize,
    column: usize,
    pointer: String,
    help: Option<String>,
    subjects: Vec<Subject>,
    /// The other places: (line, column, pointer, label).
    secondary: Vec<(usize, usize, String, String)>,
}

/// The errors of checking `text`, in file order.
fn errors(text: &str) -> Vec<Found> {
    let report = match check_str("spec.json", text) {
        Ok(c) => c.report,
        Err(r) => r,
    };
    let source = report.source.clone().expect("a spec file");
    (report.diagnostics.iter())
        .filter(|d| d.severity == Severity::Error)
        .map(|d| {
            let lc = report.line_col(d).expect("every diagnostic is located");
            Found {
                code: d.code.as_str(),
                message: d.message.clone(),
                line: lc.line,
                column: lc.column,
                pointer: d.pointer.as_ref().expect("a pointer").as_str().to_string(),
                help: d.help.clone(),
                subjects: d.subjects.clone(),
                secondary: (d.secondary.iter())
                    .map(|r| {
                        let span = r.span.clone();
                        let lc = source.line_col(span.start);
                        (
                            lc.line,
                            lc.column,
                            r.pointer.as_str().to_string(),
                            r.message.clone(),
                        )
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Line and column (1-based) of the `nth` occurrence of `needle`.
fn at(text: &str, needle: &str, nth: usize) -> (usize, usize) {
    let offset = (text.match_indices(needle).nth(nth))
        .unwrap_or_else(|| panic!("{needle:?} #{nth} not in spec"))
        .0;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, column)
}

/// Code, message, (line, column), pointer, help.
type Short = (&'static str, String, (usize, usize), String, Option<String>);

const ADD_AUTH: &str = "add `\"auth\": {}` at the top level (every request then needs a verified caller; `\"auth\": {\"required\": false}` lets anonymous requests in)";

const LIBRARY: &str = r##"{
  "name": "Library",
  "auth": {"scopes": ["catalog:read"], "scopesSupported": ["catalog:read", "loans:read", "loans:write"]},
  "resolvers": {
    "member": {"params": {"me": "principal"}, "returns": {"type": "string"}}
  },
  "tools": {
    "search": {"description": "Search.", "input": {"type": "object", "properties": {"q": {"type": "string"}}}},
    "borrow": {"description": "Borrow.", "scopes": ["loans:read", "loans:write", "loans:read"], "resolve": {"member": "member"}}
  },
  "prompts": {"overdue": {"description": "Overdue.", "scopes": ["loans:read"], "messages": [{"role": "user", "text": "hi"}]}},
  "resources": {"library://ledger": {"name": "ledger", "scopes": ["loans:write"]}},
  "resourceTemplates": {"library://loans/{id}": {"name": "loan", "scopes": ["loans:read"]}}
}
"##;

#[test]
fn a_spec_with_auth_is_valid_and_its_model_holds_the_requirements() {
    let checked =
        check_str("spec.json", LIBRARY).unwrap_or_else(|r| panic!("{}", r.render_human()));
    let plan = checked.model.to_json();
    assert_eq!(
        plan["auth"],
        json!({
            "required": true,
            "scopes": ["catalog:read"],
            "scopes_supported": ["catalog:read", "loans:read", "loans:write"],
            "list_visible_only": false
        })
    );
    // Each scope once, in spec order.
    assert_eq!(
        plan["tools"][1]["scopes"],
        json!(["loans:read", "loans:write"])
    );
    assert_eq!(plan["tools"][0]["scopes"], json!([]));
    assert_eq!(plan["prompts"][0]["scopes"], json!(["loans:read"]));
    assert_eq!(plan["resources"][0]["scopes"], json!(["loans:write"]));
    assert_eq!(plan["templates"][0]["scopes"], json!(["loans:read"]));
    assert_eq!(
        plan["resolvers"][0]["params"],
        json!([{"source": "principal", "name": "me"}])
    );
}

#[test]
fn without_scopes_supported_the_metadata_lists_every_scope_named_sorted() {
    let text = LIBRARY.replace(
        r#", "scopesSupported": ["catalog:read", "loans:read", "loans:write"]"#,
        r#", "required": false, "listVisibleOnly": true"#,
    );
    let checked = check_str("spec.json", &text).unwrap_or_else(|r| panic!("{}", r.render_human()));
    assert_eq!(
        checked.model.to_json()["auth"],
        json!({
            "required": false,
            "scopes": ["catalog:read"],
            "scopes_supported": ["catalog:read", "loans:read", "loans:write"],
            "list_visible_only": true
        })
    );
    // An empty `auth` is every default.
    let text = LIBRARY
        .replace(r#"{"scopes": ["catalog:read"], "scopesSupported": ["catalog:read", "loans:read", "loans:write"]}"#, "{}")
        .replace(r#""scopes": ["loans:read", "loans:write", "loans:read"], "#, r#""scopes": ["z", "a"], "#);
    let checked = check_str("spec.json", &text).unwrap_or_else(|r| panic!("{}", r.render_human()));
    assert_eq!(
        checked.model.to_json()["auth"],
        json!({"required": true, "scopes": [], "scopes_supported": ["a", "loans:read", "loans:write", "z"], "list_visible_only": false})
    );
}

#[test]
fn a_principal_parameter_and_scopes_need_auth() {
    let text = LIBRARY.replace(
        r#"  "auth": {"scopes": ["catalog:read"], "scopesSupported": ["catalog:read", "loans:read", "loans:write"]},
"#,
        "",
    );
    let e = errors(&text);
    let expect = |code, message: &str, (line, column), pointer: &str, subjects| Found {
        code,
        message: message.to_string(),
        line,
        column,
        pointer: pointer.to_string(),
        help: Some(ADD_AUTH.to_string()),
        subjects,
        secondary: vec![],
    };
    assert_eq!(
        e,
        vec![
            expect(
                "principal-without-auth",
                "parameter `me` of resolver `member` takes the verified caller (`\"principal\"`), but the spec has no `auth`, so no caller is ever verified",
                at(&text, r#""principal""#, 0),
                "/resolvers/member/params/me",
                vec![
                    Subject::Resolver("member".into()),
                    Subject::Parameter("me".into())
                ],
            ),
            expect(
                "scopes-without-auth",
                "tool `borrow` has `scopes`, but the spec has no `auth`, so no token is ever asked for",
                at(&text, r#""scopes""#, 0),
                "/tools/borrow/scopes",
                vec![Subject::Tool("borrow".into())],
            ),
            expect(
                "scopes-without-auth",
                "prompt `overdue` has `scopes`, but the spec has no `auth`, so no token is ever asked for",
                at(&text, r#""scopes""#, 1),
                "/prompts/overdue/scopes",
                vec![Subject::Prompt("overdue".into())],
            ),
            expect(
                "scopes-without-auth",
                "resource `library://ledger` has `scopes`, but the spec has no `auth`, so no token is ever asked for",
                at(&text, r#""scopes""#, 2),
                "/resources/library:~1~1ledger/scopes",
                vec![Subject::Resource("library://ledger".into())],
            ),
            expect(
                "scopes-without-auth",
                "template `library://loans/{id}` has `scopes`, but the spec has no `auth`, so no token is ever asked for",
                at(&text, r#""scopes""#, 3),
                "/resourceTemplates/library:~1~1loans~1{id}/scopes",
                vec![Subject::Resource("library://loans/{id}".into())],
            ),
        ]
    );
}

#[test]
fn a_scope_is_an_rfc_6749_scope_token() {
    let text = LIBRARY
        .replace(
            r#""scopes": ["catalog:read"]"#,
            r#""scopes": ["catalog read"]"#,
        )
        .replace(
            r#""loans:write", "loans:read"]"#,
            r#""loans:write", "", "a\"b", "caf\u00e9"]"#,
        )
        .replace(
            r#""scopesSupported": ["catalog:read""#,
            r#""scopesSupported": ["back\\slash", "catalog:read""#,
        );
    let help = Some(
        "a scope is printable ASCII without spaces, `\"` or `\\` (RFC 6749, section 3.3)"
            .to_string(),
    );
    let found: Vec<Short> = errors(&text)
        .into_iter()
        .map(|f| (f.code, f.message, (f.line, f.column), f.pointer, f.help))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                "invalid-scope",
                "\"catalog read\" in the `scopes` of `auth` is not an OAuth scope: it holds a space (scopes are separated by spaces: write each one on its own)".to_string(),
                at(&text, r#""catalog read""#, 0),
                "/auth/scopes/0".to_string(),
                help.clone(),
            ),
            (
                "invalid-scope",
                "\"back\\\\slash\" in the `scopesSupported` of `auth` is not an OAuth scope: it holds `\\`".to_string(),
                at(&text, r#""back"#, 0),
                "/auth/scopesSupported/0".to_string(),
                help.clone(),
            ),
            (
                "invalid-scope",
                "\"\" in the `scopes` of tool `borrow` is not an OAuth scope: it is empty".to_string(),
                at(&text, r#""""#, 0),
                "/tools/borrow/scopes/2".to_string(),
                help.clone(),
            ),
            (
                "invalid-scope",
                "\"a\\\"b\" in the `scopes` of tool `borrow` is not an OAuth scope: it holds `\"`".to_string(),
                at(&text, r#""a\"b""#, 0),
                "/tools/borrow/scopes/3".to_string(),
                help.clone(),
            ),
            (
                "invalid-scope",
                "\"café\" in the `scopes` of tool `borrow` is not an OAuth scope: it holds `é`, which is not ASCII".to_string(),
                at(&text, r#""caf"#, 0),
                "/tools/borrow/scopes/4".to_string(),
                help.clone(),
            ),
        ]
    );
}

#[test]
fn with_scopes_supported_every_scope_required_is_listed() {
    let text = LIBRARY
        .replace(
            r#""scopes": ["loans:write"]}"#,
            r#""scopes": ["loans:writ"]}"#,
        )
        .replace(r#""scopes": ["catalog:read"]"#, r#""scopes": ["admin"]"#);
    let supported = at(&text, r#""scopesSupported""#, 0);
    let listed = (
        supported.0,
        supported.1,
        "/auth/scopesSupported".to_string(),
        "the scopes the metadata lists".to_string(),
    );
    assert_eq!(
        errors(&text),
        vec![
            Found {
                code: "unlisted-scope",
                message: "the `scopes` of `auth` needs scope `admin`, which `auth.scopesSupported` does not list: a client could never learn to ask for it".into(),
                line: at(&text, r#""admin""#, 0).0,
                column: at(&text, r#""admin""#, 0).1,
                pointer: "/auth/scopes/0".into(),
                help: Some("add `admin` to `scopesSupported`".into()),
                subjects: vec![],
                secondary: vec![listed.clone()],
            },
            Found {
                code: "unlisted-scope",
                message: "the `scopes` of resource `library://ledger` needs scope `loans:writ`, which `auth.scopesSupported` does not list: a client could never learn to ask for it".into(),
                line: at(&text, r#""loans:writ""#, 0).0,
                column: at(&text, r#""loans:writ""#, 0).1,
                pointer: "/resources/library:~1~1ledger/scopes/0".into(),
                help: Some("did you mean `loans:write`? Otherwise add `loans:writ` to `scopesSupported`".into()),
                subjects: vec![Subject::Resource("library://ledger".into())],
                secondary: vec![listed],
            },
        ]
    );
}

#[test]
fn a_keyword_source_written_as_a_binding_is_explained() {
    let text = LIBRARY.replace(
        r#""resolve": {"member": "member"}"#,
        r#""resolve": {"me": "principal"}"#,
    );
    let e = errors(&text);
    assert_eq!(
        e,
        vec![Found {
            code: "unknown-resolver",
            message: "parameter `me` of tool `borrow` is bound to `principal`, which is not a resolver of this spec".into(),
            line: at(&text, r#""principal""#, 1).0,
            column: at(&text, r#""principal""#, 1).1,
            pointer: "/tools/borrow/resolve/me".into(),
            help: Some("`\"principal\"` is a source of resolver parameters, not a binding: give a resolver `\"params\": {\"me\": \"principal\"}` and bind `me` to that resolver".into()),
            subjects: vec![Subject::Tool("borrow".into()), Subject::Parameter("me".into())],
            secondary: vec![],
        }]
    );
}

#[test]
fn a_misspelt_principal_source_is_suggested() {
    let text = LIBRARY.replace(r#"{"me": "principal"}"#, r#"{"me": "principle"}"#);
    let e = errors(&text);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0].code, "invalid-param-source");
    assert_eq!(
        e[0].message,
        r#"the source of parameter `me` of resolver `member` is "principle", which is none of the kinds of source: "arg", "context", "principal" or {"resolver": "<name>"}"#
    );
    assert_eq!(e[0].help.as_deref(), Some(r#"did you mean "principal"?"#));
    assert_eq!((e[0].line, e[0].column), at(&text, r#""principle""#, 0));
}

#[test]
fn auth_members_have_their_types() {
    let text = LIBRARY.replace(
        r#"{"scopes": ["catalog:read"], "#,
        r#"{"required": "yes", "scopes": ["catalog:read"], "#,
    );
    let e = errors(&text);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0].code, "wrong-type");
    assert_eq!(
        e[0].message,
        "wrong value type for `required` of `auth`: expected a boolean, found a string"
    );
    assert_eq!((e[0].line, e[0].column), at(&text, r#""yes""#, 0));
    assert_eq!(e[0].pointer, "/auth/required");
}
