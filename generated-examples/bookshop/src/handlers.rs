//! The Bookshop's behaviour (user-owned: mcpgen adds stubs here when the spec grows).

use std::collections::HashMap;

use crate::generated::types::{
    AddBookArgs, Backorder, OrderBookArgs, RecommendBookArgs, ReserveBookArgs, SearchBooksArgs,
    Stock,
};
use crate::generated::{
    Ask, Context, CreateMessageResult, Resolvers, SamplingMessage, ToolError, Tools, sampled_text,
};

/// The shop's state: copies in stock per title.
pub struct Bookshop {
    inventory: HashMap<String, i64>,
}

impl Default for Bookshop {
    fn default() -> Self {
        Bookshop {
            inventory: HashMap::from([("Dune".to_string(), 7), ("Neuromancer".to_string(), 0)]),
        }
    }
}

impl Resolvers for Bookshop {
    async fn check_stock(&self, _ctx: &Context, title: &str) -> Result<Stock, ToolError> {
        Ok(Stock {
            title: title.to_string(),
            copies: self.inventory.get(title).copied().unwrap_or(0),
        })
    }

    async fn estimate_delivery(&self, _ctx: &Context, stock: &Stock) -> Result<String, ToolError> {
        Ok(if stock.copies > 0 {
            "tomorrow"
        } else {
            "in 2-3 weeks"
        }
        .to_string())
    }

    async fn confirm_backorder(
        &self,
        _ctx: &Context,
        title: &str,
        stock: &Stock,
    ) -> Result<Ask<Backorder>, ToolError> {
        if stock.copies > 0 {
            return Ok(Ask::value(Backorder { confirm: true }));
        }
        Ok(Ask::elicit(format!(
            "'{title}' is out of stock (2-3 weeks). Order anyway?"
        )))
    }

    async fn suggest_title(
        &self,
        _ctx: &Context,
        genre: &str,
    ) -> Result<Ask<CreateMessageResult>, ToolError> {
        let prompt = format!("Suggest one {genre} book title. Answer with the title only.");
        Ok(Ask::sample(vec![SamplingMessage::user_text(prompt)], 50))
    }
}

impl Tools for Bookshop {
    async fn search_books(
        &self,
        _ctx: &Context,
        args: SearchBooksArgs,
    ) -> Result<String, ToolError> {
        let place = match args.genre {
            Some(genre) => format!(" in {genre}"),
            None => String::new(),
        };
        Ok(format!(
            "Found 3 books matching '{}'{place} (showing up to {}).",
            args.query, args.limit
        ))
    }

    async fn add_book(&self, _ctx: &Context, args: AddBookArgs) -> Result<String, ToolError> {
        let book = args.book;
        Ok(format!(
            "Added '{}' by {} ({}).",
            book.title, book.author, book.year
        ))
    }

    async fn reserve_book(
        &self,
        _ctx: &Context,
        args: ReserveBookArgs,
        stock: Stock,
    ) -> Result<String, ToolError> {
        if stock.copies == 0 {
            return Ok(format!("'{}' is out of stock.", args.title));
        }
        Ok(format!(
            "Reserved '{}' ({} copies left).",
            args.title,
            stock.copies - 1
        ))
    }

    async fn order_book(
        &self,
        _ctx: &Context,
        args: OrderBookArgs,
        stock: Stock,
        delivery: String,
        backorder: Backorder,
    ) -> Result<String, ToolError> {
        if !backorder.confirm {
            return Ok("No order placed.".to_string());
        }
        if stock.copies == 0 {
            return Ok(format!(
                "Backordered '{}'; it ships in 2-3 weeks.",
                args.title
            ));
        }
        Ok(format!("Ordered '{}'; it arrives {delivery}.", args.title))
    }

    async fn recommend_book(
        &self,
        _ctx: &Context,
        args: RecommendBookArgs,
        suggestion: CreateMessageResult,
    ) -> Result<String, ToolError> {
        let title = sampled_text(&suggestion).unwrap_or("the classics");
        Ok(format!("Today's {} pick: {title}", args.genre))
    }
}
