//! The runtime a generated crate carries: the sources of the `mcpgen-runtime` crate
//! (`runtime/` in this repository), vendored as `src/generated/runtime/` without their tests and
//! stamped with the runtime's own hash (not the spec's: a spec edit leaves them as they are),
//! and the dependencies the runtime needs, read from its `Cargo.toml`.
//!
//! The vendored copy is the crate's source with every file-level item under `#[cfg(test)]`
//! removed (`mod tests;` in `mod.rs`, test modules and test helpers in the other files), and
//! with only the files `mod.rs` still declares as modules (so `tests.rs` is not written).

use std::sync::OnceLock;

use crate::emit::module::RuntimeSource;
use crate::write::stamp::short_hash;

include!(concat!(env!("OUT_DIR"), "/runtime_files.rs"));

/// The runtime's manifest: its `[dependencies]` and `[features]` are every generated crate's.
const MANIFEST: &str = include_str!("../../runtime/Cargo.toml");

/// The runtime as a generated crate carries it.
#[derive(Debug)]
pub struct Vendored {
    /// `(file name, contents)`, sorted by name, without stamps.
    pub files: Vec<(&'static str, String)>,
    /// The hash of all of them (names and contents): what their stamps record.
    pub hash: String,
}

/// The vendored runtime, computed once.
pub fn vendored() -> &'static Vendored {
    static VENDORED: OnceLock<Vendored> = OnceLock::new();
    VENDORED.get_or_init(|| {
        vendor(RUNTIME_FILES).unwrap_or_else(|e| panic!("internal error: the runtime: {e}"))
    })
}

