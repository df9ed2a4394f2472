//! JSON pointers (RFC 6901), the address every diagnostic carries.

use std::fmt;

/// A JSON pointer such as `/tools/order_book/resolve/stock`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Pointer(String);

impl Pointer {
    /// The pointer to the whole document (the empty string).
    pub fn root() -> Self {
        Pointer(String::new())
    }

    /// Parses a pointer; it must be empty or start with `/`.
    pub fn parse(s: &str) -> Option<Self> {
        (s.is_empty() || s.starts_with('/')).then(|| Pointer(s.to_string()))
    }

    /// Builds a pointer from unescaped segments.
    pub fn from_segments<I, S>(segments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut p = Pointer::root();
        for s in segments {
            p.push(s.as_ref());
        }
        p
    }

    /// This pointer with one more (unescaped) segment.
    pub fn child(&self, segment: &str) -> Self {
        let mut p = self.clone();
        p.push(segment);
        p
    }

    /// Appends one (unescaped) segment.
    pub fn push(&mut self, segment: &str) {
        self.0.push('/');
        self.0
            .push_str(&segment.replace('~', "~0").replace('/', "~1"));
    }

    /// Removes the last segment; false at the root.
    pub fn pop(&mut self) -> bool {
        match self.0.rfind('/') {
            Some(i) => {
                self.0.truncate(i);
                true
            }
            None => false,
        }
    }

    /// The unescaped segments.
    pub fn segments(&self) -> impl Iterator<Item = String> + '_ {
        self.0
            .split('/')
            .skip(1)
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
    }

    /// The last unescaped segment.
    pub fn last(&self) -> Option<String> {
        self.segments().last()
    }

    /// The escaped text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("(document root)")
        } else {
            f.write_str(&self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip() {
        let p = Pointer::from_segments(["$defs", "a/b~c"]);
        assert_eq!(p.as_str(), "/$defs/a~1b~0c");
        assert_eq!(p.segments().collect::<Vec<_>>(), vec!["$defs", "a/b~c"]);
        let mut q = p.clone();
        assert!(q.pop());
        assert_eq!(q.as_str(), "/$defs");
        assert!(q.pop());
        assert!(!q.pop());
    }
}
