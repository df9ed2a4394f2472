//! Names that become Rust: tool and resolver names, parameter names, the generated type names
//! (two things becoming one type) and struct fields (two properties becoming one field); and the
//! tool-name pattern MCP clients accept, which prompts share.

use std::collections::HashMap;

use super::{TOOL_NAME_PATTERN, Validator, resolver_ptr, tool_ptr};
use crate::diagnostics::{Code, Subject};
use crate::names;
use crate::pointer::Pointer;

impl Validator<'_> {
    /// Tool names (pattern, identifier, collisions, their argument types) and resolver names.
    pub(super) fn names(&mut self) {
        for name in self.spec.defs.keys() {
            self.type_names.insert(
                names::type_name(name),
                (
                    format!("type `{name}` in `$defs`"),
                    Pointer::from_segments(["$defs", name]),
                    format!("`$defs` type `{name}`"),
                ),
            );
        }
        let mut tool_idents: HashMap<String, String> = HashMap::new();
        for name in self.spec.tools.keys() {
            self.tool_name(name, &mut tool_idents);
        }
        let mut resolver_idents: HashMap<String, String> = HashMap::new();
        for name in self.spec.resolvers.keys() {
            self.resolver_name(name, &mut resolver_idents);
        }
    }

    /// One tool's name; `idents` maps the Rust identifiers seen so far to their tools.
    fn tool_name(&mut self, name: &str, idents: &mut HashMap<String, String>) {
        let at = tool_ptr(name);
        let subject = Subject::Tool(name.to_string());
        if !matches_tool_name_pattern(name) {
            self.err_key(
                Code::InvalidToolName,
                format!("tool name `{name}` must match {TOOL_NAME_PATTERN} (1 to 64 letters, digits, `_`, `.` or `-`)"),
                at,
            )
            .subjects
            .push(subject);
            self.last().help = pattern_help(name);
            return;
        }
        let ident = names::fn_name(name);
        if let Some(why) = names::ident_problem(&ident) {
            let d = self.err_key(
                Code::InvalidIdentifier,
                format!("tool name `{name}` cannot become a Rust identifier: {why}"),
                at,
            );
            d.help = Some(rename_help(name));
            d.subjects.push(subject);
            return;
        }
        if let Some(other) = idents.insert(ident.clone(), name.to_string()) {
            let d = self.err_key(
                Code::NameCollision,
                format!("tools `{other}` and `{name}` both become the Rust identifier `{ident}`"),
                at,
            );
            d.help = Some(format!("rename `{name}` or `{other}`"));
            d.subjects.extend([Subject::Tool(other.clone()), subject]);
            self.also_key(tool_ptr(&other), format!("`{other}` becomes `{ident}` too"));
            // Their argument types collide as well: one finding is enough.
            return;
        }
        self.type_name(
            names::args_type_name(name),
            format!("the arguments of tool `{name}`"),
            at,
            subject,
            format!("tool `{name}`"),
        );
    }

    /// One resolver's name; `idents` maps the Rust identifiers seen so far to their resolvers.
    fn resolver_name(&mut self, name: &str, idents: &mut HashMap<String, String>) {
        let at = resolver_ptr(name);
        let subject = Subject::Resolver(name.to_string());
        let ident = names::fn_name(name);
        if let Some(why) = names::ident_problem(&ident) {
            let d = self.err_key(
                Code::InvalidIdentifier,
                format!("resolver name `{name}` cannot become a Rust identifier: {why}"),
                at,
            );
            d.help = Some(rename_help(name));
            d.subjects.push(subject);
            return;
        }
        if let Some(other) = idents.insert(ident.clone(), name.to_string()) {
            let d = self.err_key(
                Code::NameCollision,
                format!(
                    "resolvers `{other}` and `{name}` both become the Rust identifier `{ident}`"
                ),
                at,
            );
            d.help = Some(format!("rename `{name}` or `{other}`"));
            d.subjects
                .extend([Subject::Resolver(other.clone()), subject]);
            self.also_key(
                resolver_ptr(&other),
                format!("`{other}` becomes `{ident}` too"),
            );
        }
    }

    /// Records that `what` (at `at`; renamed as `rename` says) becomes the Rust type `ty`; two
    /// things becoming one type is an error at the second, pointing at the first too.
    pub(super) fn type_name(
        &mut self,
        ty: String,
        what: String,
        at: Pointer,
        subject: Subject,
        rename: String,
    ) {
        let Some((other, other_at, other_rename)) = self.type_names.get(&ty).cloned() else {
            self.type_names.insert(ty, (what, at, rename));
            return;
        };
        let at_key = self.src.place(&at).is_some_and(|p| p.key.is_some());
        let msg = format!("{other} and {what} both become the Rust type `{ty}`");
        let d = if at_key {
            self.err_key(Code::NameCollision, msg, at)
        } else {
            self.err(Code::NameCollision, msg, at)
        };
        d.help = Some(format!("rename {rename} or {other_rename}"));
        d.subjects.push(subject);
        self.also_key(other_at, format!("this becomes `{ty}` too"));
    }

    /// Checks a parameter name of a tool's `resolve` or a resolver's `params`; `seen` maps the
    /// Rust identifiers of its owner's parameters so far to their names and places.
    pub(super) fn param_name(
        &mut self,
        owner: Subject,
        owner_desc: &str,
        param: &str,
        at: Pointer,
        seen: &mut HashMap<String, (String, Pointer)>,
    ) {
        let subjects = [owner, Subject::Parameter(param.to_string())];
        if param.starts_with('_') {
            let bare = param.trim_start_matches('_');
            let d = self.err_key(
                Code::UnderscoreParameter,
                format!("parameter `{param}` of {owner_desc} cannot start with `_`"),
                at,
            );
            d.help = Some(if bare.is_empty() {
                "rename it to a name that starts with a letter".to_string()
            } else {
                format!("rename it to `{bare}`")
            });
            d.subjects.extend(subjects);
            return;
        }
        let ident = names::fn_name(param);
        if let Some(why) = names::ident_problem(&ident) {
            let d = self.err_key(
                Code::InvalidIdentifier,
                format!(
                    "parameter `{param}` of {owner_desc} cannot become a Rust identifier: {why}"
                ),
                at,
            );
            d.help = Some(rename_help(param));
            d.subjects.extend(subjects);
            return;
        }
        if let Some((other, other_at)) = seen.insert(ident.clone(), (param.to_string(), at.clone()))
        {
            let d = self.err_key(
                Code::NameCollision,
                format!("parameters `{other}` and `{param}` of {owner_desc} both become the Rust identifier `{ident}`"),
                at,
            );
            d.help = Some(format!("rename `{param}` or `{other}`"));
            d.subjects.extend(subjects);
            self.also_key(other_at, format!("`{other}` becomes `{ident}` too"));
        }
    }

    /// Two properties (or prompt arguments) of one object that become the same Rust field of
    /// the generated struct (`_id` and `id`, `a-b` and `a_b`): an error at the second.
    pub(super) fn fields<'k>(
        &mut self,
        keys: impl Iterator<Item = &'k String>,
        at: Pointer,
        what: &str,
        subject: Option<&Subject>,
    ) {
        let mut seen: HashMap<String, &String> = HashMap::new();
        for key in keys {
            let field = names::field_name(key);
            if let Some(other) = seen.insert(field.clone(), key) {
                let d = self.err_key(
                    Code::NameCollision,
                    format!("`{other}` and `{key}`, {what}, both become the Rust field `{field}`"),
                    at.child(key),
                );
                d.help = Some(format!("rename `{key}` or `{other}`"));
                d.subjects.extend(subject.cloned());
                self.also_key(at.child(other), format!("`{other}` becomes `{field}` too"));
            }
        }
    }
}

/// The help of an `invalid-identifier` diagnostic: an ASCII name to use instead, when one can
/// be made from the name.
pub(super) fn rename_help(name: &str) -> String {
    let ascii: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .collect();
    let suggestion = names::fn_name(&ascii);
    if names::ident_problem(&suggestion).is_none() && !ascii.is_empty() {
        format!("rename it, e.g. to `{suggestion}`")
    } else {
        "rename it to a name with ASCII letters or digits".to_string()
    }
}

/// The help of a name outside the tool name pattern: the name with every other character
/// replaced by `_`, cut to 64 characters, when that leaves a letter or digit.
pub(super) fn pattern_help(name: &str) -> Option<String> {
    let fixed: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    fixed
        .chars()
        .any(|c| c.is_ascii_alphanumeric())
        .then(|| format!("rename it, e.g. to `{fixed}`"))
}

/// True when `name` matches [`TOOL_NAME_PATTERN`].
pub(super) fn matches_tool_name_pattern(name: &str) -> bool {
    let n = name.chars().count();
    (1..=64).contains(&n)
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}
