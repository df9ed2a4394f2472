//! The runtime crate every generated crate depends on: `mcpgen-runtime`, pinned to this
//! generator's version (`=0.1.0`), and where its source comes from.
//!
//! The crate's `Cargo.toml` decides ([`source_of`]): its `[dependencies]` line for the runtime
//! names a `path` of [`VENDOR_DIR`] (a copy of the whole crate that mcpgen writes and `generate`
//! keeps current: the default of `new`, which builds on a machine whose registry has no
//! `mcpgen-runtime`), another `path` (a checkout of mcpgen's `runtime/`, shared by several
//! crates), or no path (the registry, once the crate is published there). A crate made by an
//! earlier mcpgen names no runtime and carries a copy of its modules in `src/generated/runtime/`;
//! `generate` moves it to the vendored crate ([`crate::write::user_code`]'s manifest edit).
//!
//! The vendored copy is the runtime's own files, byte for byte ([`mcpgen_runtime::source`]),
//! and its manifest without what only its own development uses (dev-dependencies, examples);
//! [`VENDOR_LIST`] records the hash of every file mcpgen wrote there, so `generate` tells a file
//! edited by hand from one it wrote, and removes the files a newer runtime no longer has.

use std::fmt::Write;

use crate::write::stamp::short_hash;

/// The package name of the runtime crate.
pub const CRATE_NAME: &str = "mcpgen-runtime";

/// Where a crate that vendors the runtime keeps it, relative to the crate.
pub const VENDOR_DIR: &str = "vendor/mcpgen-runtime";

/// The file in [`VENDOR_DIR`] listing what mcpgen wrote there: a comment line, then one
/// `<sha256 prefix>  <path>` line per file.
pub const VENDOR_LIST: &str = ".mcpgen-vendored";

/// Where a crate made by an earlier mcpgen keeps its copy of the runtime's modules.
pub const COPY_DIR: &str = "src/generated/runtime";

/// The runtime's version: the generator's own (one workspace, one version), which every
/// generated crate requires exactly.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Where a crate's runtime comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeSource {
    /// The copy of the whole crate in [`VENDOR_DIR`], which mcpgen writes.
    Vendored,
    /// The crate at this path (as the manifest writes it, relative to the crate).
    Path(String),
    /// The registry, by version.
    Registry,
    /// No runtime dependency: a crate made by an earlier mcpgen, with its copy of the runtime's
    /// modules in [`COPY_DIR`] (`generate` moves it to [`RuntimeSource::Vendored`]).
    Copy,
}

impl RuntimeSource {
    /// The value of the crate's `[dependencies]` line for the runtime: the version pinned, the
    /// path if any, the runtime's own default features off (the crate's features pass them on)
    /// and the concerns the spec declares on (`auth`).
    pub fn dependency(&self, spec_features: &[&str]) -> String {
        let path = match self {
            RuntimeSource::Vendored => Some(VENDOR_DIR),
            RuntimeSource::Path(path) => Some(path.as_str()),
            RuntimeSource::Registry | RuntimeSource::Copy => None,
        };
        let mut value = format!("{{ version = \"={}\"", version());
        if let Some(path) = path {
            write!(value, ", path = {}", toml_string(path)).unwrap();
        }
        let features: Vec<String> = std::iter::once("server")
            .chain(spec_features.iter().copied())
            .map(|f| format!("\"{f}\""))
            .collect();
        write!(
            value,
            ", default-features = false, features = [{}] }}",
            features.join(", ")
        )
        .unwrap();
        value
    }
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// What a crate's parsed `Cargo.toml` says of its runtime. The one place that decides it, for
/// `generate` and for the build.rs [`Builder`](crate::Builder).
pub fn source_of(manifest: &toml::Table) -> RuntimeSource {
    let dependency = manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .and_then(|deps| deps.get(CRATE_NAME));
    match dependency {
        None => RuntimeSource::Copy,
        Some(value) => match value.get("path").and_then(toml::Value::as_str) {
            Some(path) if path.trim_end_matches('/') == VENDOR_DIR => RuntimeSource::Vendored,
            Some(path) => RuntimeSource::Path(path.to_string()),
            None => RuntimeSource::Registry,
        },
    }
}

/// The runtime features a spec needs on: `auth` for a spec with `auth` (the OAuth verifier,
/// JWT and JWKS, introspection).
pub fn spec_features(has_auth: bool) -> Vec<&'static str> {
    if has_auth { vec!["auth"] } else { Vec::new() }
}

/// The dependencies generated code names itself besides the runtime: typify's types derive
/// `serde`'s traits and name `serde_json` values. Everything else it names comes through
/// `runtime::codegen`.
pub const NAMED_BY_GENERATED_CODE: &[&str] = &[
    r#"serde = { version = "1", features = ["derive"] }"#,
    r#"serde_json = "1""#,
];

/// The features every generated crate declares, each passed on to the runtime's, `name = value`
/// lines: `telemetry` (on by default), `bus` (the Redis notification bus of several replicas,
/// off until the user turns it on) and `testing` (the test kit, which only the crate's own
/// dev-dependency on itself turns on). Not `auth`: declared, it would lock the OAuth verifier's
/// dependencies in every crate; a deployment of a spec without `auth` behind an authorization
/// server builds with `--features mcpgen-runtime/auth` instead.
pub fn crate_features() -> Vec<String> {
    let mut lines = vec![r#"default = ["telemetry"]"#.to_string()];
    for feature in ["telemetry", "bus", "testing"] {
        lines.push(format!("{feature} = [\"{CRATE_NAME}/{feature}\"]"));
    }
    lines
}

/// The runtime crate's files as a vendored copy has them, `(path in VENDOR_DIR, contents)`,
/// sorted by path, with [`VENDOR_LIST`] last.
pub fn vendored() -> &'static [(String, String)] {
    static FILES: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        vendor(
            mcpgen_runtime::source::MANIFEST,
            mcpgen_runtime::source::FILES,
        )
        .unwrap_or_else(|e| panic!("internal error: the runtime's manifest: {e}"))
    })
}

