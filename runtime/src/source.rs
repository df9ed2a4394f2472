//! This crate's own source (feature `source`), for mcpgen: a generated crate that vendors the
//! runtime (`vendor/mcpgen-runtime/`) gets these files, so it builds on a machine whose registry
//! has no `mcpgen-runtime`. mcpgen depends on this crate with this feature alone, which compiles
//! nothing but these constants.

/// The crate's manifest as this copy of the crate has it (from a registry: the normalized one
/// cargo packaged).
pub const MANIFEST: &str = include_str!("Cargo.toml");

/// Every other file of the crate that a build reads, `(path from the crate's root, contents)`,
/// sorted by path: the sources and the README the manifest names (not the test data).
pub const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("README.md")),
    ("args.rs", include_str!("args.rs")),
    ("ask.rs", include_str!("ask.rs")),
    ("auth.rs", include_str!("auth.rs")),
    ("bus.rs", include_str!("bus.rs")),
    ("capability.rs", include_str!("capability.rs")),
    ("completion.rs", include_str!("completion.rs")),
    ("context.rs", include_str!("context.rs")),
    ("errors.rs", include_str!("errors.rs")),
    ("form.rs", include_str!("form.rs")),
    ("guard.rs", include_str!("guard.rs")),
    ("http.rs", include_str!("http.rs")),
    ("inprocess.rs", include_str!("inprocess.rs")),
    ("jsonrpc.rs", include_str!("jsonrpc.rs")),
    ("mod.rs", include_str!("mod.rs")),
    ("notify.rs", include_str!("notify.rs")),
    ("oauth.rs", include_str!("oauth.rs")),
    ("operation.rs", include_str!("operation.rs")),
    ("output.rs", include_str!("output.rs")),
    ("principal.rs", include_str!("principal.rs")),
    ("prompts.rs", include_str!("prompts.rs")),
    ("resources.rs", include_str!("resources.rs")),
    ("round.rs", include_str!("round.rs")),
    ("router.rs", include_str!("router.rs")),
    ("schema.rs", include_str!("schema.rs")),
    ("serve.rs", include_str!("serve.rs")),
    ("server.rs", include_str!("server.rs")),
    ("sessions.rs", include_str!("sessions.rs")),
    ("source.rs", include_str!("source.rs")),
    ("state.rs", include_str!("state.rs")),
    ("stdio.rs", include_str!("stdio.rs")),
    ("telemetry.rs", include_str!("telemetry.rs")),
    ("testing.rs", include_str!("testing.rs")),
    ("tests.rs", include_str!("tests.rs")),
    ("tls.rs", include_str!("tls.rs")),
    ("tools.rs", include_str!("tools.rs")),
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
