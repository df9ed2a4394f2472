//! Keeping user code in step with the spec without ever losing a byte of it.
//!
//! The user's `impl Resolvers for ..` and `impl Tools for ..` blocks are found with syn in the
//! crate's own sources (everything under `src/` but `src/generated/`). For a tool or resolver
//! new in the spec, a stub is inserted just before the closing brace of the right block: every
//! existing byte stays, in order. Methods whose tool or resolver left the spec are kept and
//! reported; methods whose signature no longer matches are reported with what to change. The
//! compiler does the rest.

use std::path::{Path, PathBuf};

use proc_macro2::{Group, TokenStream, TokenTree};
use quote::{ToTokens, quote};

use crate::check::Checked;
use crate::emit::module::readable;
use crate::emit::signatures::Signatures;
use crate::emit::stubs::{
    code_readers, prelude, prompt_stub, resolver_stub, resource_stub, tool_stub,
};
use crate::names;
use crate::write::runtime_files::{self, CRATE_NAME, RuntimeSource};

/// A change to one user file: its new text (the old text with stubs inserted).
#[derive(Debug, Clone)]
pub struct UserEdit {
    /// The file, relative to the crate.
    pub path: String,
    /// The text before.
    pub old: String,
    /// The text after.
    pub new: String,
    /// The stubs added, e.g. `tool \`search\``.
    pub added: Vec<String>,
    /// The methods renamed (`mcpgen generate --rename`), each said in full.
    pub renamed: Vec<String>,
}

/// The outcome of comparing user code with the spec.
#[derive(Debug, Clone, Default)]
pub struct UserCodePlan {
    /// Files that get stubs.
    pub edits: Vec<UserEdit>,
    /// Things the user should know (kept methods of removed tools, changed signatures, files
    /// that could not be read).
    pub notes: Vec<String>,
}

/// Which generated trait an impl block implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trait {
    Resolvers,
    Tools,
    Prompts,
    Resources,
}

impl Trait {
    const ALL: [Trait; 4] = [
        Trait::Resolvers,
        Trait::Tools,
        Trait::Prompts,
        Trait::Resources,
    ];

    fn name(self) -> &'static str {
        match self {
            Trait::Resolvers => "Resolvers",
            Trait::Tools => "Tools",
            Trait::Prompts => "Prompts",
            Trait::Resources => "Resources",
        }
    }

    /// What one of its methods implements, for messages.
    fn kind(self) -> &'static str {
        match self {
            Trait::Resolvers => "resolver",
            Trait::Tools => "tool",
            Trait::Prompts => "prompt",
            Trait::Resources => "resource",
        }
    }
}

struct ImplBlock {
    file: usize,
    which: Trait,
    /// The implementing type, as written.
    self_ty: String,
    /// Byte offset of the block's closing brace.
    close: usize,
    methods: Vec<Method>,
}

struct Method {
    name: String,
    line: usize,
    /// Byte offsets of its signature in the file (`fn` to the end of the return type).
    sig: (usize, usize),
    params: Vec<String>,
    output: String,
}

/// `tokens` with each of `names` (what `new` imports into `handlers.rs` from the generated
/// module, [`crate::emit::stubs::StubPrelude`]) spelled out in full, for stubs appended later (the user's imports
/// are never touched).
fn qualify(tokens: TokenStream, names: &[&str]) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    for tt in tokens {
        // After `::` a name is already a path segment; after a single `:` it starts a type.
        let after_path_sep = matches!(
            out.as_slice(),
            [.., TokenTree::Punct(a), TokenTree::Punct(b)] if a.as_char() == ':' && b.as_char() == ':'
        );
        match tt {
            TokenTree::Ident(ref i) if !after_path_sep && names.iter().any(|n| i == n) => {
                out.extend(quote!(crate::generated::));
                out.push(tt);
            }
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), qualify(g.stream(), names));
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// The text of one stub method, indented for an impl block, with generated names in full.
fn stub_text(stub: TokenStream) -> String {
    let wrapper = quote! { impl X for Y { #stub } };
    let file: syn::File = syn::parse2(wrapper).expect("a stub parses");
    let text = readable(&prettyplease::unparse(&file));
    // Drop the `impl X for Y {` line and the closing brace.
    let lines: Vec<&str> = text.lines().collect();
    lines[1..lines.len() - 1].join("\n") + "\n"
}

/// The normalized text of a type: paths reduced to their last segment, spaces removed.
fn normalize(tokens: TokenStream) -> String {
    let mut out = String::new();
    let toks: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            TokenTree::Ident(_) if matches!(toks.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':') =>
            {
                // skip `a::`
                i += 3;
                continue;
            }
            // A leading `::` (the `a::` separators are dropped with their segment above).
            TokenTree::Punct(p)
                if p.as_char() == ':'
                    && matches!(toks.get(i + 1), Some(TokenTree::Punct(q)) if q.as_char() == ':') =>
            {
                i += 2;
                continue;
            }
            TokenTree::Group(g) => {
                let inner = normalize(g.stream());
                let (o, c) = match g.delimiter() {
                    proc_macro2::Delimiter::Parenthesis => ("(", ")"),
                    proc_macro2::Delimiter::Bracket => ("[", "]"),
                    proc_macro2::Delimiter::Brace => ("{", "}"),
                    proc_macro2::Delimiter::None => ("", ""),
                };
                out.push_str(&format!("{o}{inner}{c}"));
            }
            TokenTree::Ident(id) if id == "String" => out.push_str("String"),
            tt => out.push_str(&tt.to_string()),
        }
        i += 1;
    }
    out.replace("&'_", "&").replace("& ", "&")
}

