//! This crate's own source (feature `source`), for mcpgen: a generated crate that vendors the
//! runtime (`vendor/mcpgen-runtime/`) gets these files, so it builds on a machine whose registry
//! has no `mcpgen-runtime`. mcpgen depends on this crate with this feature alone, which compiles
//! nothing but these constants.

/// The crate's manifest as this copy of the crate has it (from a registry: the normalized one
/// cargo packaged).
pub const MANIFEST: &str = include_str!("../Cargo.toml");

/// Every other file of the crate that a build reads, `(path from the crate's root, contents)`,
/// sorted by path: the sources and the README the manifest names (not the test data).
pub const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("../README.md")),
    ("src/asking/ask.rs", include_str!("asking/ask.rs")),
    (
        "src/asking/capability.rs",
        include_str!("asking/capability.rs"),
    ),
    ("src/asking/context.rs", include_str!("asking/context.rs")),
    ("src/asking/form.rs", include_str!("asking/form.rs")),
    ("src/asking/log.rs", include_str!("asking/log.rs")),
    ("src/asking/mod.rs", include_str!("asking/mod.rs")),
    ("src/asking/round.rs", include_str!("asking/round.rs")),
    (
        "src/authorization/guard.rs",
        include_str!("authorization/guard.rs"),
    ),
    (
        "src/authorization/mod.rs",
        include_str!("authorization/mod.rs"),
    ),
    (
        "src/authorization/oauth.rs",
        include_str!("authorization/oauth.rs"),
    ),
    (
        "src/authorization/principal.rs",
        include_str!("authorization/principal.rs"),
    ),
    ("src/capabilities.rs", include_str!("capabilities.rs")),
    ("src/catalog/args.rs", include_str!("catalog/args.rs")),
    (
        "src/catalog/completion.rs",
        include_str!("catalog/completion.rs"),
    ),
    ("src/catalog/mod.rs", include_str!("catalog/mod.rs")),
    ("src/catalog/numbers.rs", include_str!("catalog/numbers.rs")),
    ("src/catalog/output.rs", include_str!("catalog/output.rs")),
    ("src/catalog/prompts.rs", include_str!("catalog/prompts.rs")),
    (
        "src/catalog/resources.rs",
        include_str!("catalog/resources.rs"),
    ),
    ("src/catalog/schema.rs", include_str!("catalog/schema.rs")),
    ("src/catalog/tools.rs", include_str!("catalog/tools.rs")),
    ("src/errors.rs", include_str!("errors.rs")),
    ("src/lib.rs", include_str!("lib.rs")),
    ("src/notify/bus.rs", include_str!("notify/bus.rs")),
    ("src/notify/mod.rs", include_str!("notify/mod.rs")),
    ("src/operations/mod.rs", include_str!("operations/mod.rs")),
    (
        "src/operations/operation.rs",
        include_str!("operations/operation.rs"),
    ),
    (
        "src/operations/telemetry.rs",
        include_str!("operations/telemetry.rs"),
    ),
    ("src/request.rs", include_str!("request.rs")),
    ("src/scope.rs", include_str!("scope.rs")),
    ("src/server/mod.rs", include_str!("server/mod.rs")),
    ("src/server/router.rs", include_str!("server/router.rs")),
    ("src/server/serve.rs", include_str!("server/serve.rs")),
    ("src/shutdown.rs", include_str!("shutdown.rs")),
    ("src/source.rs", include_str!("source.rs")),
    ("src/state.rs", include_str!("state.rs")),
    (
        "src/testing/inprocess.rs",
        include_str!("testing/inprocess.rs"),
    ),
    ("src/testing/mod.rs", include_str!("testing/mod.rs")),
    ("src/tests.rs", include_str!("tests.rs")),
    ("src/tls.rs", include_str!("tls.rs")),
    ("src/transport/http.rs", include_str!("transport/http.rs")),
    (
        "src/transport/jsonrpc.rs",
        include_str!("transport/jsonrpc.rs"),
    ),
    ("src/transport/mod.rs", include_str!("transport/mod.rs")),
    (
        "src/transport/sessions.rs",
        include_str!("transport/sessions.rs"),
    ),
    ("src/transport/stdio.rs", include_str!("transport/stdio.rs")),
];

#[cfg(test)]
mod tests {
    /// `FILES` lists exactly the crate's sources and its README: a file added to the crate
    /// without a line here would be missing from every vendored copy.
    #[test]
    fn every_source_file_is_listed() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut on_disk = vec!["README.md".to_string()];
        let mut dirs = vec![root.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                if path.is_dir() {
                    if !["target", "examples", "testdata"].contains(&rel.as_str()) {
                        dirs.push(path);
                    }
                } else if rel.ends_with(".rs") {
                    on_disk.push(rel);
                }
            }
        }
        on_disk.sort();
        let listed: Vec<&str> = super::FILES.iter().map(|(path, _)| *path).collect();
        assert_eq!(listed, on_disk);
    }
}
