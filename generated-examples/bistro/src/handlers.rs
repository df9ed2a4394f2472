//! The Bistro's behaviour (user-owned: mcpgen adds stubs here when the spec grows).

use crate::generated::types::{AlternativeDate, BookTableArgs, ConfirmDepositArgs, PayDepositArgs};
use crate::generated::{Context, Outcome, Resolvers, ToolError, Tools};

/// The bistro keeps no state.
pub struct Bistro;

impl Resolvers for Bistro {}

impl Tools for Bistro {
    async fn book_table(&self, ctx: &Context, args: BookTableArgs) -> Result<String, ToolError> {
        let BookTableArgs {
            mut date,
            party_size,
        } = args;
        // As in the seed: after an accepted alternative, book again (the new date is free).
        loop {
            if date != "2025-12-25" {
                return Ok(format!("Booked a table for {party_size} on {date}."));
            }
            let answer = ctx
                .elicit::<AlternativeDate>(format!(
                    "No tables for {party_size} on {date}. Would you like to try another date?"
                ))
                .await?;
            match answer {
                Outcome::Accepted(alternative) if alternative.accept_alternative => {
                    date = alternative.date;
                }
                _ => return Ok("No booking made.".to_string()),
            }
        }
    }

    async fn pay_deposit(&self, ctx: &Context, args: PayDepositArgs) -> Result<String, ToolError> {
        let id = &args.booking_id;
        let answer = ctx
            .elicit_url(
                "A 20 EUR deposit confirms your booking.",
                format!("https://pay.example.com/deposit/{id}"),
                format!("deposit-{id}"),
            )
            .await?;
        Ok(if answer.is_accepted() {
            "Complete the payment in your browser.".to_string()
        } else {
            "No deposit taken. The booking expires in one hour.".to_string()
        })
    }

    async fn confirm_deposit(
        &self,
        ctx: &Context,
        args: ConfirmDepositArgs,
    ) -> Result<String, ToolError> {
        ctx.elicitation_complete(format!("deposit-{}", args.booking_id))
            .await?;
        Ok(format!("Deposit received for booking {}.", args.booking_id))
    }
}
