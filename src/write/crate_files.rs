//! Every file of a generated crate: the generated module and runtime (mcpgen-owned), and the
//! files written once for the user (`Cargo.toml`, `README.md`, `src/lib.rs`, `src/main.rs`,
//! `src/handlers.rs`, `tests/tools.rs`).

use minijinja::{Environment, context};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde::Serialize;

use crate::check::Checked;
use crate::emit::access::code_span;
use crate::emit::idents::doc;
use crate::emit::module::{generated_module, readable};
use crate::emit::signatures::Signatures;
use crate::emit::stubs::{
    self, code_readers, prompt_stub, resolver_stub, resource_stub, tool_stub,
};
use crate::model::{ResolverId, ToolId};
use crate::names;
use crate::write::readme_testing::testing_view;
use crate::write::runtime_files::{self, RuntimeSource};
use crate::write::stamp::{short_hash, stamp};

/// The file, relative to `OUT_DIR`, that `src/main.rs` includes in build.rs mode.
pub const BUNDLE: &str = "mcpgen/generated.rs";

/// Who owns a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// mcpgen: rewritten by every `generate`.
    Mcpgen,
    /// The user: written once by `new`, never overwritten.
    User,
}

/// One file of a generated crate, relative to the crate's root.
#[derive(Debug, Clone)]
pub struct CrateFile {
    /// Relative path, `/`-separated.
    pub path: String,
    /// Contents.
    pub contents: String,
    /// Who owns it.
    pub owner: Owner,
}