fn signature_of(sig: &syn::Signature) -> (Vec<String>, String) {
    let params = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(normalize(t.ty.to_token_stream())),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let output = match &sig.output {
        syn::ReturnType::Default => "()".into(),
        syn::ReturnType::Type(_, t) => normalize(t.to_token_stream()),
    };
    (params, output)
}

fn rust_sources(crate_dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, skip: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for p in entries {
            if p == skip {
                continue;
            }
            if p.is_dir() {
                walk(&p, skip, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let src = crate_dir.join("src");
    let mut out = Vec::new();
    walk(&src, &src.join("generated"), &mut out);
    // handlers.rs first: where `new` put the impls and where new ones go by preference.
    out.sort_by_key(|p| !p.ends_with("handlers.rs"));
    out
}

/// Compares the user code of the crate in `crate_dir` with `checked` and plans the stubs to add.
///
/// Each of `renames` (`OLD`, `NEW`: spec names, as `mcpgen generate --rename OLD=NEW` gives
/// them) renames the user's method of `OLD`, a tool, resolver or prompt the spec no longer has,
/// to the method of `NEW`, which the spec has and the code lacks: its body is kept, and no stub
/// is added for `NEW`. A rename that cannot be made is an error, and nothing is planned.
pub fn plan(
    crate_dir: &Path,
    checked: &Checked,
    renames: &[(String, String)],
) -> Result<UserCodePlan, String> {
    let mut result = UserCodePlan::default();
    let mut sources = read_sources(crate_dir, &mut result.notes);
    let sig = Signatures::new(&checked.model, &checked.types);
    let expected = expected(&sig);
    let names: Vec<&str> = prelude(&sig).names().collect();
    let mut inserts = Vec::new();
    for (old, new) in renames {
        let (file, at, ident, what) = sources.rename(old, new, &expected)?;
        inserts.push(Insert {
            file,
            at,
            text: ident,
            what,
            rename: true,
        });
    }
    let mut new_blocks = Vec::new();
    for which in Trait::ALL {
        let here: Vec<&ImplBlock> = sources.blocks.iter().filter(|b| b.which == which).collect();
        let wanted: Vec<&Expected> = expected.iter().filter(|e| e.which == which).collect();
        if here.is_empty()
            && !wanted.is_empty()
            && matches!(which, Trait::Prompts | Trait::Resources)
            && let Some(block) = sources.new_block(which, &wanted, &names)
        {
            new_blocks.extend(block);
            continue;
        }
        for e in wanted {
            match here.iter().find_map(|b| b.methods.iter().find(|m| m.name == e.method).map(|m| (b, m))) {
                Some((b, m)) => result.notes.extend(changed_signature(&sources.texts[b.file].0, m, e)),
                None => match here.first() {
                    Some(b) => inserts.push(Insert {
                        file: b.file,
                        at: (b.close, b.close),
                        text: stub_text(qualify(e.stub.clone(), &names)),
                        what: e.what(),
                        rename: false,
                    }),
                    None => result.notes.push(format!(
                        "no `impl {} for ..` block was found under src/; add the {} `{}` there:\n{}",
                        which.name(),
                        e.kind,
                        e.spec_name,
                        stub_text(qualify(e.stub.clone(), &names))
                    )),
                },
            }
        }
        result.notes.extend(sources.gone(which, &here, &expected));
    }
    // A new block is one insertion (at the file's end) covering all its stubs.
    let mut seen_blocks = std::collections::HashSet::new();
    for (f, off, block, what) in new_blocks {
        if seen_blocks.insert(block.clone()) {
            inserts.push(Insert {
                file: f,
                at: (off, off),
                text: block,
                what,
                rename: false,
            });
        } else if let Some(last) = inserts.last_mut() {
            last.what.push_str(&format!(", {what}"));
        }
    }
    result.edits = apply(&sources.texts, inserts);
    // The notes about `Cargo.toml` read it once, here.
    let manifest = manifest(crate_dir);
    let manifest = manifest.as_ref();
    result
        .notes
        .extend(manifest.and_then(|m| dependencies_note(m, checked)));
    result.notes.extend(kit_note(crate_dir));
    // A crate with the runtime's copy gets its manifest moved (`move_to_runtime_crate`) instead.
    if let Some(m) = manifest.filter(|m| runtime_files::source_of(m) != RuntimeSource::Copy) {
        result.notes.extend(runtime_note(m, checked));
        result.notes.extend(features_note(m));
    }
    Ok(result)
}

/// `text` with the first `n` occurrences of the identifier `word` (not inside a longer one)
/// replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str, n: usize) -> String {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut rest = text;
    let mut done = 0;
    while done < n
        && let Some(i) = rest.find(word)
    {
        let before = rest[..i].chars().next_back();
        let after = rest[i + word.len()..].chars().next();
        out.push_str(&rest[..i]);
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) {
            out.push_str(word);
        } else {
            out.push_str(with);
            done += 1;
        }
        rest = &rest[i + word.len()..];
    }
    out.push_str(rest);
    out
}

/// One change to a user file: the bytes `at` (start, end; equal for an insertion) replaced by
/// `text`; `what` says what it adds (`tool \`search\``) or, for a rename, what it renames.
struct Insert {
    file: usize,
    at: (usize, usize),
    text: String,
    what: String,
    rename: bool,
}

/// The crate's `Cargo.toml`, parsed; `None` when it cannot be read or parsed.
fn manifest(crate_dir: &Path) -> Option<toml::Table> {
    std::fs::read_to_string(crate_dir.join("Cargo.toml"))
        .ok()?
        .parse()
        .ok()
}

/// The one note for a crate whose `Cargo.toml` lacks a dependency the generated code names:
/// one the spec's types need since an edit (`regress` for a `pattern`, `chrono` for a
/// `date-time`, `uuid`), each as the line to add. `mimalloc` is the user's `src/main.rs`'s.
/// `generate` never writes `Cargo.toml` (but to move a crate off the runtime's copy): it is
/// the user's.
pub fn dependencies_note(manifest: &toml::Table, checked: &Checked) -> Option<String> {
    let declared = manifest.get("dependencies").and_then(toml::Value::as_table);
    let missing: Vec<String> = crate::write::crate_files::dependencies(checked)
        .into_iter()
        .filter(|line| {
            let name = line_key(line);
            name != "mimalloc" && !declared.is_some_and(|deps| deps.contains_key(name))
        })
        .collect();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "the generated code needs {} this crate's Cargo.toml does not declare; add to `[dependencies]`:\n{}",
        match missing.len() {
            1 => "a dependency".to_string(),
            n => format!("{n} dependencies"),
        },
        missing.join("\n")
    ))
}

