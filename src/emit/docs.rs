//! Doc comments from spec descriptions: a description is the user's prose and may hold any
//! Markdown (lists, `[brackets]`, HTML, code fences); [`doc_text`] turns it into doc text that
//! rustdoc and clippy take as written, so any description gives warning-free code.

/// Characters that make rustdoc read a description as links or HTML.
const MARKDOWN: &[char] = &['[', ']', '<'];

/// `text` as a doc comment's text: unchanged when it is plain prose (paragraphs, `code` spans;
/// no lists, headings, quotes, indented or fenced blocks, links, HTML or bare URLs), otherwise the
/// whole text in a fenced `text` block, shown verbatim; tabs are written as four spaces.
pub fn doc_text(text: &str) -> String {
    // Tabs become four spaces (clippy's `tabs_in_doc_comments`); the schema keeps its text.
    let text = text.replace('\t', "    ");
    let text = text.trim_end();
    if is_plain(text) {
        return text.to_string();
    }
    // A fence longer than any run of backticks inside.
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{text}\n{fence}")
}

fn is_plain(text: &str) -> bool {
    // Inside `code` spans anything goes.
    let outside: String = text.split('`').step_by(2).collect();
    !outside.contains(MARKDOWN)
        && !outside.contains("://")
        && !text.contains("``")
        && text.matches('`').count().is_multiple_of(2)
        && text.lines().all(|l| {
            let t = l.trim_start();
            t.len() == l.len()
                && !t.starts_with(['-', '+', '=', '*', '#', '>', '|'])
                && !t
                    .split_once(['.', ')'])
                    .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_prose_stays_and_markdown_is_fenced_verbatim() {
        assert_eq!(doc_text("Find books by title."), "Find books by title.");
        assert_eq!(
            doc_text("Two lines\nof prose, user_id included."),
            "Two lines\nof prose, user_id included."
        );
        assert_eq!(
            doc_text("Modes:\n- fast\n- slow\nlazy"),
            "```text\nModes:\n- fast\n- slow\nlazy\n```"
        );
        assert_eq!(doc_text("See [x]"), "```text\nSee [x]\n```");
        assert_eq!(doc_text("Reads `a://[b]`."), "Reads `a://[b]`.");
        assert_eq!(doc_text("Reads a://b."), "```text\nReads a://b.\n```");
        assert_eq!(doc_text("1. one\n2. two"), "```text\n1. one\n2. two\n```");
        assert_eq!(doc_text("a `b`\n\nc"), "a `b`\n\nc");
        assert_eq!(doc_text("a `b"), "```text\na `b\n```");
        assert_eq!(doc_text("  indented"), "```text\n  indented\n```");
        assert_eq!(doc_text("a\tb"), "a    b");
        assert_eq!(doc_text("\tx"), "```text\n    x\n```");
        assert_eq!(
            doc_text("code:\n````\nx\n````"),
            "`````text\ncode:\n````\nx\n````\n`````"
        );
    }
}
