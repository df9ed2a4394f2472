//! The behaviour of the `Operations` server: tools that sleep, grind, fail and ask, and a count
//! of what happened to every call by its tag. The runtime's timeouts, concurrency limits,
//! cancellation, telemetry and drain are tested against it: a call whose future the runtime
//! dropped is counted `dropped` (by the [`Running`] guard), one that ran to its end `finished`,
//! and a `grind` whose blocking work saw the cancellation token `stopped_early`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::generated::types::{
    Confirm, GrindArgs, Item, NapArgs, QuoteArgs, Stats, StatsArgs, WorkArgs,
};
use crate::generated::{Ask, Context, Resolvers, ToolError, Tools};

/// How often `grind`'s blocking loop looks at the cancellation token.
const GRIND_STEP: Duration = Duration::from_millis(5);

/// The counts of one tag.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    started: i64,
    finished: i64,
    dropped: i64,
    stopped_early: i64,
}

/// The counts of every tag seen, shared with the guards and the blocking work.
type Tally = Arc<Mutex<HashMap<String, Counts>>>;

/// Server-wide state: the counts by tag.
#[derive(Debug, Default)]
pub struct Operations {
    tally: Tally,
}

impl Operations {
    /// Counts a call of `tag` as started; the guard counts it dropped unless [`Running::finish`]
    /// is called first.
    fn start(&self, tag: &str) -> Running {
        update(&self.tally, tag, |c| c.started += 1);
        Running {
            tally: Arc::clone(&self.tally),
            tag: tag.to_string(),
            finished: false,
        }
    }
}

/// Applies `change` to the counts of `tag` (a poisoned lock still holds valid counts).
fn update(tally: &Tally, tag: &str, change: impl FnOnce(&mut Counts)) {
    let mut tally = tally.lock().unwrap_or_else(PoisonError::into_inner);
    change(tally.entry(tag.to_string()).or_default());
}

/// A call of one tag in progress: dropped before [`Running::finish`], it counts `dropped`, which
/// is how the tests see that the runtime dropped the call's future rather than letting it end.
struct Running {
    tally: Tally,
    tag: String,
    finished: bool,
}

impl Running {
    /// Counts the call `finished`.
    fn finish(mut self) {
        self.finished = true;
        update(&self.tally, &self.tag, |c| c.finished += 1);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.finished {
            update(&self.tally, &self.tag, |c| c.dropped += 1);
        }
    }
}

/// `ms` as a duration (the schema keeps it within 0..=3600000).
fn millis(ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

impl Resolvers for Operations {
    async fn find_item(&self, _ctx: &Context, item: &str) -> Result<Item, ToolError> {
        if item.is_empty() {
            return Err(ToolError::new("name an item"));
        }
        // A price the tests can compute: one euro per character of the name.
        let cents = i64::try_from(item.chars().count())
            .map_err(ToolError::internal)?
            .saturating_mul(100);
        Ok(Item {
            name: item.to_string(),
            cents,
        })
    }

    async fn price(&self, _ctx: &Context, found: &Item) -> Result<i64, ToolError> {
        // 20 % tax, rounded down to the cent.
        Ok(found.cents.saturating_mul(6) / 5)
    }

    async fn confirm(
        &self,
        _ctx: &Context,
        item: &str,
        price: &i64,
    ) -> Result<Ask<Confirm>, ToolError> {
        Ok(Ask::elicit(format!("Buy {item} for {price} cents?")))
    }
}

impl Tools for Operations {
    async fn quote(
        &self,
        _ctx: &Context,
        _args: QuoteArgs,
        found: Item,
        price: i64,
        confirm: Confirm,
    ) -> Result<String, ToolError> {
        Ok(if confirm.ok {
            format!("Bought {} for {price} cents.", found.name)
        } else {
            format!("Did not buy {}.", found.name)
        })
    }

    async fn nap(&self, _ctx: &Context, args: NapArgs) -> Result<String, ToolError> {
        let running = self.start(&args.tag);
        tokio::time::sleep(millis(args.ms)).await;
        running.finish();
        Ok(format!("Slept {} ms.", args.ms))
    }

    async fn work(&self, _ctx: &Context, args: WorkArgs) -> Result<String, ToolError> {
        let running = self.start(&args.tag);
        tokio::time::sleep(millis(args.ms)).await;
        running.finish();
        Ok(format!("Worked {} ms.", args.ms))
    }

    async fn grind(&self, ctx: &Context, args: GrindArgs) -> Result<String, ToolError> {
        let running = self.start(&args.tag);
        // Blocking work on a thread of its own: the runtime can drop this future, but not stop
        // the thread, so the work watches the call's cancellation token itself.
        let token = ctx.cancellation_token();
        let (tally, tag, ms) = (Arc::clone(&self.tally), args.tag.clone(), args.ms);
        let work = tokio::task::spawn_blocking(move || {
            let end = Instant::now() + millis(ms);
            while Instant::now() < end {
                if token.is_cancelled() {
                    update(&tally, &tag, |c| c.stopped_early += 1);
                    return false;
                }
                std::thread::sleep(GRIND_STEP.min(end.saturating_duration_since(Instant::now())));
            }
            true
        });
        let completed = work.await.map_err(ToolError::internal)?;
        if !completed {
            // Dropped by `running`: the call was cancelled and nobody reads this answer.
            return Err(ToolError::new("cancelled"));
        }
        running.finish();
        Ok(format!("Ground {ms} ms."))
    }

    async fn fail(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<String, ToolError> {
        Err(ToolError::new("this tool always fails"))
    }

    async fn stats(&self, _ctx: &Context, args: StatsArgs) -> Result<Stats, ToolError> {
        let counts = {
            let tally = self.tally.lock().unwrap_or_else(PoisonError::into_inner);
            tally.get(&args.tag).copied().unwrap_or_default()
        };
        Ok(Stats {
            started: counts.started,
            finished: counts.finished,
            dropped: counts.dropped,
            stopped_early: counts.stopped_early,
        })
    }
}
