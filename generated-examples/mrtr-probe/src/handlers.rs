//! The Probe's behaviour (user-owned: mcpgen adds stubs here when the spec grows).
//!
//! Every resolver and every tool, prompt and resource body counts its runs (`runs` reports them),
//! so tests can tell what ran.

use std::{collections::HashMap, sync::Mutex};

use crate::generated::types::{
    Color, ItemVars, LabelArgs, MakeArgs, NameItArguments, PaintArgs, RunsArgs, SetMoodArgs, Size,
    TintArguments,
};
use crate::generated::{
    Ask, Context, CreateMessageResult, PromptMessage, Prompts, Resolvers, ResourceBody, Resources,
    SamplingMessage, ToolError, Tools, sampled_text, user_text,
};

/// The mood the size question mentions, and how often each resolver and body ran.
pub struct Probe {
    mood: Mutex<String>,
    runs: Mutex<HashMap<&'static str, u64>>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            mood: Mutex::new("calm".to_string()),
            runs: Mutex::new(HashMap::new()),
        }
    }
}

impl Probe {
    fn count(&self, what: &'static str) {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        *runs.entry(what).or_default() += 1;
    }

    fn mood(&self) -> String {
        self.mood.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Resolvers for Probe {
    async fn ask_color(&self, _ctx: &Context, item: &str) -> Result<Ask<Color>, ToolError> {
        self.count("ask_color");
        Ok(Ask::elicit(format!("Which color for the {item}?")))
    }

    async fn ask_size(&self, _ctx: &Context, item: &str) -> Result<Ask<Size>, ToolError> {
        self.count("ask_size");
        let mood = self.mood();
        Ok(Ask::elicit(format!(
            "Which size for the {item}? (mood: {mood})"
        )))
    }

    async fn describe(
        &self,
        _ctx: &Context,
        item: &str,
        color: &Color,
    ) -> Result<Ask<CreateMessageResult>, ToolError> {
        self.count("describe");
        let prompt = format!("Describe a {} {item} in one line.", color.color);
        Ok(Ask::sample(vec![SamplingMessage::user_text(prompt)], 40))
    }

    async fn shout(&self, _ctx: &Context, item: &str) -> Result<String, ToolError> {
        self.count("shout");
        Ok(item.to_uppercase())
    }
}

impl Tools for Probe {
    async fn make(
        &self,
        _ctx: &Context,
        args: MakeArgs,
        color: Color,
        size: Size,
        blurb: CreateMessageResult,
    ) -> Result<String, ToolError> {
        self.count("tool:make");
        let blurb = sampled_text(&blurb).unwrap_or("(no words)");
        Ok(format!(
            "Made a size-{} {} {}: {blurb}",
            size.size, color.color, args.item
        ))
    }

    async fn paint(
        &self,
        _ctx: &Context,
        args: PaintArgs,
        color: Color,
    ) -> Result<String, ToolError> {
        self.count("tool:paint");
        Ok(format!("Painted the {} {}.", args.item, color.color))
    }

    async fn set_mood(&self, _ctx: &Context, args: SetMoodArgs) -> Result<String, ToolError> {
        self.count("tool:set_mood");
        *self.mood.lock().unwrap_or_else(|e| e.into_inner()) = args.mood.clone();
        Ok(format!("Mood is now {}.", args.mood))
    }

    async fn runs(&self, _ctx: &Context, args: RunsArgs) -> Result<String, ToolError> {
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        let count = runs
            .iter()
            .find(|(name, _)| **name == args.resolver)
            .map_or(0, |(_, n)| *n);
        Ok(count.to_string())
    }

    async fn label(
        &self,
        _ctx: &Context,
        args: LabelArgs,
        loud: String,
    ) -> Result<String, ToolError> {
        self.count("tool:label");
        Ok(format!("Label for the {}: {loud}", args.item))
    }
}

impl Prompts for Probe {
    async fn tint(
        &self,
        _ctx: &Context,
        args: TintArguments,
        color: Color,
    ) -> Result<Vec<PromptMessage>, ToolError> {
        self.count("prompt:tint");
        Ok(vec![user_text(format!(
            "Imagine a {} {}.",
            color.color, args.item
        ))])
    }

    async fn name_it(
        &self,
        _ctx: &Context,
        args: NameItArguments,
    ) -> Result<Vec<PromptMessage>, ToolError> {
        self.count("prompt:name_it");
        Ok(vec![user_text(format!("Name the {}.", args.item))])
    }
}

impl Resources for Probe {
    async fn read_mood(&self, _ctx: &Context) -> Result<ResourceBody, ToolError> {
        self.count("resource:mood");
        Ok(ResourceBody::text(self.mood()))
    }

    async fn read_item(
        &self,
        _ctx: &Context,
        _uri: &str,
        vars: ItemVars,
    ) -> Result<ResourceBody, ToolError> {
        self.count("resource:item");
        Ok(ResourceBody::text(format!(
            "A note about the {}.",
            vars.item
        )))
    }
}
