//! The behaviour of the `Stress` server: one method per resolver and per tool.
//!
//! mcpgen wrote this file once and never overwrites it; `mcpgen generate` appends stubs for
//! tools and resolvers added to the spec. Each stub answers "not implemented" until you write it.

use crate::generated::types;
use crate::generated::{
    Ask, ContentBlock, Context, CreateMessageResult, ListRootsResult, Outcome, Resolvers,
    ToolError, Tools,
};

/// Server-wide state, shared by every call (add fields: configuration, pools, ...).
#[derive(Debug, Default)]
pub struct Stress {}
impl Resolvers for Stress {
    async fn base(&self, _ctx: &Context, _account: &str) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("base"))
    }

    async fn side_1(&self, _ctx: &Context, _up: &str) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("side_1"))
    }

    async fn level_1(&self, _ctx: &Context, _up: &str, _side: &i64) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("level_1"))
    }

    async fn side_2(&self, _ctx: &Context, _up: &str) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("side_2"))
    }

    async fn level_2(&self, _ctx: &Context, _up: &str, _side: &i64) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("level_2"))
    }

    async fn side_3(&self, _ctx: &Context, _up: &str) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("side_3"))
    }

    async fn level_3(&self, _ctx: &Context, _up: &str, _side: &i64) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("level_3"))
    }

    async fn side_4(&self, _ctx: &Context, _up: &str) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("side_4"))
    }

    async fn level_4(&self, _ctx: &Context, _up: &str, _side: &i64) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("level_4"))
    }

    async fn side_5(&self, _ctx: &Context, _up: &str) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("side_5"))
    }

    async fn level_5(&self, _ctx: &Context, _up: &str, _side: &i64) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("level_5"))
    }

    async fn side_6(&self, _ctx: &Context, _up: &str) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("side_6"))
    }

    async fn level_6(&self, _ctx: &Context, _up: &str, _side: &i64) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("level_6"))
    }

    async fn side_7(&self, _ctx: &Context, _up: &str) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("side_7"))
    }

    async fn level_7(&self, _ctx: &Context, _up: &str, _side: &i64) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("level_7"))
    }

    async fn side_8(&self, _ctx: &Context, _up: &str) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("side_8"))
    }

    async fn level_8(&self, _ctx: &Context, _up: &str, _side: &i64) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("level_8"))
    }

    async fn side_9(&self, _ctx: &Context, _up: &str) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("side_9"))
    }

    async fn level_9(&self, _ctx: &Context, _up: &str, _side: &i64) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("level_9"))
    }

    async fn side_10(&self, _ctx: &Context, _up: &str) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("side_10"))
    }

    async fn level_10(&self, _ctx: &Context, _up: &str, _side: &i64) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("level_10"))
    }

    async fn customer(
        &self,
        _ctx: &Context,
        _account: &str,
        _verbose: bool,
    ) -> Result<types::Customer, ToolError> {
        Err(ToolError::not_implemented("customer"))
    }

    async fn quote(
        &self,
        _ctx: &Context,
        _customer: &types::Customer,
        _amount: f64,
    ) -> Result<types::Quote, ToolError> {
        Err(ToolError::not_implemented("quote"))
    }

    async fn confirm(
        &self,
        _ctx: &Context,
        _quote: &types::Quote,
    ) -> Result<Ask<types::Confirm>, ToolError> {
        Err(ToolError::not_implemented("confirm"))
    }

    async fn after_confirm(
        &self,
        _ctx: &Context,
        _confirm: &types::Confirm,
    ) -> Result<bool, ToolError> {
        Err(ToolError::not_implemented("after_confirm"))
    }

    async fn advice(
        &self,
        _ctx: &Context,
        _topic: &str,
    ) -> Result<Ask<CreateMessageResult>, ToolError> {
        Err(ToolError::not_implemented("advice"))
    }

    async fn workspace(&self, _ctx: &Context) -> Result<Ask<ListRootsResult>, ToolError> {
        Err(ToolError::not_implemented("workspace"))
    }

    async fn limit_of(
        &self,
        _ctx: &Context,
        _count: i64,
        _tags: &types::Tags,
    ) -> Result<i64, ToolError> {
        Err(ToolError::not_implemented("limit_of"))
    }

    async fn r#type(&self, _ctx: &Context, _match: &str) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("type"))
    }
}