/// The key of a `name = value` manifest line.
fn line_key(line: &str) -> &str {
    line.split_once(" = ").map_or(line, |(name, _)| name)
}

/// The one note for a crate whose runtime dependency does not fit this mcpgen and this spec:
/// another version than this generator's (the generated code is this version's), or without a
/// feature the spec needs (`auth`), or without `server`; with the line to set.
pub fn runtime_note(manifest: &toml::Table, checked: &Checked) -> Option<String> {
    let dependency = manifest.get("dependencies")?.get(CRATE_NAME)?;
    let wanted_version = format!("={}", runtime_files::version());
    let mut wrong = Vec::new();
    match dependency.get("version").and_then(toml::Value::as_str) {
        Some(v) if v == wanted_version => {}
        Some(v) => wrong.push(format!(
            "it asks for version `{v}`, and this code is generated for `{wanted_version}`"
        )),
        None => wrong.push(format!("it names no version (`{wanted_version}`)")),
    }
    let features: Vec<&str> = (dependency.get("features").and_then(toml::Value::as_array))
        .map(|a| a.iter().filter_map(toml::Value::as_str).collect())
        .unwrap_or_default();
    let auth = checked.model.auth.is_some();
    let needed = std::iter::once("server").chain(runtime_files::spec_features(auth));
    let missing: Vec<&str> = needed.filter(|f| !features.contains(f)).collect();
    if !missing.is_empty() {
        wrong.push(format!(
            "it lacks the feature{} {} the spec needs",
            if missing.len() == 1 { "" } else { "s" },
            missing
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if wrong.is_empty() {
        return None;
    }
    let source = runtime_files::source_of(manifest);
    Some(format!(
        "this crate's `{CRATE_NAME}` dependency does not fit: {}; set in `[dependencies]`:\n{CRATE_NAME} = {}",
        wrong.join("; "),
        crate::write::crate_files::runtime_dependency(checked, &source)
    ))
}

/// The one note for a crate whose `[features]` lack one of the runtime's features or give it
/// another value than passing it on (`telemetry = ["mcpgen-runtime/telemetry"]`), each as the
/// line to set.
pub fn features_note(manifest: &toml::Table) -> Option<String> {
    let declared = manifest.get("features").and_then(toml::Value::as_table);
    let differs = |line: &String| {
        let name = line_key(line);
        let wanted = line.parse::<toml::Table>().ok();
        match (
            declared.and_then(|d| d.get(name)),
            wanted.as_ref().and_then(|t| t.get(name)),
        ) {
            (Some(have), Some(want)) => have != want,
            (None, _) => true,
            _ => false,
        }
    };
    let wrong: Vec<String> = (runtime_files::crate_features().into_iter())
        .filter(differs)
        .collect();
    if wrong.is_empty() {
        return None;
    }
    Some(format!(
        "this crate's `[features]` do not pass the runtime's on; set in `[features]`:\n{}",
        wrong.join("\n")
    ))
}

/// The one note for a crate made before the test kit: it has no library (`src/lib.rs`), which
/// the kit and `tests/` use. `generate` never writes the file: it is the user's.
pub fn kit_note(crate_dir: &Path) -> Option<String> {
    if crate_dir.join("src/lib.rs").exists() {
        return None;
    }
    Some(
        "the test kit (`generated::testing`, for tests in tests/) needs the layout `mcpgen new` writes now, and this crate has no src/lib.rs: \
         move the `mod generated` and `mod handlers` items of src/main.rs into a new src/lib.rs as `pub mod` \
         (src/main.rs then calls `<crate>::generated::serve(..)`), and add `[lib] doctest = false` to Cargo.toml \
         (the README's \"Testing\" section of a crate made by `mcpgen new` shows it)"
            .to_string(),
    )
}

/// The dependencies a crate with the runtime's copy declared for it (the copy's optional ones,
/// which its `telemetry` and `testing` features named, and the rest).
const COPY_OPTIONAL: &[&str] = &[
    "opentelemetry",
    "opentelemetry_sdk",
    "opentelemetry-otlp",
    "opentelemetry-prometheus",
    "prometheus",
    "tracing-opentelemetry",
    "sse-stream",
];
const COPY_REQUIRED: &[&str] = &[
    "rmcp",
    "tokio",
    "axum",
    "hyper",
    "hyper-util",
    "tower-service",
    "tokio-util",
    "jsonschema",
    "clap",
    "futures",
    "tracing",
    "tracing-subscriber",
    "aes-gcm",
    "percent-encoding",
    "hkdf",
    "sha2",
    "base64",
    "humantime",
    "jsonwebtoken",
    "reqwest",
    "rustls",
    "rustls-platform-verifier",
    "arc-swap",
    "quick_cache",
    "subtle",
    "redis",
];

/// The move of a crate that carries the runtime's copy to the vendored runtime crate: its
/// `Cargo.toml` before and after, and the note that says what changed.
#[derive(Debug, Clone)]
pub struct ManifestMove {
    /// The manifest before.
    pub old: String,
    /// The manifest after (comments and layout kept).
    pub new: String,
    /// What changed, for people.
    pub note: String,
}

/// Moves `manifest` (a crate's `Cargo.toml` with the runtime's copy) to the runtime crate,
/// vendored: the runtime's dependency line added, the runtime's features passed on to it, and
/// the copy's optional dependencies (which only those features named) removed. The copy's other
/// dependencies stay, since the user's code may use them too; the note lists them.
pub fn move_to_runtime_crate(manifest: &str, checked: &Checked) -> Result<ManifestMove, String> {
    use toml_edit::{DocumentMut, Item, Table};
    let mut doc: DocumentMut = manifest
        .parse()
        .map_err(|e| format!("Cargo.toml is not valid TOML: {e}"))?;
    let line = crate::write::crate_files::runtime_dependency(checked, &RuntimeSource::Vendored);
    let value: DocumentMut = format!("v = {line}")
        .parse()
        .map_err(|e| format!("internal error: the runtime's line: {e}"))?;
    let deps = doc
        .entry("dependencies")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or("Cargo.toml's `dependencies` is not a table")?;
    let mut removed = Vec::new();
    for name in COPY_OPTIONAL {
        let optional = deps
            .get(name)
            .and_then(|d| d.get("optional"))
            .and_then(|o| o.as_bool())
            == Some(true);
        if optional {
            deps.remove(name);
            removed.push(format!("`{name}`"));
        }
    }
    deps.insert(CRATE_NAME, value["v"].clone());
    let kept: Vec<String> = (COPY_REQUIRED.iter())
        .filter(|name| deps.contains_key(name))
        .map(|name| format!("`{name}`"))
        .collect();
    let features = doc
        .entry("features")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or("Cargo.toml's `features` is not a table")?;
    let mut set = Vec::new();
    for feature in runtime_files::crate_features() {
        let parsed: DocumentMut = feature
            .parse()
            .map_err(|e| format!("internal error: the runtime's features: {e}"))?;
        let (name, value) = parsed
            .iter()
            .next()
            .ok_or("internal error: empty feature")?;
        if features.get(name).map(|v| v.to_string().trim().to_string())
            != Some(value.to_string().trim().to_string())
        {
            features.insert(name, value.clone());
            set.push(feature.clone());
        }
    }
    let new = doc.to_string();
    let mut note = format!(
        "this crate carried a copy of the runtime in {}/; it now depends on the runtime crate, vendored in {}/ (which `mcpgen generate` keeps current). Cargo.toml changed: `[dependencies]` gained\n{CRATE_NAME} = {line}",
        runtime_files::COPY_DIR,
        runtime_files::VENDOR_DIR
    );
    if !set.is_empty() {
        note.push_str(&format!(
            "\n`[features]` now pass the runtime's on:\n{}",
            set.join("\n")
        ));
    }
    if !removed.is_empty() {
        note.push_str(&format!(
            "\nthe copy's optional dependencies {} are gone",
            removed.join(", ")
        ));
    }
    if !kept.is_empty() {
        note.push_str(&format!(
            "\nthe copy's dependencies {} stay; the runtime crate brings its own, so remove those your code does not use",
            kept.join(", ")
        ));
    }
    Ok(ManifestMove {
        old: manifest.to_string(),
        new,
        note,
    })
}

/// What the spec expects of the user's code: one method of one trait.
struct Expected {
    which: Trait,
    /// The Rust method name.
    method: String,
    /// The spec name (a resource's URI).
    spec_name: String,
    stub: TokenStream,
    /// `resolver`, `tool`, `prompt` or `resource`.
    kind: &'static str,
}

impl Expected {
    /// `tool `search``, for messages.
    fn what(&self) -> String {
        format!("{} `{}`", self.kind, self.spec_name)
    }
}

/// Every method the spec expects, in spec order: resolvers, tools, prompts written in code,
/// resources read in code.
fn expected(sig: &Signatures) -> Vec<Expected> {
    let model = sig.model;
    let one = |which, method, spec_name: &str, stub, kind| Expected {
        which,
        method,
        spec_name: spec_name.to_string(),
        stub,
        kind,
    };
    let resolvers = (model.resolvers.iter()).map(|r| {
        let stub = resolver_stub(sig, r.id);
        one(
            Trait::Resolvers,
            names::fn_name(&r.name),
            &r.name,
            stub,
            "resolver",
        )
    });
    let tools = (model.tools.iter()).map(|t| {
        let stub = tool_stub(sig, t.id);
        one(Trait::Tools, names::fn_name(&t.name), &t.name, stub, "tool")
    });
    let prompts = model.code_prompts().map(|p| {
        let stub = prompt_stub(sig, p);
        one(
            Trait::Prompts,
            names::fn_name(&p.name),
            &p.name,
            stub,
            "prompt",
        )
    });
    let readers = code_readers(model).into_iter().map(|r| {
        let stub = resource_stub(sig, &r);
        one(
            Trait::Resources,
            names::read_fn_name(&r.name),
            &r.key,
            stub,
            "resource",
        )
    });
    resolvers
        .chain(tools)
        .chain(prompts)
        .chain(readers)
        .collect()
}

/// The note for method `m` (in file `rel`) when its signature is not the one the spec now
/// gives it.
fn changed_signature(rel: &str, m: &Method, e: &Expected) -> Option<String> {
    let stub_fn: syn::ImplItemFn = syn::parse2(e.stub.clone()).expect("stub parses");
    let (want_params, want_out) = signature_of(&stub_fn.sig);
    if want_params == m.params && want_out == m.output {
        return None;
    }
    let expected_sig = stub_text(e.stub.clone());
    let sig_line = (expected_sig.lines())
        .take_while(|l| !l.trim_start().starts_with("Err("))
        .collect::<Vec<_>>()
        .join("\n");
    Some(format!(
        "{rel}:{}: the signature of {} `{}` changed in the spec; it is now:\n{}",
        m.line,
        e.kind,
        e.spec_name,
        sig_line.trim_end_matches('{').trim_end()
    ))
}

/// The crate's own sources: each file's path and text (`None` when it cannot be read or
/// parsed), and the impl blocks of the generated traits found in them.
struct Sources {
    texts: Vec<(String, Option<String>)>,
    blocks: Vec<ImplBlock>,
}

/// Reads and parses the crate's sources; a file that cannot be read or parsed gets a note.
fn read_sources(crate_dir: &Path, notes: &mut Vec<String>) -> Sources {
    let mut sources = Sources {
        texts: Vec::new(),
        blocks: Vec::new(),
    };
    for (fi, path) in rust_sources(crate_dir).iter().enumerate() {
        let rel = (path.strip_prefix(crate_dir).unwrap_or(path))
            .to_string_lossy()
            .replace('\\', "/");
        let Ok(text) = std::fs::read_to_string(path) else {
            notes.push(format!("{rel}: cannot be read; no stubs were added to it"));
            sources.texts.push((rel, None));
            continue;
        };
        match syn::parse_file(&text) {
            Ok(file) => {
                let offsets = LineOffsets::new(&text);
                let blocks = file.items.iter().filter_map(|item| match item {
                    syn::Item::Impl(imp) => impl_block(fi, imp, &offsets),
                    _ => None,
                });
                sources.blocks.extend(blocks);
                sources.texts.push((rel, Some(text)));
            }
            Err(e) => {
                let lc = e.span().start();
                notes.push(format!(
                    "{rel}:{}:{}: does not parse ({e}); no stubs were added to it",
                    lc.line,
                    lc.column + 1
                ));
                sources.texts.push((rel, None));
            }
        }
    }
    sources
}

/// The block `imp` of file `fi`, when it implements one of the generated traits.
fn impl_block(fi: usize, imp: &syn::ItemImpl, offsets: &LineOffsets) -> Option<ImplBlock> {
    let (trait_path, _) = imp.trait_.as_ref()?;
    let last = trait_path.segments.last()?;
    let which = Trait::ALL.into_iter().find(|t| last.ident == t.name())?;
    let methods = (imp.items.iter())
        .filter_map(|i| match i {
            syn::ImplItem::Fn(f) => {
                let (params, output) = signature_of(&f.sig);
                Some(Method {
                    name: f.sig.ident.to_string().trim_start_matches("r#").to_string(),
                    line: f.sig.ident.span().start().line,
                    sig: (
                        offsets.offset(f.sig.fn_token.span.start()),
                        (f.sig.to_token_stream().into_iter().last())
                            .map_or(0, |t| offsets.offset(t.span().end())),
                    ),
                    params,
                    output,
                })
            }
            _ => None,
        })
        .collect();
    Some(ImplBlock {
        file: fi,
        which,
        self_ty: imp.self_ty.to_token_stream().to_string(),
        close: offsets.offset(imp.brace_token.span.close().start()),
        methods,
    })
}

impl Sources {
    /// The edit that renames the user's method of `old` to the method of `new` (see
    /// [`plan`]), and the method renamed in the parsed blocks (so that no stub is added for
    /// `new` and no note says `old` is gone); or why it cannot be made.
    fn rename(
        &mut self,
        old: &str,
        new: &str,
        expected: &[Expected],
    ) -> Result<(usize, (usize, usize), String, String), String> {
        let usage = "(`--rename OLD=NEW`: OLD the tool, resolver or prompt the spec no longer has, NEW its name in the spec now)";
        if let Some(e) = expected.iter().find(|e| e.spec_name == old) {
            return Err(format!(
                "cannot rename `{old}`: the spec still has the {} `{old}` {usage}",
                e.kind
            ));
        }
        let wanted: Vec<&Expected> = (expected.iter())
            .filter(|e| e.spec_name == new && e.which != Trait::Resources)
            .collect();
        if wanted.is_empty() {
            return Err(format!(
                "cannot rename `{old}` to `{new}`: the spec has no tool, resolver or prompt `{new}` {usage}"
            ));
        }
        let old_method = names::fn_name(old);
        for e in wanted {
            let blocks = (self.blocks.iter_mut()).filter(|b| b.which == e.which);
            let mut found = None;
            for b in blocks {
                if b.methods.iter().any(|m| m.name == e.method) {
                    let rel = &self.texts[b.file].0;
                    return Err(format!(
                        "cannot rename `{old}` to `{new}`: {rel} already has the method `{}` of the {} `{new}`",
                        e.method, e.kind
                    ));
                }
                if let Some(m) = b.methods.iter_mut().find(|m| m.name == old_method) {
                    found = Some((b.file, m));
                    break;
                }
            }
            if let Some((file, m)) = found {
                let (rel, Some(text)) = &self.texts[file] else {
                    continue;
                };
                // The method's name, and in its signature the type of its arguments, which
                // is named after the tool or prompt (`SearchArgs` -> `FindArgs`).
                let arg_types = match e.which {
                    Trait::Tools => Some((names::args_type_name(old), names::args_type_name(new))),
                    Trait::Prompts => Some((
                        names::prompt_args_type_name(old),
                        names::prompt_args_type_name(new),
                    )),
                    Trait::Resolvers | Trait::Resources => None,
                };
                let ident = crate::emit::idents::ident(&e.method).to_string();
                let mut sig = text[m.sig.0..m.sig.1].to_string();
                // `fn name` or `fn r#name`: the name is the signature's first word after `fn`.
                let at = sig.len() - sig["fn".len()..].trim_start().len();
                let written = match sig[at..].starts_with("r#") {
                    true => format!("r#{}", m.name),
                    false => m.name.clone(),
                };
                sig.replace_range(at..at + written.len(), &ident);
                if let Some((from, to)) = &arg_types {
                    sig = replace_word(&sig, from, to, usize::MAX);
                    for p in &mut m.params {
                        *p = replace_word(p, from, to, usize::MAX);
                    }
                }
                m.name = e.method.clone();
                let what = format!(
                    "`{old_method}` renamed to `{}` for the {} `{new}` (its body kept), at {rel}:{}",
                    e.method, e.kind, m.line
                );
                return Ok((file, m.sig, sig, what));
            }
        }
        Err(format!(
            "cannot rename `{old}` to `{new}`: no method `{old_method}` was found in an `impl` of the trait of `{new}` under src/"
        ))
    }

    /// A whole new block for a trait the spec has just grown (`impl Prompts` / `impl
    /// Resources`), at the end of the file of the `impl Tools` block, for the same type: one
    /// insertion per method it holds (merged into one by the caller).
    fn new_block(
        &self,
        which: Trait,
        wanted: &[&Expected],
        names: &[&str],
    ) -> Option<Vec<(usize, usize, String, String)>> {
        let tb = self.blocks.iter().find(|b| b.which == Trait::Tools)?;
        let (_, Some(text)) = &self.texts[tb.file] else {
            return None;
        };
        let stubs: Vec<String> = (wanted.iter())
            .map(|e| stub_text(qualify(e.stub.clone(), names)))
            .collect();
        let block = format!(
            "impl crate::generated::{} for {} {{\n{}}}\n",
            which.name(),
            tb.self_ty,
            stubs.join("\n")
        );
        Some(
            (wanted.iter())
                .map(|e| (tb.file, text.len(), block.clone(), e.what()))
                .collect(),
        )
    }

    /// Notes for the methods of `here` whose tool, resolver, prompt or resource is gone; when
    /// the spec gained one of the same kind whose method is missing (its stub is appended)
    /// and whose name is like the gone one's, the note asks whether it was renamed.
    fn gone(&self, which: Trait, here: &[&ImplBlock], expected: &[Expected]) -> Vec<String> {
        let present = |method: &str| {
            here.iter()
                .any(|b| b.methods.iter().any(|m| m.name == method))
        };
        let added: Vec<&Expected> = (expected.iter())
            .filter(|e| e.which == which && !present(&e.method))
            .collect();
        let mut notes = Vec::new();
        for b in here {
            for m in &b.methods {
                if !expected
                    .iter()
                    .any(|e| e.which == which && e.method == m.name)
                {
                    let rel = &self.texts[b.file].0;
                    let kind = which.kind();
                    let renamed = renamed_to(&m.name, &added).map_or_else(String::new, |e| {
                        format!(
                            "; did you rename it to `{}`? Then `mcpgen generate --rename {}={}` renames the method (its body kept), or move its body into the stub of `{}` appended for it and delete `{}`",
                            e.spec_name, m.name, e.spec_name, e.method, m.name
                        )
                    });
                    notes.push(format!(
                        "{rel}:{}: `{}` implements a {kind} the spec no longer has; it is kept (the compiler will point at it: delete or rename it){renamed}",
                        m.line, m.name
                    ));
                }
            }
        }
        notes
    }
}

/// The added item a gone method `gone` was most likely renamed to: the only one added of its
/// kind, or the added one whose method name is most like it (at least half alike by
/// normalized Levenshtein distance), when no other is as alike.
fn renamed_to<'a>(gone: &str, added: &[&'a Expected]) -> Option<&'a Expected> {
    if let [only] = added {
        return Some(only);
    }
    let mut scored: Vec<(f64, &Expected)> = (added.iter())
        .map(|e| (strsim::normalized_levenshtein(gone, &e.method), *e))
        .filter(|(score, _)| *score >= 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    match scored.as_slice() {
        [(best, e), rest @ ..] if rest.first().is_none_or(|(next, _)| next < best) => Some(e),
        _ => None,
    }
}

/// Applies the changes file by file, from the end so offsets stay valid; insertions at one
/// offset go in spec order.
fn apply(texts: &[(String, Option<String>)], inserts: Vec<Insert>) -> Vec<UserEdit> {
    let mut by_file: std::collections::BTreeMap<usize, Vec<Insert>> = Default::default();
    for i in inserts {
        by_file.entry(i.file).or_default().push(i);
    }
    let mut edits = Vec::new();
    for (f, mut items) in by_file {
        let (rel, Some(old)) = &texts[f] else {
            continue;
        };
        let mut new = old.clone();
        let (mut renames, stubs): (Vec<&Insert>, Vec<&Insert>) =
            items.iter().partition(|i| i.rename);
        renames.sort_by_key(|i| i.at.0);
        let added: Vec<String> = stubs.iter().map(|i| i.what.clone()).collect();
        let renamed: Vec<String> = renames.iter().map(|i| i.what.clone()).collect();
        // Same offset: keep spec order by inserting the concatenation once.
        items.sort_by_key(|i| std::cmp::Reverse(i.at.0));
        let mut grouped: Vec<((usize, usize), String)> = Vec::new();
        for Insert { at, text, .. } in items {
            match grouped.last_mut() {
                Some((o, t)) if *o == at && at.0 == at.1 => {
                    // items were sorted in reverse by offset, stable: spec order within a group
                    t.push('\n');
                    t.push_str(&text);
                }
                _ => grouped.push((at, text)),
            }
        }
        for ((start, end), text) in grouped {
            if start == end {
                // After the last method (or right after `{` of an empty block): a newline, the
                // stub, and the closing brace stays on its own line.
                new.insert_str(start, &format!("\n{text}"));
            } else {
                new.replace_range(start..end, &text);
            }
        }
        edits.push(UserEdit {
            path: rel.clone(),
            old: old.clone(),
            new,
            added,
            renamed,
        });
    }
    edits
}

/// Byte offsets of line starts, to turn syn's line/column positions into offsets.
struct LineOffsets {
    starts: Vec<usize>,
    text: String,
}

impl LineOffsets {
    fn new(text: &str) -> Self {
        LineOffsets {
            starts: std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect(),
            text: text.to_string(),
        }
    }

    /// Offset of a proc-macro2 line (1-based) / column (0-based, in characters).
    fn offset(&self, lc: proc_macro2::LineColumn) -> usize {
        let start = self
            .starts
            .get(lc.line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len());
        self.text[start..]
            .char_indices()
            .nth(lc.column)
            .map_or(self.text.len(), |(i, _)| start + i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stubs_name_generated_items_in_full() {
        let q = qualify(
            quote!(fn f(_a: types::A, _c: &Context, _o: Outcome<types::B>) -> Result<String, ToolError>),
            &["Context", "Outcome", "ToolError", "types"],
        );
        assert_eq!(
            q.to_string(),
            quote!(fn f(_a: crate::generated::types::A, _c: &crate::generated::Context, _o: crate::generated::Outcome<crate::generated::types::B>) -> Result<String, crate::generated::ToolError>).to_string()
        );
    }

    #[test]
    fn normalized_types_ignore_paths_and_spacing() {
        let a: syn::Signature = syn::parse_str("async fn f(&self, ctx: &Context, args: types::A, s: ::std::string::String) -> Result<::std::string::String, ToolError>").unwrap();
        let b: syn::Signature = syn::parse_str("async fn f(&self, _ctx: &crate::generated::Context, _args: A, _s: String) -> Result<String, crate::generated::ToolError>").unwrap();
        assert_eq!(signature_of(&a), signature_of(&b));
        assert_eq!(signature_of(&a).0, vec!["&Context", "A", "String"]);
    }
}
