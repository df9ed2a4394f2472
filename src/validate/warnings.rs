//! Warnings: a resolver no consumer uses, and a tool with `annotations` but no `title`.

use std::collections::HashSet;

use super::{Validator, resolver_ptr, tool_ptr};
use crate::diagnostics::{Code, Diagnostic, Subject};
use crate::graph::{consumers, run_order};

impl Validator<'_> {
    /// Every warning of the spec beyond its schemas.
    pub(super) fn warnings(&mut self) {
        let used: HashSet<String> = consumers(self.spec)
            .iter()
            .flat_map(|c| run_order(self.spec, &c.tool))
            .collect();
        for name in self.spec.resolvers.keys() {
            if !used.contains(name) {
                let at = resolver_ptr(name);
                let span = self.src.key_span_of(&at);
                self.out.push(
                    Diagnostic::warning(
                        Code::UnusedResolver,
                        format!(
                            "resolver `{name}` is not used by any tool{}",
                            if self.spec.prompts.is_empty() {
                                ""
                            } else {
                                " or prompt"
                            }
                        ),
                    )
                    .at(at, span)
                    .about(Subject::Resolver(name.clone())),
                );
            }
        }
        for (name, tool) in &self.spec.tools {
            if tool.annotations.is_some() && tool.title.is_none() {
                let at = tool_ptr(name).child("annotations");
                let span = self.src.key_span_of(&at);
                self.out.push(
                    Diagnostic::warning(Code::AnnotationsWithoutTitle, format!("tool `{name}` has annotations but no `title`; clients show the title next to the hints"))
                        .at(at, span)
                        .about(Subject::Tool(name.clone())),
                );
            }
        }
    }
}