impl Tools for Stress {
    async fn deep_01(
        &self,
        _ctx: &Context,
        _args: types::Deep01Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_01"))
    }

    async fn deep_02(
        &self,
        _ctx: &Context,
        _args: types::Deep02Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_02"))
    }

    async fn deep_03(
        &self,
        _ctx: &Context,
        _args: types::Deep03Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_03"))
    }

    async fn deep_04(
        &self,
        _ctx: &Context,
        _args: types::Deep04Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_04"))
    }

    async fn deep_05(
        &self,
        _ctx: &Context,
        _args: types::Deep05Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_05"))
    }

    async fn deep_06(
        &self,
        _ctx: &Context,
        _args: types::Deep06Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_06"))
    }

    async fn deep_07(
        &self,
        _ctx: &Context,
        _args: types::Deep07Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_07"))
    }

    async fn deep_08(
        &self,
        _ctx: &Context,
        _args: types::Deep08Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_08"))
    }

    async fn deep_09(
        &self,
        _ctx: &Context,
        _args: types::Deep09Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_09"))
    }

    async fn deep_10(
        &self,
        _ctx: &Context,
        _args: types::Deep10Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_10"))
    }

    async fn deep_11(
        &self,
        _ctx: &Context,
        _args: types::Deep11Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_11"))
    }

    async fn deep_12(
        &self,
        _ctx: &Context,
        _args: types::Deep12Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_12"))
    }

    async fn deep_13(
        &self,
        _ctx: &Context,
        _args: types::Deep13Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_13"))
    }

    async fn deep_14(
        &self,
        _ctx: &Context,
        _args: types::Deep14Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_14"))
    }

    async fn deep_15(
        &self,
        _ctx: &Context,
        _args: types::Deep15Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_15"))
    }

    async fn deep_16(
        &self,
        _ctx: &Context,
        _args: types::Deep16Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_16"))
    }

    async fn deep_17(
        &self,
        _ctx: &Context,
        _args: types::Deep17Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_17"))
    }

    async fn deep_18(
        &self,
        _ctx: &Context,
        _args: types::Deep18Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_18"))
    }

    async fn deep_19(
        &self,
        _ctx: &Context,
        _args: types::Deep19Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_19"))
    }

    async fn deep_20(
        &self,
        _ctx: &Context,
        _args: types::Deep20Args,
        _value: String,
    ) -> Result<String, ToolError> {
        Err(ToolError::not_implemented("deep_20"))
    }

    async fn checkout(
        &self,
        _ctx: &Context,
        _args: types::CheckoutArgs,
        _customer: types::Customer,
        _quote: types::Quote,
        _confirm: Outcome<types::Confirm>,
        _confirmed: bool,
        _advice: CreateMessageResult,
        _roots: ListRootsResult,
        _top: String,
        _quote_again: types::Quote,
    ) -> Result<types::Quote, ToolError> {
        Err(ToolError::not_implemented("checkout"))
    }

    async fn count_items(
        &self,
        _ctx: &Context,
        _args: types::CountItemsArgs,
        _limit: i64,
    ) -> Result<Vec<i64>, ToolError> {
        Err(ToolError::not_implemented("count.items"))
    }

    async fn count_more(
        &self,
        _ctx: &Context,
        _args: types::CountMoreArgs,
        _limit: i64,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Err(ToolError::not_implemented("count-more"))
    }

    async fn r#match(
        &self,
        _ctx: &Context,
        _args: ::serde_json::Map<String, ::serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Err(ToolError::not_implemented("match"))
    }

    async fn keyword_args(
        &self,
        _ctx: &Context,
        _args: types::KeywordArgsArgs,
        _kind: String,
    ) -> Result<types::KeywordArgsOutput, ToolError> {
        Err(ToolError::not_implemented("keyword_args"))
    }
}
