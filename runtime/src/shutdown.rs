//! [`Shutdown`]: the end of a server's sessions and streams, and the drain before it (calls in
//! flight counted, new work refused, the calls still running aborted past the drain's
//! timeout). The HTTP front, the wrapper every request runs in (`operations`) and the
//! command line share one handle.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::Duration,
};

use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use tokio::sync::Notify;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// Ends an HTTP server's sessions and open streams: a legacy client's GET stream would
/// otherwise keep its connection, and so a graceful shutdown, waiting for ever. Give it to
/// [`RouterOptions::shutdown`](crate::RouterOptions::shutdown) and trigger it when the
/// application stops:
///
/// ```ignore
/// let shutdown = Shutdown::new();
/// let app = generated::router_with(state, RouterOptions::default().shutdown(&shutdown));
/// axum::serve(listener, app)
///     .with_graceful_shutdown(async move {
///         let _ = tokio::signal::ctrl_c().await;
///         shutdown.trigger();
///     })
///     .await?;
/// ```
///
/// Clones are the same handle.
///
/// Before it is triggered, a server can drain ([`Shutdown::drain`]): `/readyz` answers 503,
/// new calls and sessions are refused, and the calls already in flight (and the requests that
/// continue them: a legacy elicitation's answer, a 2026-07-28 retry with `requestState`) are
/// served until they end or the drain's timeout aborts them.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    /// rmcp's config, for its `cancellation_token` (the handle rmcp's service watches): rmcp
    /// does not re-export the token's crate, so the token is kept where rmcp puts it.
    rmcp: StreamableHttpServerConfig,
    /// The drain's state, shared by every clone.
    drain: Arc<Drain>,
}

/// What [`Shutdown`]'s clones share about the drain.
#[derive(Debug, Default)]
struct Drain {
    /// Set by [`Shutdown::begin_drain`]; never cleared.
    draining: AtomicBool,
    /// Calls admitted and not yet ended ([`InFlight`] guards alive).
    in_flight: AtomicUsize,
    /// HTTP requests handed to rmcp whose answer is not yet built ([`Answering`] guards alive):
    /// a call's answer reaches its response after the call ended, and must before the trigger
    /// (rmcp answers a 2026-07-28 request still waiting then with a 500).
    answering: AtomicUsize,
    /// Notified whenever `in_flight` or `answering` drops to zero.
    idle: Notify,
    /// Cancelled when the drain's timeout passed: the calls still running end at once.
    abort: CancellationToken,
}