/// The vendored copy of the runtime files `sources` (`(name, contents)` of `runtime/*.rs`).
pub fn vendor(sources: &[(&'static str, &str)]) -> Result<Vendored, String> {
    let source = |name: &str| {
        sources
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| *text)
            .ok_or_else(|| format!("{name} is missing"))
    };
    let root = without_tests(source("mod.rs")?).map_err(|e| format!("mod.rs: {e}"))?;
    let mut files = vec![("mod.rs", root.clone())];
    let parsed = syn::parse_file(&root).map_err(|e| format!("mod.rs: {e}"))?;
    for item in &parsed.items {
        if let syn::Item::Mod(m) = item
            && m.content.is_none()
        {
            let file = format!("{}.rs", m.ident);
            let (name, text) = sources.iter().find(|(n, _)| *n == file).ok_or_else(|| {
                format!("mod.rs declares `mod {}` but {file} is missing", m.ident)
            })?;
            files.push((
                name,
                without_tests(text).map_err(|e| format!("{file}: {e}"))?,
            ));
        }
    }
    files.sort_by_key(|(name, _)| *name);
    let mut all = Vec::new();
    for (name, text) in &files {
        all.extend_from_slice(name.as_bytes());
        all.push(0);
        all.extend_from_slice(text.as_bytes());
        all.push(0);
    }
    Ok(Vendored {
        hash: short_hash(&all),
        files,
    })
}

/// `source` without its file-level items under `#[cfg(test)]`: each such item's lines (its
/// attributes and doc comments through its last token) are removed, and one blank line with
/// them when the item stood between blank lines (or after one, at the end).
pub fn without_tests(source: &str) -> Result<String, String> {
    use syn::spanned::Spanned;
    let file = syn::parse_file(source).map_err(|e| e.to_string())?;
    // 1-based, inclusive line ranges.
    let mut cut: Vec<(usize, usize)> = Vec::new();
    for item in &file.items {
        let attrs = item_attrs(item);
        if !attrs.iter().any(is_cfg_test) {
            continue;
        }
        let first = attrs.first().map_or(item.span(), |a| a.span());
        cut.push((first.start().line, item.span().end().line));
    }
    if cut.is_empty() {
        return Ok(source.to_string());
    }
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let blank = |n: usize| {
        lines
            .get(n.wrapping_sub(1))
            .is_none_or(|l| l.trim().is_empty())
    };
    let mut drop = vec![false; lines.len() + 1];
    for (start, end) in cut {
        drop[start..=end].fill(true);
        if start > 1 && blank(start - 1) {
            if end == lines.len() {
                drop[start - 1] = true;
            } else if blank(end + 1) {
                drop[end + 1] = true;
            }
        }
    }
    Ok(lines
        .iter()
        .enumerate()
        .filter(|(i, _)| !drop[i + 1])
        .map(|(_, l)| *l)
        .collect())
}

/// True for `#[cfg(test)]`.
fn is_cfg_test(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("cfg")
        && attr
            .parse_args::<syn::Ident>()
            .is_ok_and(|ident| ident == "test")
}

/// The outer attributes of a file-level item (doc comments included).
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item;
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The package name of the runtime crate.
pub const CRATE_NAME: &str = "mcpgen-runtime";

/// What a crate's parsed `Cargo.toml` says of its runtime: the crate when its `[dependencies]`
/// name [`CRATE_NAME`], else the copy. The one place that decides it, for `generate` and for
/// the build.rs [`Builder`](crate::Builder).
pub fn source_of(manifest: &toml::Table) -> RuntimeSource {
    let named = manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .is_some_and(|deps| deps.contains_key(CRATE_NAME));
    if named {
        RuntimeSource::Crate
    } else {
        RuntimeSource::Vendored
    }
}

/// The runtime's dependencies that generated code names itself (the module's imports, the
/// router's `axum::Router`, the test kit's and `tests/tools.rs`'s `tokio`, typify's `serde`):
/// the only ones of [`dependencies`] a crate that depends on the runtime crate declares.
const NAMED_BY_GENERATED_CODE: &[&str] = &["rmcp", "tokio", "axum", "serde", "serde_json"];

/// The runtime dependencies a crate declares, one `name = value` line each: with the copy,
/// all of [`dependencies`]; with the runtime crate, those generated code names itself
/// (the `mcpgen-runtime` line is the user's choice of path or version, not in here).
pub fn crate_dependencies(source: RuntimeSource) -> Vec<String> {
    let all = dependencies();
    match source {
        RuntimeSource::Vendored => all,
        RuntimeSource::Crate => all
            .into_iter()
            .filter(|line| NAMED_BY_GENERATED_CODE.contains(&line_key(line)))
            .collect(),
    }
}

/// The features a crate declares, one `name = value` line each: with the copy, the runtime's
/// own ([`features`]); with the runtime crate, each of them passed on to it
/// (`telemetry = ["mcpgen-runtime/telemetry"]`), `default` as it is.
pub fn crate_features(source: RuntimeSource) -> Vec<String> {
    let all = features();
    match source {
        RuntimeSource::Vendored => all,
        RuntimeSource::Crate => all
            .into_iter()
            .map(|line| match line.split_once(" = ") {
                Some((name, _)) if name != "default" => {
                    format!("{name} = [\"{CRATE_NAME}/{name}\"]")
                }
                _ => line,
            })
            .collect(),
    }
}

/// The key of a `name = value` manifest line (these functions' lines).
pub fn line_key(line: &str) -> &str {
    line.split_once(" = ").map_or(line, |(name, _)| name)
}

/// The runtime's dependencies, one `name = value` line each, in the order of its manifest: the
/// first lines of every generated crate's `[dependencies]`.
pub fn dependencies() -> Vec<String> {
    let manifest: toml::Table = MANIFEST
        .parse()
        .unwrap_or_else(|e| panic!("internal error: runtime/Cargo.toml: {e}"));
    let Some(toml::Value::Table(deps)) = manifest.get("dependencies") else {
        panic!("internal error: runtime/Cargo.toml has no [dependencies]");
    };
    deps.iter()
        .map(|(name, value)| format!("{name} = {value}"))
        .collect()
}

/// The runtime's features (`testing`: the test kit, `runtime::testing`), one `name = value`
/// line each, in the order of its manifest: every generated crate's `[features]`.
pub fn features() -> Vec<String> {
    let manifest: toml::Table = MANIFEST
        .parse()
        .unwrap_or_else(|e| panic!("internal error: runtime/Cargo.toml: {e}"));
    match manifest.get("features") {
        Some(toml::Value::Table(features)) => features
            .iter()
            .map(|(name, value)| format!("{name} = {value}"))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_items_are_cut_with_their_attributes_and_one_blank_line() {
        let source = "//! Root.\n\nmod a;\n\n/// Tests.\n#[cfg(test)]\nmod tests;\n\npub use a::A;\n\n#[cfg(test)]\nfn helper() {\n    let _ = 1;\n}\n";
        assert_eq!(
            without_tests(source).unwrap(),
            "//! Root.\n\nmod a;\n\npub use a::A;\n"
        );
        // Other cfgs, and nested test code, are kept.
        let kept = "#[cfg(unix)]\nfn f() {\n    #[cfg(test)]\n    panic!();\n}\n";
        assert_eq!(without_tests(kept).unwrap(), kept);
    }

    #[test]
    fn only_declared_modules_are_vendored() {
        let v = vendor(&[
            ("mod.rs", "mod a;\n\n#[cfg(test)]\nmod tests;\n"),
            ("a.rs", "pub fn a() {}\n\n#[cfg(test)]\nmod tests {}\n"),
            ("tests.rs", "#[test]\nfn t() {}\n"),
        ])
        .unwrap();
        assert_eq!(
            v.files,
            vec![
                ("a.rs", "pub fn a() {}\n".to_string()),
                ("mod.rs", "mod a;\n".to_string())
            ]
        );
        let err = vendor(&[("mod.rs", "mod b;\n")]).unwrap_err();
        assert_eq!(err, "mod.rs declares `mod b` but b.rs is missing");
    }

    #[test]
    fn the_manifest_decides_where_the_runtime_comes_from() {
        let of = |text: &str| source_of(&text.parse::<toml::Table>().unwrap());
        assert_eq!(
            of("[dependencies]\nserde = \"1\"\n"),
            RuntimeSource::Vendored
        );
        assert_eq!(of("[package]\nname = \"x\"\n"), RuntimeSource::Vendored);
        // Only a dependency counts: a dev-dependency or a feature naming it does not.
        assert_eq!(
            of("[dev-dependencies]\nmcpgen-runtime = { path = \"r\" }\n"),
            RuntimeSource::Vendored
        );
        assert_eq!(
            of("[dependencies]\nmcpgen-runtime = { path = \"r\", default-features = false }\n"),
            RuntimeSource::Crate
        );
        assert_eq!(
            of("[dependencies.mcpgen-runtime]\nversion = \"0.1\"\n"),
            RuntimeSource::Crate
        );
    }

    #[test]
    fn the_runtime_hash_covers_every_vendored_byte() {
        let base = vendor(&[("mod.rs", "mod a;\n"), ("a.rs", "pub fn a() {}\n")]).unwrap();
        let edited = vendor(&[("mod.rs", "mod a;\n"), ("a.rs", "pub fn b() {}\n")]).unwrap();
        let tests_only = vendor(&[
            ("mod.rs", "mod a;\n"),
            ("a.rs", "pub fn a() {}\n"),
            ("tests.rs", "fn t() {}\n"),
        ])
        .unwrap();
        assert_ne!(base.hash, edited.hash);
        assert_eq!(base.hash, tests_only.hash, "test files do not count");
    }
}
