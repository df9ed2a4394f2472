//! Diagnostics that relate two places show both, as rustc does: a primary label where the fix
//! belongs and a secondary label at the other place, each on its own line of the excerpt, in
//! `--format human` and in the `labels` of `--format json`.

use mcpgen::check::check_str;
use serde_json::json;

/// A resolver whose `"arg"` one tool lacks and two tools type differently.
const ARGS: &str = r##"{
  "name": "S",
  "resolvers": {
    "r": {"params": {"a": "arg"}, "returns": {"type": "string"}}
  },
  "tools": {
    "t": {
      "description": "d",
      "input": {"type": "object", "properties": {"b": {"type": "string"}}},
      "resolve": {"v": "r"}
    },
    "t1": {
      "description": "d",
      "input": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
      "resolve": {"v": "r"}
    },
    "t2": {
      "description": "d",
      "input": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
      "resolve": {"v": "r"}
    }
  }
}
"##;

/// A cycle, two tools that become one Rust identifier, a resolved parameter that is also an
/// input property, and an outcome binding of a resolver that does not ask.
const PLACES: &str = r##"{
  "name": "S",
  "resolvers": {
    "a": {"params": {"x": {"resolver": "b"}}, "returns": {"type": "string"}},
    "b": {"params": {"y": {"resolver": "a"}}, "returns": {"type": "string"}},
    "plain": {"returns": {"type": "string"}}
  },
  "tools": {
    "order-book": {"description": "d", "resolve": {"v": "a"}},
    "order_book": {
      "description": "d",
      "input": {"type": "object", "properties": {"w": {"type": "string"}}},
      "resolve": {"w": {"resolver": "plain", "outcome": true}}
    }
  }
}
"##;

fn human(text: &str) -> String {
    match check_str("spec.json", text) {
        Ok(c) => c.report.render_human(),
        Err(r) => r.render_human(),
    }
}

#[test]
fn a_missing_or_differently_typed_arg_cites_the_tools() {
    assert_eq!(
        human(ARGS),
        r##"error[missing-arg]: resolver `r` takes `a` from the tool's arguments, but tool `t` has no argument `a`
  --> spec.json:4:27
  |
4 |     "r": {"params": {"a": "arg"}, "returns": {"type": "string"}}
  |                           ^^^^^ `a` is taken from the arguments
  .
9 |       "input": {"type": "object", "properties": {"b": {"type": "string"}}},
  |                                                 ------------------------- tool `t` has no argument `a`
  |
  = at /resolvers/r/params/a

error[arg-type-mismatch]: resolver `r` takes `a` from the tool's arguments, but tools `t1` and `t2` type it differently: string and integer
   --> spec.json:4:27
   |
 4 |     "r": {"params": {"a": "arg"}, "returns": {"type": "string"}}
   |                           ^^^^^ `a` is taken from the arguments
   .
14 |       "input": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
   |                                                  --- tool `t1` types it as string
   .
19 |       "input": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
   |                                                  --- tool `t2` types it as integer
   |
   = at /resolvers/r/params/a

spec.json: 2 errors, 0 warnings
"##
    );
}

