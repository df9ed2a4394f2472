//! The top-level modules of the generator (those `src/lib.rs` declares) and of the runtime crate
//! (those `runtime/src/lib.rs` declares) import one another without cycles: every
//! `crate::<module>` path outside comments is an edge from the module whose file it is in (a
//! file in a folder belongs to its top-level folder's module), and the graph's strongly
//! connected components are listed. Cycles that exist today are listed in `KNOWN` and
//! `KNOWN_RUNTIME` (each is owned by work that removes it); a test fails on any other cycle, and
//! on a known one that is gone (so the lists only shrink).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Today's cycles of the generator, each as its modules in name order: none (keep it so).
const KNOWN: &[&[&str]] = &[];

/// Today's cycles of the runtime crate, each as its modules in name order: none (keep it so).
const KNOWN_RUNTIME: &[&[&str]] = &[];

/// The modules `<src>/lib.rs` declares in files (`mod m;`, `pub mod m;`, not inline ones).
fn modules(src: &Path) -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("pub mod ")
                .or(l.trim().strip_prefix("mod "))
        })
        .filter(|m| m.ends_with(';'))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The modules a text names as `crate::m` or `crate::{m, n::x, ..}` (a group over several
/// lines too, as rustfmt writes long ones), outside comment lines.
fn named(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .flat_map(|l| [l, "\n"])
        .collect();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Only the first segment of each top-level member of the group.
            let mut depth = 0;
            let mut member_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => member_start = true,
                    c if member_start && (c.is_alphabetic() || c == '_') => {
                        out.insert(ident_at(&group[j..]));
                        member_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident_at(rest));
        }
    }
    out
}

fn ident_at(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Module -> the modules it imports, for the crate whose sources are in `src`.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(src);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files(src) {
        let rel = file.strip_prefix(src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        if !mods.contains(&top) {
            continue; // lib.rs, main.rs
        }
        let text = std::fs::read_to_string(&file).unwrap();
        // A file's unit tests (its top-level `#[cfg(test)]` items, at its end) may drive the
        // whole pipeline; the house's data flow is what the code before them imports.
        let text = text.split("\n#[cfg(test)]").next().unwrap_or_default();
        let edges = graph.entry(top.clone()).or_default();
        edges.extend(
            named(text)
                .into_iter()
                .filter(|m| mods.contains(m) && *m != top),
        );
    }
    graph
}

/// The strongly connected components of more than one module, each in name order.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reaches(m))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for m in graph.keys() {
        let component: Vec<String> = graph
            .keys()
            .filter(|n| *n == m || (reach[m].contains(*n) && reach[n].contains(m)))
            .cloned()
            .collect();
        if component.len() > 1 && !out.contains(&component) {
            out.push(component);
        }
    }
    out
}

/// Fails when the cycles of the crate whose sources are in `src` are not exactly `known`.
fn check(src: &Path, known: &[&[&str]]) {
    let graph = imports(src);
    assert!(
        graph.len() > 1,
        "no modules found in {}: {graph:?}",
        src.display()
    );
    let found = cycles(&graph);
    let known: Vec<Vec<String>> = known
        .iter()
        .map(|c| c.iter().map(|m| m.to_string()).collect())
        .collect();
    let edges: Vec<String> = found
        .iter()
        .flatten()
        .map(|m| {
            let within: Vec<&String> = graph[m]
                .iter()
                .filter(|n| found.iter().any(|c| c.contains(m) && c.contains(n)))
                .collect();
            format!("{m} -> {within:?}")
        })
        .collect();
    assert_eq!(
        found,
        known,
        "import cycles in {}; edges within them: {edges:#?}",
        src.display()
    );
}

#[test]
fn the_generators_modules_import_one_another_without_cycles() {
    check(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), KNOWN);
}

#[test]
fn the_runtimes_modules_import_one_another_without_cycles() {
    check(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime/src"),
        KNOWN_RUNTIME,
    );
}

#[test]
fn imports_are_read_from_use_lines_and_paths() {
    let text = "use crate::a::X;\n// use crate::commented;\nuse crate::{b, c::{D, e}, f::G};\nlet x = crate::g::h();\n";
    assert_eq!(
        named(text),
        ["a", "b", "c", "f", "g"].map(String::from).into()
    );
    let text = "use crate::{\n    b::{\n        C,\n        // crate::commented\n        d::E,\n    },\n    f,\n};\n";
    assert_eq!(named(text), ["b", "f"].map(String::from).into());
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, e)| (m.to_string(), e.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&graph), vec![vec!["a", "b", "c"]]);
}
