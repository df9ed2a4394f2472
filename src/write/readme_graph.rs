//! The crate README's "Resolver graph": the Mermaid picture of the spec's resolver graph
//! (`emit::diagram`) between two markers, written by `new` and kept current by `generate`
//! (the rest of the README is the user's; without both markers nothing is touched).

use crate::emit::diagram::{Syntax, render};
use crate::model::Model;

/// The marker before the picture.
pub const BEGIN: &str = "<!-- mcpgen:graph (mcpgen generate redraws this block from the spec; delete both markers to keep your own) -->";
/// The marker after it.
pub const END: &str = "<!-- /mcpgen:graph -->";

/// The block between and with the markers, for a spec with resolvers; `None` without any.
pub fn block(model: &Model) -> Option<String> {
    if model.resolvers.is_empty() {
        return None;
    }
    let picture = render(model, Syntax::Mermaid, None).ok()?;
    Some(format!("{BEGIN}\n```mermaid\n{picture}```\n{END}"))
}

/// `readme` with the block between its markers redrawn for `model` (removed when the spec has
/// no resolvers any more, markers kept); `None` when the README has no such block or it is
/// current.
pub fn redrawn(readme: &str, model: &Model) -> Option<String> {
    let start = readme.find(BEGIN)?;
    let end = start + readme[start..].find(END)? + END.len();
    let now = block(model).unwrap_or_else(|| format!("{BEGIN}\n{END}"));
    let redrawn = format!("{}{now}{}", &readme[..start], &readme[end..]);
    (redrawn != readme).then_some(redrawn)
}
