//! The Probe's behaviour (user-owned: mcpgen adds stubs here when the spec grows).

use std::{collections::HashMap, sync::Mutex};

use crate::generated::types::{Color, MakeArgs, PaintArgs, RunsArgs, SetMoodArgs, Size};
use crate::generated::{
    Ask, Context, CreateMessageResult, Resolvers, SamplingMessage, ToolError, Tools, sampled_text,
};

/// The mood the size question mentions, and how often each resolver ran.
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
    fn count(&self, resolver: &'static str) {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        *runs.entry(resolver).or_default() += 1;
    }
}

impl Resolvers for Probe {
    async fn ask_color(&self, _ctx: &Context, item: &str) -> Result<Ask<Color>, ToolError> {
        self.count("ask_color");
        Ok(Ask::elicit(format!("Which color for the {item}?")))
    }

    async fn ask_size(&self, _ctx: &Context, item: &str) -> Result<Ask<Size>, ToolError> {
        self.count("ask_size");
        let mood = self.mood.lock().unwrap_or_else(|e| e.into_inner()).clone();
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
        Ok(format!("Painted the {} {}.", args.item, color.color))
    }

    async fn set_mood(&self, _ctx: &Context, args: SetMoodArgs) -> Result<String, ToolError> {
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
}
