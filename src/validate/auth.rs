//! Authorization in the spec: a `"principal"` parameter or any `scopes` need top-level `auth`
//! (`principal-without-auth`, `scopes-without-auth`); every scope is an RFC 6749 scope-token
//! (`invalid-scope`); with `auth.scopesSupported` given, every scope the spec requires is listed
//! there (`unlisted-scope`).

use super::{Validator, resolver_ptr};
use crate::diagnostics::{Code, Subject};
use crate::names::closest;
use crate::pointer::Pointer;
use crate::spec::format::describe_place;
use crate::spec::{ParamSource, SourceKeyword, scopes_named};

/// What a spec without `auth` is told to add.
const ADD_AUTH: &str = "add `\"auth\": {}` at the top level (every request then needs a verified caller; `\"auth\": {\"required\": false}` lets anonymous requests in)";

/// Why `scope` is not an RFC 6749 scope-token (§3.3: `1*( %x21 / %x23-5B / %x5D-7E )`), if it
/// is not.
pub(crate) fn scope_problem(scope: &str) -> Option<String> {
    if scope.is_empty() {
        return Some("it is empty".into());
    }
    let bad = scope
        .chars()
        .find(|&c| !matches!(c, '\u{21}' | '\u{23}'..='\u{5b}' | '\u{5d}'..='\u{7e}'))?;
    Some(match bad {
        ' ' => {
            "it holds a space (scopes are separated by spaces: write each one on its own)".into()
        }
        '"' | '\\' => format!("it holds `{bad}`"),
        c if c.is_control() => format!("it holds the control character U+{:04X}", c as u32),
        c if c.is_ascii() => format!("it holds {c:?}"),
        c => format!("it holds `{c}`, which is not ASCII"),
    })
}

impl Validator<'_> {
    /// Every authorization finding, in spec order.
    pub(super) fn auth(&mut self) {
        if self.spec.auth.is_none() {
            self.principal_without_auth();
            self.scopes_without_auth();
        }
        self.scope_tokens();
        self.unlisted_scopes();
    }

    /// `"principal"` parameters of a spec without `auth`.
    fn principal_without_auth(&mut self) {
        for (rname, r) in &self.spec.resolvers {
            for (param, source) in &r.params {
                if source != &ParamSource::Keyword(SourceKeyword::Principal) {
                    continue;
                }
                let d = self.err(
                    Code::PrincipalWithoutAuth,
                    format!("parameter `{param}` of resolver `{rname}` takes the verified caller (`\"principal\"`), but the spec has no `auth`, so no caller is ever verified"),
                    resolver_ptr(rname).child("params").child(param),
                );
                d.subjects.extend([
                    Subject::Resolver(rname.clone()),
                    Subject::Parameter(param.clone()),
                ]);
                d.help = Some(ADD_AUTH.into());
            }
        }
    }

    /// Tools, prompts, resources and templates with `scopes` in a spec without `auth`.
    fn scopes_without_auth(&mut self) {
        let s = self.spec;
        let owners: Vec<Pointer> = (s.tools.iter().filter(|(_, t)| !t.scopes.is_empty()))
            .map(|(n, _)| Pointer::from_segments(["tools", n.as_str()]))
            .chain(
                (s.prompts.iter().filter(|(_, p)| !p.scopes.is_empty()))
                    .map(|(n, _)| Pointer::from_segments(["prompts", n.as_str()])),
            )
            .chain(
                (s.resources.iter().filter(|(_, r)| !r.scopes.is_empty()))
                    .map(|(u, _)| Pointer::from_segments(["resources", u.as_str()])),
            )
            .chain(
                (s.resource_templates
                    .iter()
                    .filter(|(_, t)| !t.scopes.is_empty()))
                .map(|(u, _)| Pointer::from_segments(["resourceTemplates", u.as_str()])),
            )
            .collect();
        for owner in owners {
            let (what, subjects) = describe_place(&owner);
            let d = self.err_key(
                Code::ScopesWithoutAuth,
                format!(
                    "{what} has `scopes`, but the spec has no `auth`, so no token is ever asked for"
                ),
                owner.child("scopes"),
            );
            d.subjects.extend(subjects);
            d.help = Some(ADD_AUTH.into());
        }
    }

    /// Every scope written (required or listed) is a scope-token.
    fn scope_tokens(&mut self) {
        let listed = (self.spec.auth.iter())
            .flat_map(|a| a.scopes_supported.iter().flatten().enumerate())
            .map(|(i, s)| {
                let at = Pointer::from_segments(["auth", "scopesSupported", &i.to_string()]);
                (at, s)
            });
        let all: Vec<(Pointer, &String)> = scopes_named(self.spec).chain(listed).collect();
        for (at, scope) in all {
            let Some(why) = scope_problem(scope) else {
                continue;
            };
            let (owner, subjects) = owner_of(&at);
            let d = self.err(
                Code::InvalidScope,
                format!("{scope:?} in {owner} is not an OAuth scope: {why}"),
                at,
            );
            d.subjects.extend(subjects);
            d.help = Some(
                "a scope is printable ASCII without spaces, `\"` or `\\` (RFC 6749, section 3.3)"
                    .into(),
            );
        }
    }

    /// With `auth.scopesSupported` given, every scope required is one of them.
    fn unlisted_scopes(&mut self) {
        let Some(listed) = self
            .spec
            .auth
            .as_ref()
            .and_then(|a| a.scopes_supported.as_ref())
        else {
            return;
        };
        let unlisted: Vec<(Pointer, &String)> = scopes_named(self.spec)
            .filter(|(_, s)| !listed.contains(s) && scope_problem(s).is_none())
            .collect();
        for (at, scope) in unlisted {
            let (owner, subjects) = owner_of(&at);
            let help = closest(scope, listed.iter().map(String::as_str));
            let d = self.err(
                Code::UnlistedScope,
                format!("{owner} needs scope `{scope}`, which `auth.scopesSupported` does not list: a client could never learn to ask for it"),
                at,
            );
            d.subjects.extend(subjects);
            d.help = Some(match help {
                Some(h) => {
                    format!("did you mean `{h}`? Otherwise add `{scope}` to `scopesSupported`")
                }
                None => format!("add `{scope}` to `scopesSupported`"),
            });
            self.label("required here");
            self.also_key(
                Pointer::from_segments(["auth", "scopesSupported"]),
                "the scopes the metadata lists",
            );
        }
    }
}

/// Whose `scopes` the scope at `at` (`<owner>/scopes/<i>`) is: its owner in words (`tool
/// `borrow``, `` `auth` ``) and its subjects.
fn owner_of(at: &Pointer) -> (String, Vec<Subject>) {
    let seg: Vec<String> = at.segments().collect();
    let list = seg
        .get(seg.len().saturating_sub(2))
        .cloned()
        .unwrap_or_default();
    let owner = Pointer::from_segments(seg.iter().take(seg.len().saturating_sub(2)));
    let (what, subjects) = describe_place(&owner);
    (format!("the `{list}` of {what}"), subjects)
}
