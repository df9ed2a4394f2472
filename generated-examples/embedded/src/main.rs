//! An axum application that embeds the `Conformance` MCP server (user-owned: mcpgen wrote this
//! file once; this one was rewritten by hand to show embedding).
//!
//! The application has routes of its own (`GET /` and `GET /healthz`) and merges
//! `generated::router(state)`, which serves MCP at `/mcp` with the defaults of
//! `serve --transport http` (loopback `Host`/`Origin` only, both protocol eras, sessions).
//!
//! It serves the conformance spec and handlers (copies of `../conformance/spec.json` and
//! `../conformance/src/handlers.rs`) so that the official conformance suite and the Python and
//! TypeScript peers can check the embedded server against the same fixtures as the standalone
//! one (`peers/run.sh` runs them against both).
//!
//! ```sh
//! cargo run -p embedded -- --bind 127.0.0.1:8080      # or EMBEDDED_BIND=127.0.0.1:8080
//! ```
//!
//! It stops on Ctrl-C or SIGTERM: the [`generated::Shutdown`] handle ends the MCP sessions and
//! their open streams, so that axum's graceful shutdown does not wait for a client's GET stream.

use std::net::SocketAddr;

// The generated code and the handlers are the crate's library (`src/lib.rs`).
use embedded::{generated, handlers};

use axum::{Router, routing::get};
use clap::Parser;

/// Every request allocates and frees many small values: mimalloc serves them faster than the
/// system allocator (remove this and the `mimalloc` dependency to use the system one).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Command line of the application.
#[derive(Debug, Parser)]
#[command(about = "An axum application with the Conformance MCP server at /mcp")]
struct Cli {
    /// Address to listen on (default: `$EMBEDDED_BIND`, else 127.0.0.1:8000).
    #[arg(long)]
    bind: Option<SocketAddr>,
    /// Log level for stderr (error, warn, info, debug, trace).
    #[arg(long, default_value = "warn")]
    log_level: tracing::Level,
}

/// The application: its own routes, and the MCP server at `/mcp`, whose sessions and streams
/// end when `shutdown` is triggered. The bind address is also an allowed `Host` (loopback names
/// always are), as `serve --transport http --bind` allows it.
fn app(bind: SocketAddr, shutdown: &generated::Shutdown) -> Router {
    let mut options = generated::RouterOptions::default().shutdown(shutdown);
    if !bind.ip().is_unspecified() {
        options = options.allow_host(bind.ip().to_string());
    }
    Router::new()
        .route(
            "/",
            get(|| async { "An axum application; MCP is served at /mcp.\n" }),
        )
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(generated::router_with(
            handlers::Conformance::default(),
            options,
        ))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(cli.log_level)
        .init();
    let bind = match cli.bind {
        Some(bind) => bind,
        None => match std::env::var("EMBEDDED_BIND")
            .as_deref()
            .unwrap_or("127.0.0.1:8000")
            .parse()
        {
            Ok(bind) => bind,
            Err(e) => {
                tracing::error!("EMBEDDED_BIND: {e}");
                return std::process::ExitCode::FAILURE;
            }
        },
    };
    let listener = match tokio::net::TcpListener::bind(bind).await {
        Ok(listener) => listener,
        Err(e) => {
            tracing::error!("cannot listen on {bind}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let shutdown = generated::Shutdown::new();
    let app = app(bind, &shutdown);
    tracing::info!("serving http://{bind}/ (MCP at /mcp)");
    let stopped = async move {
        stop_signal().await;
        shutdown.trigger();
    };
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(stopped)
        .await
    {
        tracing::error!("the server failed: {e}");
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
