//! The lending library's behaviour (user-owned: mcpgen adds stubs here when the spec grows).
//!
//! Who calls is never an argument: the `member` resolver derives the [`Member`] from the
//! verified principal (its subject is the member id; a token granting `loans:write` makes the
//! caller a librarian too). Over HTTP the front has checked the token and each operation's
//! scopes before anything here runs (`search_catalog` needs `catalog:read`, `my_loans` and the
//! `member_loans` template `loans:read`, borrowing, returning and the ledger `loans:write`);
//! over stdio the principal comes from `MCP_PRINCIPAL_*` and scopes are not enforced, so what a
//! handler decides from the member (whose loans a template read shows) is decided here.
//!
//! The state is in memory: the catalog (fixed titles, copies on the shelf) and the loans of
//! each member, behind one mutex (the HTTP server runs one runtime per CPU over the same
//! handlers).

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

use crate::generated::types::{
    BorrowBookArgs, BorrowConfirmation, LoanSummaryArguments, Member, MemberLoansVars,
    ReturnBookArgs, SearchCatalogArgs,
};
use crate::generated::{
    Ask, Context, Outcome, Principal, PromptMessage, Prompts, Resolvers, ResourceBody, Resources,
    ToolError, Tools, user_text,
};

/// The scope that makes a caller a librarian.
const LIBRARIAN_SCOPE: &str = "loans:write";
/// How many books a member may have on loan at once (the `library://rules` text says so).
const MAX_LOANS: usize = 3;

/// A title in the catalog.
struct Book {
    id: &'static str,
    title: &'static str,
    author: &'static str,
    copies: usize,
}

/// The catalog the library starts with.
const CATALOG: [Book; 4] = [
    Book {
        id: "lib-1",
        title: "Dune",
        author: "Frank Herbert",
        copies: 2,
    },
    Book {
        id: "lib-2",
        title: "The Left Hand of Darkness",
        author: "Ursula K. Le Guin",
        copies: 1,
    },
    Book {
        id: "lib-3",
        title: "Neuromancer",
        author: "William Gibson",
        copies: 1,
    },
    Book {
        id: "lib-4",
        title: "Kindred",
        author: "Octavia E. Butler",
        copies: 1,
    },
];

/// One loan, as the `member_loans` template and the ledger show it.
#[derive(Debug, Clone, Serialize)]
struct Loan {
    book_id: &'static str,
    title: &'static str,
}

/// The library: who has which book.
#[derive(Default)]
pub struct Lending {
    /// The loans of each member (by member id), in the order they were made.
    loans: Mutex<BTreeMap<String, Vec<Loan>>>,
}

fn book(id: &str) -> Result<&'static Book, ToolError> {
    CATALOG
        .iter()
        .find(|b| b.id == id)
        .ok_or_else(|| ToolError::new(format!("There is no book {id} in the catalog.")))
}

