//! Resources and resource templates: fixed content (`text` or `blob`, valid base64), template
//! variables (well formed; `exemptFromPathChecks` and `complete` naming them), and the names of
//! the methods and types that read them in code.

use std::collections::HashMap;

use super::names::rename_help;
use super::{Validator, base64_problem};
use crate::diagnostics::{Code, Diagnostic, Subject};
use crate::names::{self, closest};
use crate::pointer::Pointer;
use crate::spec::{Resource, ResourceTemplate, template_variables};

/// Rust method name -> the URI (template) it reads and where its name is.
type Methods = HashMap<String, (String, Pointer)>;

impl Validator<'_> {
    /// Every resource, then every template, in spec order.
    pub(super) fn resources(&mut self) {
        let mut methods = Methods::new();
        for (uri, r) in &self.spec.resources {
            self.resource(uri, r, &mut methods);
        }
        for (uri, t) in &self.spec.resource_templates {
            self.template(uri, t, &mut methods);
        }
    }

    /// A resource's content; one read in code gets a method.
    fn resource(&mut self, uri: &str, r: &Resource, methods: &mut Methods) {
        let at = Pointer::from_segments(["resources", uri]);
        let subject = Subject::Resource(uri.to_string());
        match (&r.text, &r.blob) {
            (Some(_), Some(_)) => {
                self.err_key(
                    Code::ResourceContent,
                    format!("resource `{uri}` has both `text` and `blob`; give one, or neither to read it in code"),
                    at.clone(),
                )
                .subjects
                .push(subject);
                self.also_key(at.child("text"), "`text` here");
                self.also_key(at.child("blob"), "and `blob` here");
            }
            (None, Some(blob)) => {
                if let Some(why) = base64_problem(blob) {
                    self.err(
                        Code::InvalidBase64,
                        format!("the `blob` of resource `{uri}` is not valid base64: {why}"),
                        at.child("blob"),
                    )
                    .subjects
                    .push(subject);
                }
            }
            (None, None) => self.read_method(&r.name, uri, at.child("name"), methods),
            (Some(_), None) => {}
        }
    }

    /// A template: its method, its variables' type, and its variables.
    fn template(&mut self, uri: &str, t: &ResourceTemplate, methods: &mut Methods) {
        let at = Pointer::from_segments(["resourceTemplates", uri]);
        self.read_method(&t.name, uri, at.child("name"), methods);
        self.type_name(
            names::vars_type_name(&t.name),
            format!("the variables of template `{uri}`"),
            at.child("name"),
            Subject::Resource(uri.to_string()),
            format!("the `name` of template `{uri}`"),
        );
        let vars = template_variables(uri);
        for var in &vars {
            self.template_variable(uri, var, &at);
        }
        for (i, var) in t.exempt_from_path_checks.iter().enumerate() {
            if !vars.contains(var) {
                let d = self.err(
                    Code::UnknownVariable,
                    format!("template `{uri}` exempts `{var}` from the path checks, which is not one of its variables ({})", listed_variables(&vars)),
                    at.child("exemptFromPathChecks").child(&i.to_string()),
                );
                explain_unknown_variable(d, uri, var, &vars);
                self.also_key(at.clone(), "the template's variables are in its URI");
            }
        }
        for key in t.complete.keys() {
            if !vars.contains(key) {
                let d = self.err_key(
                    Code::UnknownVariable,
                    format!("template `{uri}` offers completions for `{key}`, which is not one of its variables ({})", listed_variables(&vars)),
                    at.child("complete").child(key),
                );
                explain_unknown_variable(d, uri, key, &vars);
                self.also_key(at.clone(), "the template's variables are in its URI");
            }
        }
    }

    /// A variable of template `uri` (at `at`) is a name of letters, digits and `_`.
    fn template_variable(&mut self, uri: &str, var: &str, at: &Pointer) {
        let well_formed = var
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if well_formed {
            return;
        }
        self.err_key(
            Code::InvalidTemplate,
            format!("template `{uri}` has the variable `{{{var}}}`; variables are names of letters, digits and `_`"),
            at.clone(),
        )
        .subjects
        .push(Subject::Resource(uri.to_string()));
        let fixed = names::fn_name(var);
        if names::ident_problem(&fixed).is_none() {
            self.last().help = Some(format!("rename it, e.g. to `{{{fixed}}}`"));
        }
    }

    /// The Rust method reading `uri` in code, named after `name` (at `at`): an identifier, and
    /// not the method of another resource (in `methods`).
    fn read_method(&mut self, name: &str, uri: &str, at: Pointer, methods: &mut Methods) {
        let ident = names::read_fn_name(name);
        let subject = Subject::Resource(uri.to_string());
        if let Some(why) = names::ident_problem(&ident) {
            let d = self.err(
                Code::InvalidIdentifier,
                format!(
                    "the name `{name}` of `{uri}` cannot become the Rust method `{ident}`: {why}"
                ),
                at,
            );
            d.help = Some(rename_help(name));
            d.subjects.push(subject);
            return;
        }
        if let Some((other, other_at)) =
            methods.insert(ident.clone(), (uri.to_string(), at.clone()))
        {
            self.err(
                Code::NameCollision,
                format!("`{other}` and `{uri}` are both read by the Rust method `{ident}`; give them different names"),
                at,
            )
            .subjects
            .extend([Subject::Resource(other.clone()), subject]);
            self.also(other_at, format!("`{other}` is read by `{ident}` too"));
        }
    }
}

/// A template's variables for a message: "`a`, `b`", or "it has none".
fn listed_variables(vars: &[String]) -> String {
    if vars.is_empty() {
        return "it has none".to_string();
    }
    vars.iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The subject and the did-you-mean of an `unknown-variable` diagnostic about template `uri`.
fn explain_unknown_variable(d: &mut Diagnostic, uri: &str, name: &str, vars: &[String]) {
    d.subjects.push(Subject::Resource(uri.to_string()));
    if let Some(h) = closest(name, vars.iter().map(String::as_str)) {
        d.help = Some(format!("did you mean `{h}`?"));
    }
}
