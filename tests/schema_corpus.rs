//! The schema corpus (`tests/schemas/*.json`): `mcpgen check` gives exactly the expected
//! diagnostics for each spec; the specs that pass become crates of ONE cargo workspace under
//! `target/schema-corpus/`, built once in the suite's shared target directory (linted by clippy
//! with `-D warnings` in the same compilation); each
//! server then starts over stdio, lists its tools, and answers calls: arguments the advertised
//! schema accepts reach the (stub) tool, so they passed validation and deserialization into the
//! typed struct; arguments it refuses get one `isError` result naming every violation.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use common::{Lints, StdioSession, root};

/// `severity[code] pointer: message` for each diagnostic of `mcpgen check --format json`.
fn check(spec: &Path) -> (i32, Vec<String>) {
    let (code, found) = common::check_json(Path::new(env!("CARGO_BIN_EXE_mcpgen")), spec);
    let lines = found
        .iter()
        .map(|d| {
            format!(
                "{}[{}] {}: {}",
                d["severity"].as_str().unwrap(),
                d["code"].as_str().unwrap(),
                d["pointer"].as_str().unwrap_or(""),
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    (code, lines)
}

/// What `check` says about each corpus spec (exit code, diagnostics in order).
fn expected_diagnostics(case: &str) -> (i32, Vec<&'static str>) {
    match case {
        "accepts" => (
            0,
            vec![
                "warning[required-not-a-property] /tools/typo/input/required/0: `required` names `nmae`, which is not one of the `properties`: every call must then carry a `nmae` of any type, typed `serde_json::Value`",
                "warning[schema-typed-wider] /tools/tuple_open/input/properties/p: property `p` of the input schema of tool `tuple_open` is typed as `Vec<serde_json::Value>`: `prefixItems` becomes a Rust tuple only when exactly its 2 items are present; add `\"minItems\": 2` and `\"items\": false` for a tuple",
                "warning[schema-typed-wider] /tools/separator/input/properties/sep: property `sep` of the input schema of tool `separator` is typed as `String`: its `enum` values do not all become distinct Rust variant names (the schema still checks the values); use values with letters or digits for an enum type",
                "warning[schema-typed-wider] /tools/mixed_enum/input/properties/v: property `v` of the input schema of tool `mixed_enum` is typed as `serde_json::Value`: an `enum` whose values are of several JSON types, or objects or arrays, has no Rust enum type (the schema still checks the values); use values of one type, e.g. all strings, for an enum type",
                "warning[schema-typed-wider] /tools/wide_ints/input/properties/big: property `big` of the input schema of tool `wide_ints` is typed as `serde_json::Value`: its bounds let through integers beyond the range of `i64` (-9223372036854775808 to 9223372036854775807), the widest integer type the type generator gives it (the schema still checks the values); bound it within that range for an integer type",
                "warning[schema-typed-wider] /tools/wide_ints/input/properties/low: property `low` of the input schema of tool `wide_ints` is typed as `serde_json::Value`: its bounds let through integers beyond the range of `i64` (-9223372036854775808 to 9223372036854775807), the widest integer type the type generator gives it (the schema still checks the values); bound it within that range for an integer type",
                "warning[schema-typed-wider] /tools/wide_ints/input/properties/unsigned: property `unsigned` of the input schema of tool `wide_ints` is typed as `serde_json::Value`: its bounds let through integers beyond the range of `u64` (0 to 18446744073709551615), the widest integer type the type generator gives it (the schema still checks the values); bound it within that range for an integer type",
                "warning[schema-typed-wider] /$defs/Odd/properties/k: property `k` of type `Odd` in `$defs` is typed as `serde_json::Value`: the type generator cannot handle it (value does not conform to the given schema); the schema still checks it",
                "warning[schema-typed-wider] /tools/odd_enum/input/properties/x: property `x` of the input schema of tool `odd_enum` is typed as `serde_json::Value`: the type generator cannot handle it (value does not conform to the given schema); the schema still checks it",
            ],
        ),
        "names" | "extras" => (0, vec![]),
        "args" => (
            0,
            vec![
                "warning[unused-resolver] /resolvers/spare: resolver `spare` is not used by any tool",
                "warning[schema-typed-wider] /tools/sized/input/properties/big: property `big` of the input schema of tool `sized` is typed as `serde_json::Value`: its bounds let through integers beyond the range of `i64` (-9223372036854775808 to 9223372036854775807), the widest integer type the type generator gives it (the schema still checks the values); bound it within that range for an integer type",
            ],
        ),
        "pydantic" => (
            0,
            vec![
                "warning[schema-typed-wider] /tools/tree/input/$defs/Node/properties/odd: property `odd` of the input schema of tool `tree` is typed as `serde_json::Value`: the type generator cannot handle it (value does not conform to the given schema); the schema still checks it",
            ],
        ),
        "invalid" => (
            1,
            vec![
                "error[invalid-default] /$defs/Bad/default: the `default` 0 violates its schema: `minimum` (0 is less than the minimum of 1)",
                "error[invalid-default] /tools/bad_default/input/properties/n/default: the `default` \"c\" violates its schema: `enum` (\"c\" is not one of \"a\" or \"b\")",
                "warning[required-not-a-property] /tools/fine/input/required/1: `required` names `y`, which is not one of the `properties`: every call must then carry a `y` of any type, typed `serde_json::Value`",
            ],
        ),
        other => panic!("tests/schemas/{other}.json has no expected diagnostics here"),
    }
}

/// The result text a stub tool gives: the arguments passed validation and deserialization.
fn reached(tool: &str) -> String {
    format!(
        "Error executing tool {tool}: '{tool}' is not implemented yet (write it in src/handlers.rs)"
    )
}

/// The result text when the arguments reached a (stub) resolver of the tool.
fn resolver_reached(tool: &str, resolver: &str) -> String {
    format!(
        "Error executing tool {tool}: '{resolver}' is not implemented yet (write it in src/handlers.rs)"
    )
}

fn refused(tool: &str, lines: &[&str]) -> String {
    format!("Error executing tool {tool}: {}", lines.join("\n"))
}

/// Calls for each crate: tool, arguments, the result text.
fn calls(case: &str) -> Vec<(&'static str, Value, String)> {
    match case {
        "accepts" => vec![
            (
                "integers",
                json!({"count": 1.0, "small": 3.0, "ratio": 2}),
                reached("integers"),
            ),
            ("integers", json!({"count": -7e1}), reached("integers")),
            (
                "integers",
                json!({"count": 1.5, "small": 11, "ratio": "x"}),
                refused(
                    "integers",
                    &[
                        "/count (type): 1.5 is not of type \"integer\"",
                        "/ratio (type): \"x\" is not of type \"number\"",
                        "/small (maximum): 11 is greater than the maximum of 10",
                    ],
                ),
            ),
            (
                "tuple_open",
                json!({"p": [1, 1, 1, 1]}),
                reached("tuple_open"),
            ),
            ("tuple_open", json!({"p": [1]}), reached("tuple_open")),
            (
                "tuple_open",
                json!({"p": ["a", 1]}),
                refused(
                    "tuple_open",
                    &["/p/0 (type): \"a\" is not of type \"integer\""],
                ),
            ),
            (
                "tuple_exact",
                json!({"p": [1.0, "a"]}),
                reached("tuple_exact"),
            ),
            (
                "tuple_exact",
                json!({"p": [1, "a", 2]}),
                refused(
                    "tuple_exact",
                    &["/p/2 (falseSchema): False schema does not allow 2"],
                ),
            ),
            ("not_both", json!({"a": "x"}), reached("not_both")),
            (
                "not_both",
                json!({"a": "x", "b": "y"}),
                refused(
                    "not_both",
                    &[
                        "(root) (not): {\"required\":[\"a\",\"b\"]} is not allowed for {\"a\":\"x\",\"b\":\"y\"}",
                    ],
                ),
            ),
            (
                "if_then",
                json!({"kind": "num", "n": 1}),
                reached("if_then"),
            ),
            ("if_then", json!({"kind": "text"}), reached("if_then")),
            (
                "if_then",
                json!({"kind": "num"}),
                refused(
                    "if_then",
                    &["(root) (required): \"n\" is a required property"],
                ),
            ),
            ("contains", json!({"xs": [1, 7]}), reached("contains")),
            (
                "contains",
                json!({"xs": [1, 2]}),
                refused(
                    "contains",
                    &["/xs (contains): None of [1,2] are valid under the given schema"],
                ),
            ),
            ("separator", json!({"sep": "\t"}), reached("separator")),
            (
                "separator",
                json!({"sep": "x"}),
                refused(
                    "separator",
                    &["/sep (enum): \"x\" is not one of \",\", \";\" or 2 other candidates"],
                ),
            ),
            ("ids", json!({"_id": "a", "id": "b"}), reached("ids")),
            (
                "nullable",
                json!({"a": null, "b": null}),
                reached("nullable"),
            ),
            (
                "nullable",
                json!({"a": "s", "b": {"kind": "cat", "lives": 9.0}}),
                reached("nullable"),
            ),
            (
                "counts",
                json!({"m": {"a": 1, "b": 2.0}}),
                reached("counts"),
            ),
            (
                "counts",
                json!({"m": {"a": 0.5}}),
                refused("counts", &["/m/a (type): 0.5 is not of type \"integer\""]),
            ),
            (
                "pet",
                json!({"pet": {"kind": "dog", "good": true}}),
                reached("pet"),
            ),
            (
                "pet",
                json!({"pet": {"kind": "cat", "lives": 3}}),
                reached("pet"),
            ),
            (
                "pet",
                json!({"pet": {"kind": "cow"}}),
                refused(
                    "pet",
                    &[
                        "/pet (oneOf): {\"kind\":\"cow\"} is not valid under any of the schemas listed in the 'oneOf' keyword",
                    ],
                ),
            ),
            (
                "shape",
                json!({"shape": {"kind": "circle", "r": 1}}),
                reached("shape"),
            ),
            // An integer typed `i64` / `u64` / `i32` accepts exactly that type's range: the
            // advertised schema states it, so past it is a violation named by its pointer.
            (
                "rust_ints",
                json!({"n": i64::MIN, "u": 18446744073709551615_u64, "small": 2147483647}),
                reached("rust_ints"),
            ),
            (
                "rust_ints",
                json!({"n": 9223372036854775808_u64, "u": -1, "small": -2147483649_i64}),
                refused(
                    "rust_ints",
                    &[
                        "/n (maximum): 9223372036854775808 is greater than the maximum of 9223372036854775807",
                        "/small (minimum): -2147483649 is less than the minimum of -2147483648",
                        "/u (minimum): -1 is less than the minimum of 0",
                    ],
                ),
            ),
            (
                "rust_ints",
                json!({"n": 1e30}),
                refused(
                    "rust_ints",
                    &["/n (maximum): 1e+30 is greater than the maximum of 9223372036854775807"],
                ),
            ),
            // Both ends of what the schemas accept reach the tool: past i64 and u64 too.
            (
                "wide_ints",
                json!({"big": 1e30, "low": -1e20, "unsigned": 1.8446744073709552e19, "fits": 18446744073709551615_u64}),
                reached("wide_ints"),
            ),
            (
                "wide_ints",
                json!({"big": 9223372036854775808_u64, "low": i64::MIN, "unsigned": 1, "fits": 0}),
                reached("wide_ints"),
            ),
            (
                "wide_ints",
                json!({"big": 1.5, "fits": -1}),
                refused(
                    "wide_ints",
                    &[
                        "/big (type): 1.5 is not of type \"integer\"",
                        "/fits (minimum): -1 is less than the minimum of 0",
                    ],
                ),
            ),
            ("mixed_enum", json!({"v": null}), reached("mixed_enum")),
            ("mixed_enum", json!({"v": 1.0}), reached("mixed_enum")),
            ("typo", json!({"nmae": [1]}), reached("typo")),
            ("described", json!({}), reached("described")),
            (
                "odd_enum",
                json!({"x": 2, "o": {"k": 2.0}}),
                reached("odd_enum"),
            ),
            (
                "odd_enum",
                json!({"x": 1.5}),
                refused("odd_enum", &["/x (type): 1.5 is not of type \"integer\""]),
            ),
            (
                "assorted",
                json!({"extra": {"a": "s", "b": 1}, "pattern_only": {"ab": 1},
                       "pattern_typed": {"id": "x", "n_a": 2, "n_b": 3.0}, "either": "str",
                       "set": [1, 2], "floats": [1.5, 2.5], "tiny": 3.0,
                       "all": {"kind": "cat", "lives": 1, "x": 2}, "code": "AB", "any": 5,
                       "always": [1]}),
                reached("assorted"),
            ),
            (
                "assorted",
                json!({"either": {"a": "s"}, "any": "s"}),
                reached("assorted"),
            ),
            (
                "assorted",
                json!({"never": 1, "set": [1, 1], "code": "abc"}),
                refused(
                    "assorted",
                    &[
                        "/code (pattern): \"abc\" does not match \"^[A-Z]{2}$\"",
                        "/never (falseSchema): False schema does not allow 1",
                        "/set (uniqueItems): [1,1] has non-unique elements",
                    ],
                ),
            ),
        ],
        "names" => vec![
            (
                "collide",
                json!({"@type": "a", "type": "b", "userId": "c", "user_id": 2}),
                reached("collide"),
            ),
            (
                "collide",
                json!({"@type": "a"}),
                refused(
                    "collide",
                    &[
                        "(root) (required): \"type\" is a required property",
                        "(root) (required): \"user_id\" is a required property",
                    ],
                ),
            ),
            (
                "keywords",
                json!({"fn": "a", "self": "b", "Self": "c", "crate": "d", "super": 1, "async": true}),
                reached("keywords"),
            ),
            (
                "whitespace",
                json!({"foo\tbar": "a", "foo\nbar": "b", "foo bar": "c"}),
                reached("whitespace"),
            ),
            (
                "odd_names",
                json!({"": "a", "🙂": "b", "_": "c", "__": "d", "1st": "e", "a-b": "f", "A-B": "g", "名前": "h"}),
                reached("odd_names"),
            ),
            (
                "odd_names",
                json!({"": 1, "名前": 2}),
                refused(
                    "odd_names",
                    &[
                        "/ (type): 1 is not of type \"string\"",
                        "/名前 (type): 2 is not of type \"string\"",
                    ],
                ),
            ),
            (
                "dollar_ref",
                json!({"$ref": "x", "r": {"$ref": "y", "type": "t", "@type": "u"}}),
                reached("dollar_ref"),
            ),
            (
                "dollar_ref",
                json!({"r": {}}),
                refused(
                    "dollar_ref",
                    &[
                        "(root) (required): \"$ref\" is a required property",
                        "/r (required): \"$ref\" is a required property",
                    ],
                ),
            ),
        ],
        "extras" => vec![
            (
                "pay",
                json!({"payment": {"method": "card", "number": "4"}, "tries": 1.0, "level": 2.0, "note": "x"}),
                reached("pay"),
            ),
            (
                "pay",
                json!({"payment": {"method": "transfer", "iban": "DE"}, "tries": null, "page": 3}),
                reached("pay"),
            ),
            (
                "pay",
                json!({"payment": {"method": "card", "number": "4", "iban": "x"}, "tries": null, "level": 4}),
                refused(
                    "pay",
                    &[
                        "/level (enum): 4 is not one of 1, 2 or 3",
                        "/payment (oneOf): {\"method\":\"card\",\"number\":\"4\",\"iban\":\"x\"} is not valid under any of the schemas listed in the 'oneOf' keyword",
                    ],
                ),
            ),
            (
                "whose",
                json!({"userId": "u", "user_id": 7.0}),
                resolver_reached("whose", "owner"),
            ),
        ],
        "args" => vec![
            (
                "pet_name",
                json!({"cat": null}),
                resolver_reached("pet_name", "cat_name"),
            ),
            (
                "pet_name",
                json!({"cat": {"name": "Tom"}}),
                resolver_reached("pet_name", "cat_name"),
            ),
            (
                "labelled",
                json!({"title": "t", "tags": ["a"]}),
                resolver_reached("labelled", "label"),
            ),
            (
                "labelled_too",
                json!({"fn": "f", "n": 2.0, "title": "t", "tags": []}),
                resolver_reached("labelled_too", "label"),
            ),
            (
                "sized",
                json!({"big": 9223372036854775808_u64}),
                resolver_reached("sized", "size_of"),
            ),
            (
                "sized",
                json!({"big": "x"}),
                refused("sized", &["/big (type): \"x\" is not of type \"integer\""]),
            ),
            (
                "labelled",
                json!({"title": "t"}),
                refused(
                    "labelled",
                    &["(root) (required): \"tags\" is a required property"],
                ),
            ),
            (
                "moody",
                json!({"mood": "calm"}),
                resolver_reached("moody", "mood_of"),
            ),
            (
                "moody",
                json!({"mood": "angry", "maybe": "no"}),
                resolver_reached("moody", "mood_of"),
            ),
            (
                "moody",
                json!({"mood": "sad"}),
                refused(
                    "moody",
                    &["/mood (enum): \"sad\" is not one of \"calm\" or \"angry\""],
                ),
            ),
        ],
        "pydantic" => vec![
            (
                "tree",
                json!({"root": {"value": 1, "odd": 2, "children": [{"value": 2.0, "children": []}]},
                       "price": {"amount": 3, "currency": "EUR"}}),
                reached("tree"),
            ),
            (
                "tree",
                json!({"root": {"value": 1, "children": [{"value": "two"}]}, "price": {"amount": 3}}),
                refused(
                    "tree",
                    &[
                        "/price (required): \"currency\" is a required property",
                        "/root/children/0/value (type): \"two\" is not of type \"integer\"",
                    ],
                ),
            ),
            (
                "nested",
                json!({"name": "a", "parent": {"name": "b", "parent": null}}),
                reached("nested"),
            ),
            (
                "nested",
                json!({"name": "a", "parent": {"name": "b", "parent": {"name": 3}}}),
                // Each `anyOf` of a `$ref` and `null` (pydantic's optional fields) names the
                // violation inside the one branch whose type takes the value.
                refused(
                    "nested",
                    &["/parent/parent/name (type): 3 is not of type \"string\""],
                ),
            ),
            // Two tools bound the shared `note` differently: the resolver takes `Option<&str>`.
            (
                "book_visit",
                json!({"note": "window seat"}),
                resolver_reached("book_visit", "note_length"),
            ),
            (
                "plan_visit",
                json!({}),
                resolver_reached("plan_visit", "note_length"),
            ),
            (
                "plan_visit",
                json!({"note": null}),
                resolver_reached("plan_visit", "note_length"),
            ),
            (
                "book_visit",
                json!({"note": "x".repeat(101)}),
                refused(
                    "book_visit",
                    &[format!(
                        "/note (maxLength): \"{}... (103 characters) is longer than 100 characters",
                        "x".repeat(79)
                    )
                    .as_str()],
                ),
            ),
        ],
        _ => vec![],
    }
}

/// Types an expert would write, as generated (in the crate's `src/generated/mod.rs`).
fn expected_types(case: &str) -> Vec<&'static str> {
    match case {
        "accepts" => vec![
            "pub p: (i64, ::std::string::String),",
            "#[serde(tag = \"kind\")]\n    pub enum PetArgsPet {",
            "pub m: ::std::collections::HashMap<::std::string::String, i64>,",
            "pub b: ::std::option::Option<Cat>,",
            "pub sep: ::std::string::String,",
            "pub big: ::std::option::Option<::serde_json::Value>,",
            "pub fits: ::std::option::Option<u64>,",
        ],
        "extras" => vec![
            "#[serde(tag = \"method\", deny_unknown_fields)]\n    pub enum PayArgsPayment {",
            "#[serde(rename = \"user_id\")]\n        pub user_id_2: i64,",
            "Resolvers::owner(state, ctx, runtime::int_arg(args.user_id_2))",
        ],
        // A resolver takes a required but nullable argument as an `Option`, optional ones as
        // `Option`s (`as_deref`, not `as_ref().map(..)`); an unused resolver is no dead code.
        "args" => vec![
            "cat: Option<&types::Cat>,",
            "big: &::serde_json::Value,",
            "Resolvers::size_of(state, ctx, &args.big)",
            "Resolvers::cat_name(state, ctx, args.cat.as_ref())",
            "r#fn: Option<&str>,\n        n: Option<i64>,\n        title: &str,\n        tags: &[String],",
            "args.fn_.as_deref(),\n        args.n.map(runtime::int_arg),\n        args.title.as_str(),\n        &args.tags,",
            "#[allow(dead_code, reason = \"no tool or prompt of the spec uses this resolver\")]\n    fn spare(",
        ],
        "pydantic" => vec![
            "fn note_length(\n        &self,\n        ctx: &Context,\n        note: Option<&str>,\n    )",
            "pub root: TreeInputNode,",
            "pub children: ::std::vec::Vec<TreeInputNode>,",
            "pub parent: ::std::option::Option<::std::boxed::Box<NestedInput>>,",
        ],
        "names" => vec![
            "#[serde(rename = \"type\")]\n        pub type_2: ::std::string::String,",
            "#[serde(rename = \"user_id\")]\n        pub user_id_2: i64,",
            "#[serde(rename = \"a-b\", skip_serializing_if = \"::std::option::Option::is_none\")]\n        pub a_b_2:",
        ],
        _ => vec![],
    }
}

#[test]
fn corpus_specs_check_exactly_and_the_passing_ones_build_start_and_take_what_their_schemas_accept()
{
    let corpus = root().join("tests/schemas");
    let mut cases: Vec<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".json").map(str::to_string)
        })
        .collect();
    cases.sort();
    let mut passing = Vec::new();
    for case in &cases {
        let (code, lines) = check(&corpus.join(format!("{case}.json")));
        let (want_code, want) = expected_diagnostics(case);
        assert_eq!(
            (code, lines),
            (want_code, want.iter().map(|s| s.to_string()).collect()),
            "{case}"
        );
        if code == 0 {
            passing.push(case.clone());
        }
    }

    // One workspace, one build.
    let ws = root().join("target/schema-corpus/ws");
    let _ = std::fs::remove_dir_all(&ws);
    std::fs::create_dir_all(&ws).unwrap();
    let members: Vec<String> = passing.iter().map(|c| format!("corpus-{c}")).collect();
    common::workspace(&ws, &members.iter().map(String::as_str).collect::<Vec<_>>());
    for case in &passing {
        let name = format!("corpus-{case}");
        let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
            .args(["new", &name, "--spec"])
            .arg(corpus.join(format!("{case}.json")))
            .arg("--dir")
            .arg(ws.join(&name))
            .arg("--runtime-path")
            .arg(root().join("runtime"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let code = std::fs::read_to_string(ws.join(&name).join("src/generated/mod.rs")).unwrap();
        for t in expected_types(case) {
            assert!(code.contains(t), "{case}: no `{t}` in the generated types");
        }
    }
    // The libraries (with the test kit: `--all-features`) and the binaries, linted; not the
    // tests of `tests/tools.rs`, which `tests/test_kit.rs` builds and runs for three crates
    // (building them here would link rmcp's client into a test binary per corpus spec).
    let out = common::cargo(
        &ws,
        &["build", "--workspace", "--lib", "--bins", "--all-features"],
        Lints::Clippy,
    );
    assert!(
        out.status.success(),
        "the corpus crates do not build clippy-clean:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let target = common::target_dir();

    let mut wrong = Vec::new();
    for case in &passing {
        let spec: Value = serde_json::from_str(
            &std::fs::read_to_string(corpus.join(format!("{case}.json"))).unwrap(),
        )
        .unwrap();
        let mut session = StdioSession::start(
            "corpus",
            &target.join("debug").join(format!("corpus-{case}")),
        );
        let listed = session.request("tools/list", json!({}));
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{case}: {listed}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        let declared: Vec<&str> = spec["tools"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(names, declared, "{case}");
        for (tool, arguments, want) in calls(case) {
            let response =
                session.request("tools/call", json!({"name": tool, "arguments": arguments}));
            let result = &response["result"];
            let got = result["content"][0]["text"].as_str().unwrap_or_default();
            if result["isError"] != json!(true) || got != want {
                wrong.push(format!(
                    "{case} {tool} {arguments}:\n  got  {got:?}\n  want {want:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