/// One admitted call: counted in [`Shutdown::in_flight`] until dropped.
#[derive(Debug)]
pub(crate) struct InFlight(Arc<Drain>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// One HTTP request whose answer rmcp is building: the drain triggers only once none is left.
#[derive(Debug)]
pub(crate) struct Answering(Arc<Drain>);

impl Drop for Answering {
    fn drop(&mut self) {
        if self.0.answering.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Shutdown {
    /// A handle not yet triggered.
    pub fn new() -> Self {
        Shutdown::default()
    }

    /// Closes every session and stream of the servers built with this handle; they take no
    /// new requests.
    pub fn trigger(&self) {
        self.rmcp.cancellation_token.cancel();
    }

    /// Whether [`Shutdown::trigger`] was called.
    pub fn is_triggered(&self) -> bool {
        self.rmcp.cancellation_token.is_cancelled()
    }

    /// The token rmcp's Streamable HTTP service watches ([`Shutdown::trigger`] cancels it).
    pub(crate) fn cancellation_token(&self) -> CancellationToken {
        self.rmcp.cancellation_token.clone()
    }

    /// Resolves once [`Shutdown::trigger`] is called.
    pub fn triggered(&self) -> impl Future<Output = ()> + Send + 'static {
        self.rmcp.cancellation_token.clone().cancelled_owned()
    }

    /// Starts draining: `/readyz` answers 503 and new calls and sessions are refused from now
    /// on; the calls in flight go on.
    pub fn begin_drain(&self) {
        self.drain.draining.store(true, Ordering::Release);
    }

    /// Whether [`Shutdown::begin_drain`] (or [`Shutdown::drain`]) was called.
    pub fn is_draining(&self) -> bool {
        self.drain.draining.load(Ordering::Acquire)
    }

    /// The calls in flight now.
    pub fn in_flight(&self) -> usize {
        self.drain.in_flight.load(Ordering::Acquire)
    }

    /// Drains: [`Shutdown::begin_drain`], then waits until no call is in flight or `timeout`
    /// passed; past it, aborts the calls still running (each is answered with an `isError`
    /// result saying the server shut down) and waits up to one more second for their answers;
    /// then [`Shutdown::trigger`]s.
    pub async fn drain(&self, timeout: Duration) {
        self.begin_drain();
        if tokio::time::timeout(timeout, self.idle()).await.is_err() {
            self.drain.abort.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(1), self.idle()).await;
        }
        self.trigger();
    }

    /// Resolves when no call is in flight and no HTTP answer is being built.
    async fn idle(&self) {
        loop {
            let notified = self.drain.idle.notified();
            if self.in_flight() == 0 && self.drain.answering.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Counts an HTTP request handed to rmcp until its answer is built (the guard dropped).
    pub(crate) fn answering(&self) -> Answering {
        self.drain.answering.fetch_add(1, Ordering::AcqRel);
        Answering(Arc::clone(&self.drain))
    }

    /// Admits a request: `None` while draining unless it `continues_call` (it belongs to a call
    /// already in flight), else the guard that counts it in flight.
    pub(crate) fn admit(&self, continues_call: bool) -> Option<InFlight> {
        self.drain.in_flight.fetch_add(1, Ordering::AcqRel);
        let guard = InFlight(Arc::clone(&self.drain));
        (continues_call || !self.is_draining()).then_some(guard)
    }

    /// Resolves when the drain's timeout passed and the calls still running must end.
    pub(crate) fn aborted(&self) -> WaitForCancellationFutureOwned {
        self.drain.abort.clone().cancelled_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// Idle at once; past the timeout the abort fires, the calls end, and the handle is
    /// triggered.
    #[tokio::test]
    async fn a_drain_waits_for_the_calls_in_flight_then_aborts_them() {
        let shutdown = Shutdown::new();
        let start = Instant::now();
        shutdown.drain(Duration::from_secs(10)).await;
        assert!(start.elapsed() < Duration::from_millis(100));
        assert!(shutdown.is_triggered());

        // A call that ends by itself within the timeout.
        let shutdown = Shutdown::new();
        let call = shutdown.admit(false).expect("admitted before the drain");
        assert_eq!(shutdown.in_flight(), 1);
        let start = Instant::now();
        let ends = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            drop(call);
        });
        let draining = shutdown.clone();
        let drained = tokio::spawn(async move { draining.drain(Duration::from_secs(10)).await });
        while !shutdown.is_draining() {
            tokio::task::yield_now().await;
        }
        assert!(!shutdown.is_triggered());
        assert!(shutdown.admit(false).is_none(), "new work is refused");
        assert_eq!(shutdown.in_flight(), 1, "a refusal is not counted");
        let retry = shutdown.admit(true).expect("a continuation is admitted");
        assert_eq!(shutdown.in_flight(), 2);
        drop(retry);
        drained.await.unwrap();
        ends.await.unwrap();
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(2),
            "{took:?}"
        );
        assert!(shutdown.is_triggered());

        // A call that would run for ever: aborted at the timeout.
        let shutdown = Shutdown::new();
        let call = shutdown.admit(false).expect("admitted before the drain");
        let aborted = shutdown.aborted();
        let start = Instant::now();
        let runs = tokio::spawn(async move {
            aborted.await;
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(call);
        });
        shutdown.drain(Duration::from_millis(200)).await;
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(220) && took < Duration::from_secs(1),
            "{took:?}"
        );
        runs.await.unwrap();
        assert_eq!(shutdown.in_flight(), 0);
        assert!(shutdown.is_triggered());

        // An HTTP answer still being built holds the trigger, not the count of calls.
        let shutdown = Shutdown::new();
        let answer = shutdown.answering();
        assert_eq!(shutdown.in_flight(), 0);
        let start = Instant::now();
        let built = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            drop(answer);
        });
        shutdown.drain(Duration::from_secs(10)).await;
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(100) && took < Duration::from_secs(2),
            "{took:?}"
        );
        built.await.unwrap();
        assert!(shutdown.is_triggered());
    }
}