impl Lending {
    fn loans(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Vec<Loan>>> {
        // A panic while holding the lock leaves consistent data (each change is one push or
        // one remove): keep serving.
        self.loans.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Copies of `book` on the shelf now.
    fn on_shelf(loans: &BTreeMap<String, Vec<Loan>>, book: &Book) -> usize {
        let lent = loans
            .values()
            .flatten()
            .filter(|l| l.book_id == book.id)
            .count();
        book.copies - lent
    }

    /// Why `member` cannot borrow `book` now, if they cannot.
    fn refusal(
        loans: &BTreeMap<String, Vec<Loan>>,
        member: &Member,
        book: &Book,
    ) -> Option<String> {
        let theirs = loans.get(&member.id).map_or(&[][..], Vec::as_slice);
        if theirs.iter().any(|l| l.book_id == book.id) {
            Some(format!(
                "{} already has '{}' on loan.",
                member.id, book.title
            ))
        } else if theirs.len() >= MAX_LOANS {
            Some(format!(
                "{} already has {MAX_LOANS} books on loan.",
                member.id
            ))
        } else if Self::on_shelf(loans, book) == 0 {
            Some(format!("No copy of '{}' is on the shelf.", book.title))
        } else {
            None
        }
    }

    /// `"<member> has no loans."` or `"<member> has 2 loans: lib-1 Dune, lib-3 Neuromancer."`.
    fn describe_loans(&self, member: &str) -> String {
        let loans = self.loans();
        let theirs = loans.get(member).map_or(&[][..], Vec::as_slice);
        match theirs.len() {
            0 => format!("{member} has no loans."),
            n => {
                let list: Vec<String> = theirs
                    .iter()
                    .map(|l| format!("{} {}", l.book_id, l.title))
                    .collect();
                let noun = if n == 1 { "loan" } else { "loans" };
                format!("{member} has {n} {noun}: {}.", list.join(", "))
            }
        }
    }
}

impl Resolvers for Lending {
    async fn member(&self, _ctx: &Context, me: &Principal) -> Result<Member, ToolError> {
        Ok(Member {
            id: me.subject.clone(),
            librarian: me.has_scopes(&[LIBRARIAN_SCOPE]),
        })
    }

    async fn confirm_borrow(
        &self,
        _ctx: &Context,
        book_id: &str,
        member: &Member,
    ) -> Result<Ask<BorrowConfirmation>, ToolError> {
        let book = book(book_id)?;
        // Refuse before asking: the member is asked only about a loan that can happen.
        if let Some(refusal) = Self::refusal(&self.loans(), member, book) {
            return Err(ToolError::new(refusal));
        }
        Ok(Ask::elicit(format!(
            "Borrow '{}' by {} as {}? It is due back in 21 days.",
            book.title, book.author, member.id
        )))
    }
}

impl Tools for Lending {
    async fn search_catalog(
        &self,
        _ctx: &Context,
        args: SearchCatalogArgs,
    ) -> Result<String, ToolError> {
        let query = args.query.to_lowercase();
        let words: Vec<&str> = query.split_whitespace().collect();
        let loans = self.loans();
        let found: Vec<String> = CATALOG
            .iter()
            .filter(|b| {
                let text = format!("{} {}", b.title, b.author).to_lowercase();
                words.iter().all(|w| text.contains(w))
            })
            .map(|b| {
                format!(
                    "{}: '{}' by {} ({} of {} on the shelf)",
                    b.id,
                    b.title,
                    b.author,
                    Self::on_shelf(&loans, b),
                    b.copies
                )
            })
            .collect();
        if found.is_empty() {
            return Ok(format!("No book matches '{}'.", args.query));
        }
        Ok(found.join("\n"))
    }

    async fn my_loans(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        member: Member,
    ) -> Result<String, ToolError> {
        Ok(self.describe_loans(&member.id))
    }

    async fn borrow_book(
        &self,
        _ctx: &Context,
        args: BorrowBookArgs,
        member: Member,
        confirmation: Outcome<BorrowConfirmation>,
    ) -> Result<String, ToolError> {
        let book = book(&args.book_id)?;
        match confirmation {
            Outcome::Accepted(BorrowConfirmation { confirm: true }) => {}
            _ => return Ok(format!("{} did not borrow '{}'.", member.id, book.title)),
        }
        let mut loans = self.loans();
        // Another request may have taken the last copy while the member was answering.
        if let Some(refusal) = Self::refusal(&loans, &member, book) {
            return Err(ToolError::new(refusal));
        }
        loans.entry(member.id.clone()).or_default().push(Loan {
            book_id: book.id,
            title: book.title,
        });
        Ok(format!(
            "{} borrowed '{}' ({}); due back in 21 days. {} of {} copies on the shelf.",
            member.id,
            book.title,
            book.id,
            Self::on_shelf(&loans, book),
            book.copies
        ))
    }

    async fn return_book(
        &self,
        _ctx: &Context,
        args: ReturnBookArgs,
        member: Member,
    ) -> Result<String, ToolError> {
        let book = book(&args.book_id)?;
        let mut loans = self.loans();
        let theirs = loans.entry(member.id.clone()).or_default();
        let Some(at) = theirs.iter().position(|l| l.book_id == book.id) else {
            return Err(ToolError::new(format!(
                "{} has not borrowed '{}'.",
                member.id, book.title
            )));
        };
        theirs.remove(at);
        Ok(format!(
            "{} returned '{}' ({}).",
            member.id, book.title, book.id
        ))
    }
}

impl Prompts for Lending {
    async fn loan_summary(
        &self,
        _ctx: &Context,
        args: LoanSummaryArguments,
        member: Member,
    ) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(vec![user_text(format!(
            "In a {} tone, summarise these loans for the member and remind them that a loan lasts 21 days. {}",
            args.tone,
            self.describe_loans(&member.id)
        ))])
    }
}

impl Resources for Lending {
    async fn read_ledger(&self, _ctx: &Context) -> Result<ResourceBody, ToolError> {
        ResourceBody::json(&*self.loans())
    }

    async fn read_member_loans(
        &self,
        ctx: &Context,
        _uri: &str,
        vars: MemberLoansVars,
    ) -> Result<ResourceBody, ToolError> {
        // A resource reader takes no resolver parameters: it asks the context for the
        // principal itself. A member reads their own loans; a librarian anyone's.
        let me = ctx
            .principal()
            .ok_or_else(|| ToolError::new("No verified caller."))?;
        if me.subject != vars.member && !me.has_scopes(&[LIBRARIAN_SCOPE]) {
            return Err(ToolError::new(format!(
                "{} may read only their own loans (librarians: {LIBRARIAN_SCOPE}).",
                me.subject
            )));
        }
        let loans = self.loans();
        let theirs = loans.get(&vars.member).map_or(&[][..], Vec::as_slice);
        ResourceBody::json(theirs)
    }
}
