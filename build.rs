//! Embeds the runtime sources (`runtime/*.rs`) that every generated crate carries.

use std::fmt::Write;

fn main() {
    // Read at run time, not baked in with env!: a target directory moved to another checkout
    // reuses this compiled script, which must then read that checkout's runtime.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = std::path::Path::new(&manifest_dir).join("runtime");
    println!("cargo::rerun-if-changed=runtime");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("runtime/ exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".rs"))
        .collect();
    names.sort();
    let mut out = String::from(
        "/// The runtime's files: (name, contents), sorted by name.\npub const RUNTIME_FILES: &[(&str, &str)] = &[\n",
    );
    for n in &names {
        let path = dir.join(n);
        println!("cargo::rerun-if-changed={}", path.display());
        writeln!(
            out,
            "    ({n:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("runtime_files.rs");
    std::fs::write(dest, out).unwrap();
}
