//! Prompts: names, the argument struct of a prompt written in code, and fixed `messages` (one
//! kind of content each, placeholders naming arguments, base64 images, embedded resources that
//! are fixed).

use std::collections::HashMap;

use super::names::{matches_tool_name_pattern, pattern_help, rename_help};
use super::{TOOL_NAME_PATTERN, Validator, base64_problem};
use crate::diagnostics::{Code, Subject};
use crate::names::{self, closest};
use crate::pointer::Pointer;
use crate::spec::{Prompt, PromptMessage, Resource, placeholders};

/// Where a prompt is, its name and its subject: what each check of one prompt needs.
struct Place<'p> {
    at: Pointer,
    name: &'p str,
    subject: Subject,
}

impl Validator<'_> {
    /// Every prompt, in spec order.
    pub(super) fn prompts(&mut self) {
        let mut idents: HashMap<String, String> = HashMap::new();
        for (name, prompt) in &self.spec.prompts {
            let p = Place {
                at: Pointer::from_segments(["prompts", name]),
                name,
                subject: Subject::Prompt(name.clone()),
            };
            if !self.prompt_name(&p, &mut idents) {
                continue;
            }
            match &prompt.messages {
                None => self.prompt_in_code(&p, prompt),
                Some(messages) => {
                    self.fixed_prompt(&p, prompt);
                    let args: Vec<&str> = prompt.arguments.keys().map(String::as_str).collect();
                    for (i, m) in messages.iter().enumerate() {
                        self.message(&p, i, m, &args);
                    }
                }
            }
        }
    }

    /// The prompt's name; false when it is unusable (then nothing else of it is checked). A
    /// collision with an earlier prompt (in `idents`) is reported and the checks go on.
    fn prompt_name(&mut self, p: &Place<'_>, idents: &mut HashMap<String, String>) -> bool {
        let name = p.name;
        if !matches_tool_name_pattern(name) {
            self.err_key(
                Code::InvalidPromptName,
                format!("prompt name `{name}` must match {TOOL_NAME_PATTERN} (1 to 64 letters, digits, `_`, `.` or `-`)"),
                p.at.clone(),
            )
            .subjects
            .push(p.subject.clone());
            self.last().help = pattern_help(name);
            return false;
        }
        let ident = names::fn_name(name);
        if let Some(why) = names::ident_problem(&ident) {
            let d = self.err_key(
                Code::InvalidIdentifier,
                format!("prompt name `{name}` cannot become a Rust identifier: {why}"),
                p.at.clone(),
            );
            d.help = Some(rename_help(name));
            d.subjects.push(p.subject.clone());
            return false;
        }
        if let Some(other) = idents.insert(ident.clone(), name.to_string()) {
            let d = self.err_key(
                Code::NameCollision,
                format!("prompts `{other}` and `{name}` both become the Rust identifier `{ident}`"),
                p.at.clone(),
            );
            d.help = Some(format!("rename `{name}` or `{other}`"));
            d.subjects
                .extend([Subject::Prompt(other.clone()), p.subject.clone()]);
            self.also_key(
                Pointer::from_segments(["prompts", &other]),
                format!("`{other}` becomes `{ident}` too"),
            );
        }
        true
    }

    /// A prompt written in code: its argument struct's type name and fields.
    fn prompt_in_code(&mut self, p: &Place<'_>, prompt: &Prompt) {
        let name = p.name;
        // Every prompt written in code has an arguments type, an empty one included.
        self.type_name(
            names::prompt_args_type_name(name),
            format!("the arguments of prompt `{name}`"),
            p.at.clone(),
            p.subject.clone(),
            format!("prompt `{name}`"),
        );
        self.fields(
            prompt.arguments.keys(),
            p.at.child("arguments"),
            &format!("arguments of prompt `{name}`"),
            Some(&p.subject),
        );
    }

    /// A prompt with fixed messages cannot also resolve values.
    fn fixed_prompt(&mut self, p: &Place<'_>, prompt: &Prompt) {
        if prompt.resolve.is_empty() {
            return;
        }
        self.err_key(
            Code::ResolveWithMessages,
            format!("prompt `{}` has fixed `messages` and also `resolve`; resolved values reach only prompts written in code, so remove `messages` (and return the messages from the prompt's method) or remove `resolve`", p.name),
            p.at.child("resolve"),
        )
        .subjects
        .push(p.subject.clone());
        self.also_key(p.at.child("messages"), "the fixed messages");
    }

    /// Fixed message `i` of the prompt, whose arguments are `args`.
    fn message(&mut self, p: &Place<'_>, i: usize, m: &PromptMessage, args: &[&str]) {
        let mat = p.at.child("messages").child(&i.to_string());
        let name = p.name;
        let kinds = [m.text.is_some(), m.image.is_some(), m.resource.is_some()]
            .iter()
            .filter(|k| **k)
            .count();
        if kinds != 1 {
            self.err(
                Code::InvalidMessage,
                format!("message {i} of prompt `{name}` must have exactly one of `text`, `image` or `resource`, but it has {kinds}"),
                mat.clone(),
            )
            .subjects
            .push(p.subject.clone());
        }
        if let Some(text) = &m.text {
            self.message_text(p, i, text, args, mat.child("text"));
        }
        if let Some(image) = &m.image
            && base64_problem(&image.data).is_some()
        {
            self.err(
                Code::InvalidBase64,
                format!("the image of message {i} of prompt `{name}` is not valid base64"),
                mat.child("image").child("data"),
            )
            .subjects
            .push(p.subject.clone());
        }
        if let Some(uri) = &m.resource {
            self.message_resource(p, i, uri, mat.child("resource"));
        }
    }

    /// The placeholders of message `i`'s text (at `at`): well formed, each naming an argument.
    fn message_text(&mut self, p: &Place<'_>, i: usize, text: &str, args: &[&str], at: Pointer) {
        let name = p.name;
        let found = match placeholders(text) {
            Ok(found) => found,
            Err(why) => {
                self.err(
                    Code::InvalidPlaceholder,
                    format!("message {i} of prompt `{name}`: {why}"),
                    at,
                )
                .subjects
                .push(p.subject.clone());
                return;
            }
        };
        for ph in found.iter().filter(|ph| !args.contains(&ph.as_str())) {
            let help = closest(ph, args.iter().copied());
            let d = self.err(
                Code::UnknownPlaceholder,
                format!("message {i} of prompt `{name}` uses `{{{ph}}}`, but the prompt has no argument `{ph}`"),
                at.clone(),
            );
            d.subjects
                .extend([p.subject.clone(), Subject::Parameter(ph.clone())]);
            if let Some(h) = help {
                d.help = Some(format!("did you mean `{{{h}}}`?"));
            }
            let args_at = p.at.child("arguments");
            if self.src.place(&args_at).is_some() {
                self.also_key(
                    args_at,
                    format!("prompt `{name}` declares its arguments here"),
                );
            } else {
                self.also_key(p.at.clone(), format!("prompt `{name}` has no `arguments`"));
            }
        }
    }

    /// The resource message `i` embeds (at `at`): a resource of the spec with fixed content.
    fn message_resource(&mut self, p: &Place<'_>, i: usize, uri: &str, at: Pointer) {
        let resources = &self.spec.resources;
        let fixed = |r: &Resource| r.text.is_some() || r.blob.is_some();
        if resources.get(uri).is_some_and(fixed) {
            return;
        }
        let known = resources
            .iter()
            .filter(|(_, r)| fixed(r))
            .map(|(u, _)| u.as_str());
        let help = closest(uri, known);
        let declared = resources.contains_key(uri);
        let why = if declared {
            "is read in code (it has neither `text` nor `blob`)"
        } else {
            "is not a resource of this spec"
        };
        let d = self.err(
            Code::UnknownResource,
            format!("message {i} of prompt `{}` embeds resource `{uri}`, which {why}; a fixed message can embed only a resource with `text` or `blob`", p.name),
            at,
        );
        d.subjects
            .extend([p.subject.clone(), Subject::Resource(uri.to_string())]);
        if let Some(h) = help {
            d.help = Some(format!("did you mean `{h}`?"));
        }
        if declared {
            self.also_key(
                Pointer::from_segments(["resources", uri]),
                "read in code: neither `text` nor `blob`",
            );
        }
    }
}
