//! The cargo workspace a new crate's directory lies in, if any: cargo reads profiles from a
//! workspace's root manifest only, so a crate created inside a workspace gets no
//! `[profile.release]` of its own.

use std::path::{Component, Path, PathBuf};

/// The root directory of the cargo workspace that would hold a crate created in `dir`: the
/// nearest ancestor whose `Cargo.toml` has a `[workspace]` table, unless that table's `exclude`
/// lists `dir` or one of its parents (the crate then stands alone, as cargo treats it).
/// Unreadable or invalid manifests on the way are skipped, as they say nothing about profiles.
pub fn enclosing_workspace(dir: &Path) -> Option<PathBuf> {
    let dir = absolute(dir)?;
    for root in dir.ancestors().skip(1) {
        let Ok(text) = std::fs::read_to_string(root.join("Cargo.toml")) else {
            continue;
        };
        let Ok(manifest) = text.parse::<toml::Table>() else {
            continue;
        };
        let Some(workspace) = manifest.get("workspace").and_then(toml::Value::as_table) else {
            continue;
        };
        let inside = dir.strip_prefix(root).ok()?;
        let excluded = workspace
            .get("exclude")
            .and_then(toml::Value::as_array)
            .is_some_and(|paths| {
                paths
                    .iter()
                    .filter_map(toml::Value::as_str)
                    .any(|p| inside.starts_with(normal(Path::new(p))))
            });
        return (!excluded).then(|| root.to_path_buf());
    }
    None
}

/// `dir` made absolute and free of `.` and `..` (it need not exist yet).
fn absolute(dir: &Path) -> Option<PathBuf> {
    let dir = std::path::absolute(dir).ok()?;
    // Resolve symbolic links in the part that exists, so the ancestors are the real ones.
    let existing = dir.ancestors().find(|a| a.exists())?;
    let rest = dir.strip_prefix(existing).ok()?;
    Some(normal(&std::fs::canonicalize(existing).ok()?.join(rest)))
}

/// `path` with `.` dropped and `..` applied.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcpgen-workspace-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::canonicalize(dir).unwrap()
    }

    #[test]
    fn finds_the_nearest_workspace_root_above_a_new_directory() {
        let root = tempdir("member");
        std::fs::write(
            root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/*\"]\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("crates")).unwrap();
        // A package manifest without [workspace] on the way up does not count.
        std::fs::write(root.join("crates/Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        assert_eq!(
            enclosing_workspace(&root.join("crates/shop")),
            Some(root.clone())
        );
        assert_eq!(
            enclosing_workspace(&root.join("crates/./deep/../shop")),
            Some(root.clone())
        );
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn an_excluded_directory_or_no_workspace_stands_alone() {
        let root = tempdir("exclude");
        std::fs::write(
            root.join("Cargo.toml"),
            "[package]\nname = \"tool\"\n[workspace]\nexclude = [\"./out\", \"examples/x\"]\n",
        )
        .unwrap();
        assert_eq!(enclosing_workspace(&root.join("out/shop")), None);
        assert_eq!(enclosing_workspace(&root.join("examples/x")), None);
        assert_eq!(
            enclosing_workspace(&root.join("examples/y")),
            Some(root.clone())
        );
        assert_eq!(
            enclosing_workspace(&root.join("outside")),
            Some(root.clone())
        );
        std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"tool\"\n").unwrap();
        assert_eq!(enclosing_workspace(&root.join("shop")), None);
        std::fs::remove_dir_all(root).unwrap();
    }
}
