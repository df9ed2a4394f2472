//! Names people write from the seeds, and names the generated code itself uses, all in one spec:
//! the crate mcpgen writes for it compiles, clippy-clean. A `"context"` parameter of any name is
//! the context (`ctx`, as the seeds write `ctx: Context`); a spec parameter named `ctx` or `args`
//! keeps its name and the generated `ctx`/`args` step aside (`ctx_`, `args_`); resolver values
//! never shadow the locals of the generated call (`state`, `round`, ...); `self`, `crate`,
//! `super` and a leading digit get identifiers (`self_`, `x1st`); keywords are raw (`r#type`);
//! a `$defs` type may be named `String` or `Context`; a server named `Tools` gets the state type
//! `ToolsServer`; `x-` keys are everywhere. One crate, one build.

mod common;

use std::path::Path;
use std::process::Command;

use common::root;

const SPEC: &str = r##"{
  "name": "Tools",
  "x-owner": "someone",
  "$defs": {
    "String": {
      "type": "string",
      "description": "A string type named like the standard one."
    },
    "Context": {
      "type": "object",
      "properties": {
        "id": {
          "type": "integer"
        }
      },
      "required": [
        "id"
      ]
    }
  },
  "resolvers": {
    "base": {
      "params": {
        "ctx": "context",
        "_any name!": "context"
      },
      "returns": {
        "$ref": "#/$defs/Context"
      }
    },
    "type": {
      "params": {
        "ctx": "arg",
        "self": "arg",
        "state": {
          "resolver": "base"
        },
        "args": {
          "resolver": "base"
        },
        "async": {
          "resolver": "base"
        },
        "label": "arg"
      },
      "returns": {
        "$ref": "#/$defs/String"
      }
    },
    "super": {
      "params": {
        "round": {
          "resolver": "base"
        },
        "ctx_": {
          "resolver": "type"
        },
        "c": "context"
      },
      "returns": {
        "type": "object",
        "properties": {
          "ok": {
            "type": "boolean"
          }
        },
        "required": [
          "ok"
        ]
      },
      "asks": "elicit"
    },
    "state": {
      "description": "A resolver named like a local of the generated code.",
      "returns": {
        "type": "integer"
      }
    }
  },
  "tools": {
    "self": {
      "description": "A tool named self.",
      "input": {
        "type": "object",
        "properties": {
          "ctx": {
            "type": "string"
          },
          "self": {
            "type": "string"
          },
          "_id": {
            "type": "string"
          },
          "label": {
            "$ref": "#/$defs/String"
          }
        },
        "required": [
          "ctx",
          "self",
          "label"
        ]
      },
      "output": {
        "type": "string"
      },
      "resolve": {
        "args": "super",
        "type": "base",
        "state": "type"
      }
    },
    "1st": {
      "description": "A tool whose name starts with a digit.",
      "x-note": "kept and ignored",
      "annotations": {
        "readOnlyHint": true,
        "x-hint": 1
      },
      "title": "First",
      "input": {
        "type": "object",
        "properties": {
          "ctx": {
            "type": "string"
          },
          "self": {
            "type": "string"
          },
          "label": {
            "$ref": "#/$defs/String"
          }
        },
        "required": [
          "ctx",
          "self",
          "label"
        ]
      },
      "resolve": {
        "args": {
          "resolver": "super",
          "outcome": true,
          "x-why": "audit"
        }
      }
    },
    "crate": {
      "description": "A tool named crate.",
      "resolve": {
        "ctx": "base",
        "self": "base",
        "args": "base"
      }
    },
    "type": {
      "description": "A tool named like a keyword.",
      "input": {
        "type": "object",
        "properties": {
          "async": {
            "type": "integer"
          },
          "_id": {
            "type": "string"
          }
        }
      },
      "resolve": {
        "round": "state",
        "state": "state"
      }
    }
  },
  "prompts": {
    "self": {
      "description": "A prompt named self.",
      "x-p": true,
      "arguments": {
        "_topic": {
          "required": true,
          "x-a": 1
        },
        "ctx": {}
      },
      "resolve": {
        "args": "base",
        "ctx_": "base"
      }
    },
    "fixed": {
      "description": "Fixed.",
      "messages": [
        {
          "role": "user",
          "text": "hi",
          "x-m": 1
        }
      ]
    }
  },
  "resources": {
    "res://a": {
      "name": "self",
      "text": "a",
      "x-r": 1
    }
  },
  "resourceTemplates": {
    "res://{self}/{type}": {
      "name": "crate",
      "x-t": 1,
      "complete": {
        "self": [
          "a"
        ]
      }
    }
  },
  "notifications": {
    "toolsListChanged": true,
    "x-n": 1
  }
}
"##;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn a_spec_of_odd_and_reserved_names_generates_a_crate_that_compiles() {
    let dir = std::env::temp_dir().join(format!("mcpgen-names-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("odd.json");
    std::fs::write(&spec, SPEC).unwrap();
    let krate = dir.join("odd");
    let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(["new", "odd", "--spec", "odd.json", "--runtime-path"])
        .arg(root().join("runtime"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let handlers = read(&krate.join("src/handlers.rs"));
    for expected in [
        "pub struct ToolsServer {}",
        // `"ctx": "context"` and `"_any name!": "context"` are the context itself.
        "    async fn base(&self, _ctx: &Context) -> Result<types::Context, ToolError> {",
        // An `"arg"` named `ctx`: the context steps aside.
        "    async fn r#type(\n        &self,\n        _ctx_: &Context,\n        _ctx: &str,\n        _self_: &str,\n        _state: &types::Context,\n        _args: &types::Context,\n        _async: &types::Context,\n        _label: &types::String,\n    ) -> Result<types::String, ToolError> {",
        // Resolved parameters named `args` and `ctx`: so do the arguments and the context.
        "    async fn crate_(\n        &self,\n        _ctx_: &Context,\n        _args_: ::serde_json::Map<String, ::serde_json::Value>,\n        _ctx: types::Context,\n        _self_: types::Context,\n        _args: types::Context,\n    ) -> Result<Vec<ContentBlock>, ToolError> {",
        "    async fn x1st(\n        &self,\n        _ctx: &Context,\n        _args_: types::X1stArgs,\n        _args: Outcome<types::SuperValue>,\n    ) -> Result<Vec<ContentBlock>, ToolError> {",
        "    async fn self_(\n        &self,\n        _ctx_: &Context,\n        _args_: types::SelfArguments,\n        _args: types::Context,\n        _ctx: types::Context,\n    ) -> Result<Vec<PromptMessage>, ToolError> {",
    ] {
        assert!(
            handlers.contains(expected),
            "{expected}\nnot in\n{handlers}"
        );
    }
    let generated = read(&krate.join("src/generated/mod.rs"));
    for expected in [
        // Values of resolver-valued parameters named like the call's locals step aside.
        "(Slot::Ready(state_), Slot::Ready(args_), Slot::Ready(r#async)) => {",
        "(Slot::Ready(round_), Slot::Ready(ctx_)) => {",
        "let output = Tools::r#type(state, ctx, args, Clone::clone(&r_state), r_state).await?;",
    ] {
        assert!(
            generated.contains(expected),
            "{expected}\nnot in the generated module"
        );
    }

    let out = common::cargo(
        &krate,
        &["build", "--quiet", "--message-format=short"],
        common::Lints::Clippy,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the crate does not compile clippy-clean:\n{stderr}"
    );
    assert!(!stderr.contains("warning"), "warnings:\n{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