#[test]
fn cycles_collisions_and_bindings_cite_the_other_place() {
    assert_eq!(
        human(PLACES),
        r##"error[resolver-cycle]: resolvers form a cycle: a -> b -> a
  --> spec.json:4:40
  |
4 |     "a": {"params": {"x": {"resolver": "b"}}, "returns": {"type": "string"}},
  |                                        ^^^ `a` takes the value of `b`
5 |     "b": {"params": {"y": {"resolver": "a"}}, "returns": {"type": "string"}},
  |                                        --- `b` takes the value of `a`
  |
  = at /resolvers/a/params/x/resolver

error[name-collision]: tools `order-book` and `order_book` both become the Rust identifier `order_book`
   --> spec.json:10:5
   |
 9 |     "order-book": {"description": "d", "resolve": {"v": "a"}},
   |     ------------ `order-book` becomes `order_book` too
10 |     "order_book": {
   |     ^^^^^^^^^^^^
   |
   = at /tools/order_book
   = help: rename `order_book` or `order-book`

error[resolved-is-input]: parameter `w` of tool `order_book` is resolved and also an input property; a resolved parameter never comes from the model, so remove it from `input`
   --> spec.json:13:19
   |
12 |       "input": {"type": "object", "properties": {"w": {"type": "string"}}},
   |                                                  --- and an input property here
13 |       "resolve": {"w": {"resolver": "plain", "outcome": true}}
   |                   ^^^ resolved here
   |
   = at /tools/order_book/resolve/w

error[outcome-without-elicit]: parameter `w` of tool `order_book` takes the elicitation outcome of resolver `plain`, which does not ask anything; `outcome: true` needs a resolver with `"asks": "elicit"`
   --> spec.json:13:57
   |
 6 |     "plain": {"returns": {"type": "string"}}
   |     ------- resolver `plain` does not ask anything
   .
13 |       "resolve": {"w": {"resolver": "plain", "outcome": true}}
   |                                                         ^^^^
   |
   = at /tools/order_book/resolve/w/outcome

spec.json: 4 errors, 0 warnings
"##
    );
}

#[test]
fn json_lists_every_label_with_its_place() {
    let report = check_str("spec.json", ARGS).err().expect("rejected");
    let v: serde_json::Value = serde_json::from_str(&report.render_json()).unwrap();
    let mismatch = &v[1];
    // The existing fields stay: they are the primary place.
    assert_eq!(mismatch["code"], "arg-type-mismatch");
    assert_eq!(
        (&mismatch["line"], &mismatch["column"], &mismatch["pointer"]),
        (&json!(4), &json!(27), &json!("/resolvers/r/params/a"))
    );
    assert_eq!(
        mismatch["labels"],
        json!([
            {"primary": true, "file": "spec.json", "line": 4, "column": 27,
             "pointer": "/resolvers/r/params/a", "message": "`a` is taken from the arguments"},
            {"primary": false, "file": "spec.json", "line": 14, "column": 50,
             "pointer": "/tools/t1/input/properties/a", "message": "tool `t1` types it as string"},
            {"primary": false, "file": "spec.json", "line": 19, "column": 50,
             "pointer": "/tools/t2/input/properties/a", "message": "tool `t2` types it as integer"}
        ])
    );
    assert_eq!(
        v[0]["labels"][1],
        json!({"primary": false, "file": "spec.json", "line": 9, "column": 49,
               "pointer": "/tools/t/input/properties", "message": "tool `t` has no argument `a`"})
    );
    // A diagnostic about one place has its primary label alone.
    let report = check_str(
        "spec.json",
        &ARGS.replace("\"resolvers\": {", "\"x\": 1, \"resolvers\": {"),
    )
    .err()
    .expect("rejected");
    let v: serde_json::Value = serde_json::from_str(&report.render_json()).unwrap();
    assert_eq!(
        v[0]["labels"],
        json!([{"primary": true, "file": "spec.json", "line": 3, "column": 3,
                "pointer": "/x", "message": ""}])
    );
}

/// Two places of one object: a resource with both contents, a `returns` that `asks` makes
/// useless (two properties that become one Rust field are no error: they are told apart).
const SAME_OBJECT: &str = r##"{
  "name": "S",
  "resolvers": {
    "model": {
      "asks": "sample",
      "returns": {"type": "string"}
    }
  },
  "tools": {
    "t": {
      "description": "d",
      "input": {"type": "object", "properties": {
        "page-size": {"type": "integer"},
        "page_size": {"type": "integer"}
      }},
      "resolve": {"m": "model"}
    }
  },
  "resources": {
    "res://a": {
      "name": "a",
      "text": "hi",
      "blob": "aGk="
    }
  }
}
"##;

#[test]
fn findings_within_one_object_point_at_both_keys() {
    assert_eq!(
        human(SAME_OBJECT),
        r##"error[unused-returns]: resolver `model` asks `sample`, so its value is the client's `CreateMessageResult`; remove `returns`, which would be ignored
  --> spec.json:6:18
  |
5 |       "asks": "sample",
  |               -------- asks `sample`
6 |       "returns": {"type": "string"}
  |                  ^^^^^^^^^^^^^^^^^^
  |
  = at /resolvers/model/returns

error[resource-content]: resource `res://a` has both `text` and `blob`; give one, or neither to read it in code
   --> spec.json:20:5
   |
20 |     "res://a": {
   |     ^^^^^^^^^
21 |       "name": "a",
22 |       "text": "hi",
   |       ------ `text` here
23 |       "blob": "aGk="
   |       ------ and `blob` here
   |
   = at /resources/res:~1~1a

spec.json: 2 errors, 0 warnings
"##
    );
}