/// The vendored copy of a crate with manifest `manifest` and files `files`.
pub fn vendor(manifest: &str, files: &[(&str, &str)]) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = files
        .iter()
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect();
    out.push(("Cargo.toml".into(), vendored_manifest(manifest)?));
    out.sort();
    let mut list = format!(
        "# {CRATE_NAME} {}, vendored by mcpgen {}: `mcpgen generate` rewrites this directory; do not edit.\n",
        version(),
        env!("CARGO_PKG_VERSION")
    );
    for (path, text) in &out {
        writeln!(list, "{}  {path}", short_hash(text.as_bytes())).unwrap();
    }
    out.push((VENDOR_LIST.into(), list));
    Ok(out)
}

/// The runtime's manifest as a vendored copy has it: without `[dev-dependencies]` (its own
/// tests' crates) and its examples, tests and benches (their files are not copied), with a
/// comment saying where it comes from.
fn vendored_manifest(manifest: &str) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = manifest.parse().map_err(|e| format!("{e}"))?;
    for key in ["dev-dependencies", "example", "test", "bench", "workspace"] {
        doc.remove(key);
    }
    if let Some(package) = doc.get_mut("package").and_then(|p| p.as_table_mut()) {
        for key in ["autoexamples", "autotests", "autobenches"] {
            package.insert(key, toml_edit::value(false));
        }
    }
    Ok(format!(
        "# The runtime of the MCP servers mcpgen generates, vendored: the crate {CRATE_NAME} {} as\n# published, so that this crate builds without it in a registry. `mcpgen generate` keeps it\n# current; to use the registry's instead, replace the `path` of its dependency line.\n{}",
        version(),
        doc.to_string().trim_start()
    ))
}

/// What [`VENDOR_LIST`]'s text records: `(path, hash)` of each file mcpgen wrote.
pub fn vendor_list(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once("  "))
        .map(|(hash, path)| (path.to_string(), hash.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_decides_where_the_runtime_comes_from() {
        let of = |text: &str| source_of(&text.parse::<toml::Table>().unwrap());
        assert_eq!(of("[dependencies]\nserde = \"1\"\n"), RuntimeSource::Copy);
        assert_eq!(of("[package]\nname = \"x\"\n"), RuntimeSource::Copy);
        // Only a dependency counts: a dev-dependency naming it does not.
        assert_eq!(
            of("[dev-dependencies]\nmcpgen-runtime = { path = \"r\" }\n"),
            RuntimeSource::Copy
        );
        assert_eq!(
            of(
                "[dependencies]\nmcpgen-runtime = { version = \"=0.1.0\", path = \"vendor/mcpgen-runtime\" }\n"
            ),
            RuntimeSource::Vendored
        );
        assert_eq!(
            of("[dependencies]\nmcpgen-runtime = { path = \"../r\", default-features = false }\n"),
            RuntimeSource::Path("../r".into())
        );
        assert_eq!(
            of("[dependencies.mcpgen-runtime]\nversion = \"=0.1\"\n"),
            RuntimeSource::Registry
        );
    }

    #[test]
    fn the_dependency_line_pins_the_version_and_names_the_spec_features() {
        let v = version();
        assert_eq!(
            RuntimeSource::Vendored.dependency(&[]),
            format!(
                "{{ version = \"={v}\", path = \"vendor/mcpgen-runtime\", default-features = false, features = [\"server\"] }}"
            )
        );
        assert_eq!(
            RuntimeSource::Registry.dependency(&["auth"]),
            format!(
                "{{ version = \"={v}\", default-features = false, features = [\"server\", \"auth\"] }}"
            )
        );
        assert_eq!(
            RuntimeSource::Path("../my \"runtime\"".into()).dependency(&[]),
            format!(
                "{{ version = \"={v}\", path = '../my \"runtime\"', default-features = false, features = [\"server\"] }}"
            )
        );
    }

    #[test]
    fn the_vendored_copy_is_the_crate_without_its_development_parts() {
        let manifest = "[package]\nname = \"mcpgen-runtime\"\nversion = \"0.1.0\" # the version\n\n[dependencies]\nserde = \"1\"\n\n[dev-dependencies]\nmcpgen-runtime = { path = \".\" }\n\n[[example]]\nname = \"bench\"\n";
        let files = vendor(manifest, &[("src/lib.rs", "pub fn f() {}\n")]).unwrap();
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["Cargo.toml", "src/lib.rs", VENDOR_LIST]);
        let cargo = &files[0].1;
        assert!(cargo.ends_with("[package]\nname = \"mcpgen-runtime\"\nversion = \"0.1.0\" # the version\nautoexamples = false\nautotests = false\nautobenches = false\n\n[dependencies]\nserde = \"1\"\n"), "{cargo}");
        assert_eq!(files[1].1, "pub fn f() {}\n");
        let list = vendor_list(&files[2].1);
        assert_eq!(
            list,
            [
                ("Cargo.toml".to_string(), short_hash(cargo.as_bytes())),
                ("src/lib.rs".to_string(), short_hash(b"pub fn f() {}\n")),
            ]
        );
    }

    #[test]
    fn the_runtime_is_this_generators_version() {
        let manifest: toml::Table = mcpgen_runtime::source::MANIFEST.parse().unwrap();
        assert_eq!(manifest["package"]["version"].as_str(), Some(version()));
        assert_eq!(manifest["package"]["name"].as_str(), Some(CRATE_NAME));
    }
}
