//! `completion/complete`: the spec's `complete` candidates of prompt arguments and template
//! variables.

use rmcp::{
    ErrorData,
    model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference},
};

use crate::catalog::{
    prompts::{PromptCatalog, unknown_prompt},
    resources::ResourceCatalog,
};

/// The `completion/complete` answer: the candidates of the referenced prompt argument
/// (`ref/prompt`) or template variable (`ref/resource`, by `uriTemplate`) that start with the
/// typed value, in spec order, at most 100 (`total` = all matches, `hasMore` when cut).
/// An unknown prompt or template is -32602; an argument without candidates completes to
/// nothing.
pub fn complete(
    prompts: &PromptCatalog,
    resources: &ResourceCatalog,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let argument = request.argument.name.as_str();
    let candidates: &[&str] = match &request.r#ref {
        Reference::Prompt(reference) => {
            let def = prompts
                .get(&reference.name)
                .ok_or_else(|| unknown_prompt(&reference.name))?;
            def.arguments
                .iter()
                .find(|arg| arg.name == argument)
                .map(|arg| arg.complete)
                .unwrap_or_default()
        }
        Reference::Resource(reference) => {
            let def = resources.template(&reference.uri).ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("Unknown resource template: {}", reference.uri),
                    None,
                )
            })?;
            def.complete
                .iter()
                .find(|(name, _)| *name == argument)
                .map(|(_, values)| *values)
                .unwrap_or_default()
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!("Unsupported reference type: {}", other.reference_type()),
                None,
            ));
        }
    };
    Ok(CompleteResult::new(filter(
        candidates,
        &request.argument.value,
    )))
}

/// The candidates starting with `typed`, at most [`CompletionInfo::MAX_VALUES`].
pub(crate) fn filter(candidates: &[&str], typed: &str) -> CompletionInfo {
    let matches: Vec<String> = candidates
        .iter()
        .filter(|candidate| candidate.starts_with(typed))
        .map(|candidate| candidate.to_string())
        .collect();
    let total = matches.len();
    let values: Vec<String> = matches
        .into_iter()
        .take(CompletionInfo::MAX_VALUES)
        .collect();
    let mut info = CompletionInfo::default();
    info.has_more = Some(total > values.len());
    info.total = Some(u32::try_from(total).unwrap_or(u32::MAX));
    info.values = values;
    info
}