/// The dependencies of every generated crate besides the runtime's line: those generated code
/// names itself ([`runtime_files::NAMED_BY_GENERATED_CODE`]), mimalloc for the allocator
/// `src/main.rs` installs, and what typify's output needs.
pub fn dependencies(checked: &Checked) -> Vec<String> {
    let mut deps: Vec<String> = (runtime_files::NAMED_BY_GENERATED_CODE.iter())
        .map(|line| line.to_string())
        .collect();
    // `no_thp`: mimalloc asks for transparent huge pages by default, which makes every touched
    // 2 MiB of its heap resident (an idle HTTP session then costs 104 KiB of RSS instead of
    // 69 KiB, the server starts at 19 MiB instead of 12 MiB).
    deps.push(r#"mimalloc = { version = "0.1", features = ["no_thp"] }"#.into());
    if checked.types.uses_regress {
        deps.push(r#"regress = "0.12""#.into());
    }
    if checked.types.uses_chrono {
        deps.push(r#"chrono = { version = "0.4", default-features = false, features = ["serde", "std"] }"#.into());
    }
    if checked.types.uses_uuid {
        deps.push(r#"uuid = { version = "1", features = ["serde"] }"#.into());
    }
    deps
}

/// The runtime's `[dependencies]` value for a crate of this spec whose runtime comes from
/// `source`.
pub fn runtime_dependency(checked: &Checked, source: &RuntimeSource) -> String {
    source.dependency(&runtime_files::spec_features(checked.model.auth.is_some()))
}

/// The files mcpgen owns: `src/generated/mod.rs` (stamped with the spec's hash), unless
/// `build_rs` (the build script writes it into `OUT_DIR` then), and, when the crate vendors the
/// runtime, the vendored crate.
pub fn generated_files(
    checked: &Checked,
    spec_file: &str,
    spec_text: &str,
    runtime: &RuntimeSource,
    build_rs: bool,
) -> Result<Vec<CrateFile>, String> {
    let mut files = Vec::new();
    if !build_rs {
        let spec_hash = short_hash(spec_text.as_bytes());
        files.push(CrateFile {
            path: "src/generated/mod.rs".into(),
            contents: stamp(
                &generated_module(&checked.model, &checked.types)?,
                spec_file,
                &spec_hash,
            ),
            owner: Owner::Mcpgen,
        });
    }
    if *runtime == RuntimeSource::Vendored {
        files.extend(vendored_runtime());
    }
    Ok(files)
}

/// The vendored runtime crate's files, in [`runtime_files::VENDOR_DIR`].
pub fn vendored_runtime() -> impl Iterator<Item = CrateFile> {
    (runtime_files::vendored().iter()).map(|(path, contents)| CrateFile {
        path: format!("{}/{path}", runtime_files::VENDOR_DIR),
        contents: contents.clone(),
        owner: Owner::Mcpgen,
    })
}

#[derive(Serialize)]
struct ToolView {
    name: String,
    description: String,
    resolved: String,
    /// The scopes calling it needs, as code spans (empty without any).
    scopes: String,
}

/// The README's view of the spec's `auth` (its "Authorization" section).
#[derive(Serialize)]
struct AuthView {
    required: bool,
    /// What every request needs, as code spans (empty without any).
    scopes: String,
    /// How many scopes every request needs.
    scope_count: usize,
    /// What the protected-resource metadata lists, as code spans.
    scopes_supported: String,
    /// The operations with scopes of their own: "tool `borrow`: `loans:write`".
    operations: Vec<String>,
    list_visible_only: bool,
}

/// `scopes` as code spans, separated by spaces.
fn spans(scopes: &[String]) -> String {
    (scopes.iter().map(|s| code_span(s)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn auth_view(plan: &crate::model::Model) -> Option<AuthView> {
    let auth = plan.auth.as_ref()?;
    let mut operations = Vec::new();
    let mut add = |what: &str, name: &str, scopes: &[String]| {
        if !scopes.is_empty() {
            operations.push(format!("{what} {}: {}", code_span(name), spans(scopes)));
        }
    };
    plan.tools
        .iter()
        .for_each(|t| add("tool", &t.name, &t.scopes));
    plan.prompts
        .iter()
        .for_each(|p| add("prompt", &p.name, &p.scopes));
    plan.resources
        .iter()
        .for_each(|r| add("resource", &r.uri, &r.scopes));
    (plan.templates.iter()).for_each(|t| add("template", &t.uri_template, &t.scopes));
    Some(AuthView {
        required: auth.required,
        scopes: spans(&auth.scopes),
        scope_count: auth.scopes.len(),
        scopes_supported: spans(&auth.scopes_supported),
        operations,
        list_visible_only: auth.list_visible_only,
    })
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.add_template("Cargo.toml", include_str!("../../templates/Cargo.toml.j2"))
        .expect("template parses");
    env.add_template("README.md", include_str!("../../templates/README.md.j2"))
        .expect("template parses");
    env.add_template("gitignore", include_str!("../../templates/gitignore.j2"))
        .expect("template parses");
    env
}

/// Type names `src/handlers.rs` and `src/main.rs` already use: the items `new` imports from the
/// generated module, and the prelude's types. A server named like one gets a state type with
/// `Server` after its name instead (`Tools` -> `ToolsServer`).
const TAKEN_TYPE_NAMES: &[&str] = &[
    "Self",
    "Context",
    "Resolvers",
    "Tools",
    "Prompts",
    "Resources",
    "ToolError",
    "Ask",
    "Outcome",
    "PromptMessage",
    "ResourceBody",
    "CreateMessageResult",
    "ListRootsResult",
    "ContentBlock",
    "String",
    "Vec",
    "Option",
    "Result",
    "Box",
    "Some",
    "None",
    "Ok",
    "Err",
];

/// The name of the user's state type (`Bookshop`).
pub fn state_type(checked: &Checked) -> String {
    let t = names::type_name(&checked.model.name);
    if t.is_empty() || !t.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
        format!("Server{t}")
    } else if TAKEN_TYPE_NAMES.contains(&t.as_str()) {
        format!("{t}Server")
    } else {
        t
    }
}

/// How a new crate gets its generated code.
#[derive(Debug, Clone)]
pub struct NewOptions {
    /// Generated code in `OUT_DIR` from a build script (instead of `src/generated/`).
    pub build_rs: bool,
    /// The build-dependency value for mcpgen in build.rs mode, e.g.
    /// `{ version = "=0.1.0", path = "../mcpgen" }` (default: this version, from the registry).
    pub mcpgen_dependency: Option<String>,
    /// The crate will be a member of a cargo workspace, whose root alone holds profiles: leave
    /// out the crate's `[profile.release]`.
    pub in_workspace: bool,
    /// Where the runtime crate comes from (default: vendored).
    pub runtime: RuntimeSource,
}

impl Default for NewOptions {
    fn default() -> Self {
        NewOptions {
            build_rs: false,
            mcpgen_dependency: None,
            in_workspace: false,
            runtime: RuntimeSource::Vendored,
        }
    }
}

/// Every file of a new crate named `crate_name` (generated code in `src/generated/`).
pub fn new_crate_files(
    checked: &Checked,
    crate_name: &str,
    spec_file: &str,
    spec_text: &str,
) -> Result<Vec<CrateFile>, String> {
    new_crate_files_with(
        checked,
        crate_name,
        spec_file,
        spec_text,
        &NewOptions::default(),
    )
}

/// Every file of a new crate named `crate_name`, with options.
pub fn new_crate_files_with(
    checked: &Checked,
    crate_name: &str,
    spec_file: &str,
    spec_text: &str,
    options: &NewOptions,
) -> Result<Vec<CrateFile>, String> {
    let plan = &checked.model;
    let env = environment();
    let render = |name: &str, ctx: minijinja::Value| {
        env.get_template(name)
            .and_then(|t| t.render(ctx))
            .map(|s| if s.ends_with('\n') { s } else { s + "\n" })
            .map_err(|e| format!("internal error: template {name}: {e}"))
    };
    let description = match &plan.title {
        Some(t) => format!("{t}: an MCP server generated by mcpgen"),
        None => format!("The {} MCP server, generated by mcpgen", plan.name),
    };
    let tools: Vec<ToolView> = plan
        .tools
        .iter()
        .map(|t| ToolView {
            name: t.name.clone(),
            description: t.description.lines().next().unwrap_or_default().to_string(),
            resolved: t
                .chain
                .bindings
                .iter()
                .map(|b| format!("`{}`", b.param))
                .collect::<Vec<_>>()
                .join(", "),
            scopes: spans(&t.scopes),
        })
        .collect();
    let auth = auth_view(plan).map(minijinja::value::Serde);
    let cargo_toml = render(
        "Cargo.toml",
        context! {
            crate_name, description, spec_file, dependencies => dependencies(checked),
            runtime_crate => runtime_files::CRATE_NAME,
            runtime_dependency => runtime_dependency(checked, &options.runtime),
            vendored => options.runtime == RuntimeSource::Vendored,
            features => runtime_files::crate_features(),
            auth => plan.auth.is_some(),
            build_rs => options.build_rs,
            release_profile => !options.in_workspace,
            mcpgen_dependency => options.mcpgen_dependency.clone().unwrap_or_else(|| format!("\"={}\"", env!("CARGO_PKG_VERSION"))),
        },
    )?;
    let testing = testing_view(
        plan,
        crate_name,
        &state_type(checked),
        &cargo_toml,
        options.build_rs,
    );
    let mut files = vec![
        CrateFile {
            path: "Cargo.toml".into(),
            contents: cargo_toml,
            owner: Owner::User,
        },
        CrateFile {
            path: "README.md".into(),
            contents: render(
                "README.md",
                context! { crate_name, server_name => &plan.name, title => &plan.title, spec_file, graph => crate::write::readme_graph::block(&checked.model), tools => minijinja::value::Serde(&tools), state_type => state_type(checked), sessions => checked.model.limits.sessions_phrase(), build_rs => options.build_rs, runtime_source => runtime_source_name(&options.runtime), release_profile => !options.in_workspace, auth, testing => minijinja::value::Serde(&testing) },
            )?,
            owner: Owner::User,
        },
        CrateFile {
            path: ".gitignore".into(),
            contents: render("gitignore", context! {})?,
            owner: Owner::User,
        },
        CrateFile {
            path: spec_file.into(),
            contents: spec_text.to_string(),
            owner: Owner::User,
        },
        CrateFile {
            path: "src/lib.rs".into(),
            contents: lib_rs(checked, options.build_rs)?,
            owner: Owner::User,
        },
        CrateFile {
            path: "src/main.rs".into(),
            contents: main_rs(checked, crate_name)?,
            owner: Owner::User,
        },
        CrateFile {
            path: "src/handlers.rs".into(),
            contents: String::new(),
            owner: Owner::User,
        },
    ];
    let handlers_at = files.len() - 1;
    // rustfmt is a process of its own: it formats the handlers and the tests (one test per
    // tool: the largest files `new` writes after the generated module) while the rest is
    // generated.
    let handlers = handlers_rs(checked)?;
    let rustfmt = std::thread::spawn(move || formatted(handlers));
    let tests = tools_rs(checked, crate_name)?;
    let tests_rustfmt = std::thread::spawn(move || formatted(tests));
    if options.build_rs {
        files.push(CrateFile {
            path: "build.rs".into(),
            contents: build_rs(spec_file)?,
            owner: Owner::User,
        });
    }
    files.extend(generated_files(
        checked,
        spec_file,
        spec_text,
        &options.runtime,
        options.build_rs,
    )?);
    files[handlers_at].contents = rustfmt
        .join()
        .map_err(|_| "internal error: formatting src/handlers.rs failed".to_string())?;
    files.insert(
        handlers_at + 1,
        CrateFile {
            path: "tests/tools.rs".into(),
            contents: tests_rustfmt
                .join()
                .map_err(|_| "internal error: formatting tests/tools.rs failed".to_string())?,
            owner: Owner::User,
        },
    );
    Ok(files)
}

/// How the crate README names where the runtime comes from: `vendored`, `path` or `registry`.
fn runtime_source_name(source: &RuntimeSource) -> &'static str {
    match source {
        RuntimeSource::Vendored => "vendored",
        RuntimeSource::Path(_) => "path",
        RuntimeSource::Registry | RuntimeSource::Copy => "registry",
    }
}

/// Formats a file the user will own: prettyplease, then rustfmt when one is installed (so the
/// user's `cargo fmt --check` is clean from the start; generated files never go through rustfmt,
/// their bytes depend on mcpgen alone).
fn unparse(tokens: TokenStream) -> Result<String, String> {
    prettyprint(tokens).map(formatted)
}

/// prettyplease's text of `tokens`, made [`readable`].
fn prettyprint(tokens: TokenStream) -> Result<String, String> {
    let file: syn::File = syn::parse2(tokens)
        .map_err(|e| format!("internal error: generated code does not parse: {e}"))?;
    Ok(readable(&prettyplease::unparse(&file)))
}

/// `text` through rustfmt when one is installed.
fn formatted(text: String) -> String {
    rustfmt(&text).unwrap_or(text)
}

fn rustfmt(text: &str) -> Option<String> {
    use std::io::Write;
    let mut child = std::process::Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(text.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    let formatted = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !formatted.is_empty()).then_some(formatted)
}

fn build_rs(spec_file: &str) -> Result<String, String> {
    let doc = " Generates the server's code from the spec into `OUT_DIR` (mcpgen's build.rs mode).";
    unparse(quote! {
        #![doc = #doc]

        fn main() {
            mcpgen::Builder::new(#spec_file).compile_or_exit();
        }
    })
}

/// The crate's library name: its package name with `-` as `_` (what `main.rs` and `tests/`
/// import it as).
pub fn lib_name(crate_name: &str) -> String {
    crate_name.replace('-', "_")
}

/// `src/lib.rs`: the generated module and the handlers, as a library (so `tests/` can use
/// them, the test kit among them; `src/main.rs` serves through it).
fn lib_rs(checked: &Checked, build_rs: bool) -> Result<String, String> {
    let doc1 = format!(
        " The `{}` MCP server as a library: the generated code and your handlers. `src/main.rs`",
        checked.model.name
    );
    let doc2 =
        " serves it; the tests in `tests/` call it through `generated::testing`. mcpgen wrote";
    let doc3 = " this file once; it is yours to change.";
    let header = quote! {
        #![doc = #doc1]
        #![doc = #doc2]
        #![doc = #doc3]
    };
    if build_rs {
        let bundle = format!("/{BUNDLE}");
        let gdoc = " The code mcpgen generates from the spec (by `build.rs`, into `OUT_DIR`).";
        return unparse(quote! {
            #header

            #[doc = #gdoc]
            pub mod generated {
                include!(concat!(env!("OUT_DIR"), #bundle));
            }
            pub mod handlers;
        });
    }
    unparse(quote! {
        #header

        // mcpgen owns `src/generated/` (`mcpgen generate` rewrites it); rustfmt leaves it alone.
        #[rustfmt::skip]
        pub mod generated;
        pub mod handlers;
    })
}

fn main_rs(checked: &Checked, crate_name: &str) -> Result<String, String> {
    let state = format_ident!("{}", state_type(checked));
    let lib = format_ident!("{}", lib_name(crate_name));
    let doc1 = format!(
        " The `{}` MCP server. mcpgen wrote this file once; it is yours to change.",
        checked.model.name
    );
    let alloc_doc = doc(
        "Every request allocates and frees many small values: mimalloc serves them faster than the\n\
         system allocator (remove this and the `mimalloc` dependency to use the system one).",
    );
    let main_doc = " Serves the library's server (`src/lib.rs`) from the command line.";
    unparse(quote! {
        #![doc = #doc1]

        #alloc_doc
        #[global_allocator]
        static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

        #[doc = #main_doc]
        fn main() -> std::process::ExitCode {
            #lib::generated::serve(#lib::handlers::#state::default())
        }
    })
}

/// `tests/tools.rs` of a new crate, before rustfmt: one test per tool through the test kit.
fn tools_rs(checked: &Checked, crate_name: &str) -> Result<String, String> {
    let sig = Signatures::new(&checked.model, &checked.types);
    prettyprint(sig.tools_test(&lib_name(crate_name), &state_type(checked)))
}

/// `src/handlers.rs` of a new crate, before rustfmt.
fn handlers_rs(checked: &Checked) -> Result<String, String> {
    let sig = Signatures::new(&checked.model, &checked.types);
    let plan = &checked.model;
    let state = format_ident!("{}", state_type(checked));
    let prelude = stubs::prelude(&sig);
    let resolvers = (0..plan.resolvers.len())
        .map(|i| resolver_stub(&sig, ResolverId::at(i)))
        .collect::<Vec<_>>();
    let tools = (0..plan.tools.len())
        .map(|i| tool_stub(&sig, ToolId::at(i)))
        .collect::<Vec<_>>();
    let prompts = plan
        .code_prompts()
        .map(|p| prompt_stub(&sig, p))
        .collect::<Vec<_>>();
    let resources = code_readers(&checked.model)
        .iter()
        .map(|r| resource_stub(&sig, r))
        .collect::<Vec<_>>();
    let prompts_impl = if prompts.is_empty() {
        quote!()
    } else {
        quote! {
            impl Prompts for #state {
                #(#prompts)*
            }
        }
    };
    let resources_impl = if resources.is_empty() {
        quote!()
    } else {
        quote! {
            impl Resources for #state {
                #(#resources)*
            }
        }
    };
    let imports = prelude.items.iter().map(|n| format_ident!("{n}"));
    let types_import = if prelude.types {
        quote!(
            use crate::generated::types;
        )
    } else {
        quote!()
    };
    let doc1 = format!(
        " The behaviour of the `{}` server: one method per resolver, tool, prompt written in code and resource read in code.",
        plan.name
    );
    let doc2 =
        " mcpgen wrote this file once and never overwrites it; `mcpgen generate` appends stubs for";
    let doc3 = " tools and resolvers added to the spec. Each stub answers \"not implemented\" until you write it.";
    let state_doc =
        " Server-wide state, shared by every call (add fields: configuration, pools, ...).";
    prettyprint(quote! {
        #![doc = #doc1]
        #![doc = ""]
        #![doc = #doc2]
        #![doc = #doc3]

        #types_import
        use crate::generated::{#(#imports),*};

        #[doc = #state_doc]
        #[derive(Debug, Default)]
        pub struct #state {}

        impl Resolvers for #state {
            #(#resolvers)*
        }

        impl Tools for #state {
            #(#tools)*
        }

        #prompts_impl

        #resources_impl
    })
}
