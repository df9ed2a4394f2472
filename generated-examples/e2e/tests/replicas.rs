//! Scale-out: three instances of a generated server behind a real load balancer (nginx from
//! Debian, started here on a loopback port) configured by the nginx block of the fleet
//! example's README ("Running more than one replica"), its ports replaced. A call that needs
//! several rounds completes when its rounds land on different instances that share
//! `MCP_REQUEST_STATE_KEYS` (requests without a session id go to the least busy instance:
//! one after the other, round the three), and fails with `-32602 Invalid or expired
//! requestState` when their keys differ. Three fleet replicas (`MCP_REPLICA`): a legacy session
//! reaches the replica its id names, and once that replica is gone a backup answers 404 to
//! every request of the session, `DELETE` included (the Python SDK runs the whole section:
//! peers/tests/python/test_replicas.py).
//!
//! nginx runs as a single process (`master_process off`), so killing it leaves nothing behind
//! (`common::Nginx`, which finds or installs it).
#![allow(deprecated)]

mod common;

use std::{path::PathBuf, time::Duration};

use common::{Nginx, Session, TestClient, binary, spawn_http_with};
use serde_json::json;
use tokio::process::Child;

const KEY_A: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci1vbmUtMzItYnl0ZXMhIQ==";
const KEY_B: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci10d28tMzItYnl0ZXMhIQ==";
const KEY_C: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci10aHJlZS0zMi1ieXRlcyE=";

/// The `nginx` block of the fleet example's README ("Running more than one replica"), with the
/// replicas r1, r2, r3 on `ports` and nginx listening on `listen`.
fn readme_nginx_block(ports: &[u16], listen: u16) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fleet/README.md");
    let readme = std::fs::read_to_string(&path).expect("the fleet example's README");
    let section = &readme[readme
        .find("\n## Running more than one replica\n")
        .expect("the README's replica section")..];
    let start = section.find("\n```nginx\n").expect("its nginx block") + "\n```nginx\n".len();
    let end = start + section[start..].find("\n```\n").expect("the block's end") + 1;
    let mut block = section[start..end].to_string();
    let addresses = [("127.0.0.1:8001", ports[0]), ("127.0.0.1:8002", ports[1])];
    let addresses = addresses
        .into_iter()
        .chain([("127.0.0.1:8003", ports[2]), ("127.0.0.1:8080", listen)]);
    for (old, new) in addresses {
        assert!(block.contains(old), "the README's nginx block has no {old}");
        block = block.replace(old, &format!("127.0.0.1:{new}"));
    }
    block
}

/// Instances of an example behind one nginx.
struct Cluster {
    dir: PathBuf,
    port: u16,
    nginx: Child,
    instances: Vec<Child>,
    ports: Vec<u16>,
}

impl Cluster {
    /// Three instances, each with its entry of `keys` as `MCP_REQUEST_STATE_KEYS`, behind the
    /// fleet README's nginx block: requests without a session id (every 2026-07-28 one) go to
    /// the least busy instance, so one after the other they go round the three in turn.
    async fn start(server: &str, keys: [&str; 3], tag: &str) -> Cluster {
        let envs = keys.map(|key| vec![("MCP_REQUEST_STATE_KEYS", key)]);
        Cluster::start_with(server, &envs, tag).await
    }

    /// Three fleet replicas (`MCP_REPLICA` r1, r2, r3) behind the nginx block of the fleet
    /// example's README.
    async fn start_fleet(tag: &str) -> Cluster {
        let envs = ["r1", "r2", "r3"]
            .map(|name| vec![("MCP_REPLICA", name), ("MCP_REQUEST_STATE_KEYS", KEY_A)]);
        Cluster::start_with("fleet", &envs, tag).await
    }

    /// Starts one instance per entry of `envs` (its environment) and nginx with the README's
    /// block for them.
    async fn start_with(server: &str, envs: &[Vec<(&str, &str)>; 3], tag: &str) -> Cluster {
        let dir =
            std::env::temp_dir().join(format!("mcpgen-replicas-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let exe = binary(server);
        let mut instances = Vec::new();
        let mut ports = Vec::new();
        for (i, env) in envs.iter().enumerate() {
            let log = dir.join(format!("instance-{i}.log"));
            let (child, port) = spawn_http_with(&exe, env, "debug", Some(&log)).await;
            instances.push(child);
            ports.push(port);
        }
        let nginx = Nginx::start(&dir, |listen| readme_nginx_block(&ports, listen)).await;
        Cluster {
            dir,
            port: nginx.port,
            nginx: nginx.child,
            instances,
            ports,
        }
    }

    fn uri(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The instances' logs.
    fn logs(&self) -> Vec<String> {
        (0..self.instances.len())
            .map(|i| {
                std::fs::read_to_string(self.dir.join(format!("instance-{i}.log")))
                    .unwrap_or_default()
            })
            .collect()
    }

    async fn stop(mut self) {
        let _ = self.nginx.kill().await;
        for child in &mut self.instances {
            let _ = child.kill().await;
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn count(log: &str, needle: &str) -> usize {
    log.lines().filter(|l| l.contains(needle)).count()
}

/// Per instance, the rounds it issued and the rounds it resumed, sorted.
fn rounds(logs: &[String]) -> Vec<(usize, usize)> {
    let mut rounds: Vec<(usize, usize)> = logs
        .iter()
        .map(|log| (count(log, ISSUED), count(log, RESUMED)))
        .collect();
    rounds.sort();
    rounds
}

const ISSUED: &str = "input_required: asking the client";
const RESUMED: &str = "requestState accepted";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_cross_instances_with_a_shared_key() {
    tokio::time::timeout(Duration::from_secs(300), async {
        let cluster = Cluster::start("mrtr-probe", [KEY_A; 3], "shared").await;
        let client = TestClient::full()
            .accept(json!({"color": "red"}))
            .accept(json!({"size": 2}))
            .sample("A red kite.");
        let session = Session::modern_at(&cluster.uri(), client.clone()).await;
        // Three requests (two input_required rounds and the final one) after the discovery,
        // round the three instances: every round continues on another instance.
        assert_eq!(
            session.text("make", json!({"item": "kite"})).await,
            "Made a size-2 red kite: A red kite."
        );
        assert_eq!(client.asked().len(), 3);
        let logs = cluster.logs();
        // The first round issued on one instance, resumed on a second that issued the next,
        // resumed on the third.
        assert_eq!(
            rounds(&logs),
            [(0, 1), (1, 0), (1, 1)],
            "{}",
            logs.join("\n---\n")
        );
        // The balancer really went round (its access log names the upstream of each request).
        // (nginx logs a request when its response stream ends: wait for the last one.)
        let access_log = cluster.dir.join("access.log");
        let read = || std::fs::read_to_string(&access_log).unwrap_or_default();
        common::eventually(|| read().lines().count() >= 4).await;
        let access = read();
        let upstreams: Vec<&str> = access.lines().filter_map(|l| l.split('|').next()).collect();
        // nginx logs a request when its response ends, so the log's order is not the order
        // of dispatch when responses overlap; the counts show the balancing (the instance
        // logs above show that every round continued on another instance): the discovery and
        // three rounds.
        let mut per_instance: Vec<usize> = cluster
            .ports
            .iter()
            .map(|p| {
                let address = format!("127.0.0.1:{p}");
                upstreams.iter().filter(|u| **u == address).count()
            })
            .collect();
        per_instance.sort();
        assert_eq!(per_instance, [1, 1, 2], "round the instances: {access}");
        session.close().await;
        // The same with the bookshop's two-round call.
        cluster.stop().await;
        let cluster = Cluster::start("bookshop", [KEY_A; 3], "bookshop").await;
        let client = TestClient::full().accept(json!({"confirm": true}));
        let session = Session::modern_at(&cluster.uri(), client.clone()).await;
        assert_eq!(
            session
                .text("order_book", json!({"title": "Neuromancer"}))
                .await,
            "Backordered 'Neuromancer'; it ships in 2-3 weeks."
        );
        // One round issued on one instance and resumed on another.
        let logs = cluster.logs();
        assert_eq!(
            rounds(&logs),
            [(0, 0), (0, 1), (1, 0)],
            "{}",
            logs.join("\n---\n")
        );
        session.close().await;
        cluster.stop().await;
    })
    .await
    .expect("replica test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_fail_across_instances_with_different_keys() {
    tokio::time::timeout(Duration::from_secs(300), async {
        let cluster = Cluster::start("bookshop", [KEY_A, KEY_B, KEY_C], "different").await;
        let client = TestClient::full().accept(json!({"confirm": true}));
        let session = Session::modern_at(&cluster.uri(), client.clone()).await;
        let error = session
            .protocol_error("order_book", json!({"title": "Neuromancer"}))
            .await;
        assert_eq!(error.code.0, -32602);
        assert_eq!(error.message, "Invalid or expired requestState");
        assert_eq!(error.data, Some(json!({"reason": "invalid_request_state"})));
        let logs = cluster.logs().concat();
        assert_eq!(count(&logs, ISSUED), 1, "{logs}");
        assert_eq!(
            count(
                &logs,
                "rejected requestState: token sealed with an unknown key"
            ),
            1,
            "{logs}"
        );
        session.close().await;
        cluster.stop().await;
    })
    .await
    .expect("replica test timed out");
}

/// A legacy request through nginx: (status, body).
async fn legacy(
    http: &reqwest::Client,
    uri: &str,
    method: reqwest::Method,
    session: Option<&str>,
    body: &str,
) -> (u16, String) {
    let mut request = http
        .request(method, uri)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(id) = session {
        request = request
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let response = request.send().await.expect("send");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

/// The JSON-RPC message of an answer: the body itself, or its event stream's last message.
fn message(body: &str) -> serde_json::Value {
    if body.starts_with('{') {
        return serde_json::from_str(body).expect("JSON");
    }
    body.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no message in {body:?}"))
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1.0.0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// `write_note` number `n` in a session: the request and the answer's text.
fn write_note(n: usize) -> (String, String) {
    (
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"write_note","arguments":{{"id":"{n}","text":"note {n}"}}}}}}"#
        ),
        format!("Wrote notes://{n} (6 characters)."),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_replica_died_gets_404_from_a_backup() {
    // (As the tests above, the first to call `binary` builds the examples within its time.)
    tokio::time::timeout(Duration::from_secs(300), async {
        let mut cluster = Cluster::start_fleet("dead-replica").await;
        common::tls_provider();
        let http = reqwest::Client::new();
        let uri = cluster.uri();
        // Three sessions, one after the other: the initializes go round the replicas.
        let mut sessions = Vec::new();
        for _ in 0..3 {
            let response = http
                .post(&uri)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(INITIALIZE)
                .send()
                .await
                .expect("send");
            assert_eq!(response.status().as_u16(), 200);
            let id = response
                .headers()
                .get("mcp-session-id")
                .expect("Mcp-Session-Id")
                .to_str()
                .unwrap()
                .to_string();
            let body = response.text().await.expect("body");
            assert_eq!(message(&body)["result"]["serverInfo"]["name"], "Fleet");
            let (status, body) =
                legacy(&http, &uri, reqwest::Method::POST, Some(&id), INITIALIZED).await;
            assert_eq!(status, 202, "{body}");
            sessions.push(id);
        }
        sessions.sort();
        let names: Vec<&str> = sessions
            .iter()
            .map(|s| s.split_once('.').expect("a replica's id").0)
            .collect();
        assert_eq!(names, ["r1", "r2", "r3"], "{sessions:?}");
        for (n, id) in sessions.iter().enumerate() {
            let (request, text) = write_note(n);
            let (status, body) =
                legacy(&http, &uri, reqwest::Method::POST, Some(id), &request).await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(
                message(&body)["result"]["content"][0]["text"],
                text.as_str()
            );
        }
        // r2 dies: its session's requests reach a backup, which does not hold it.
        let _ = cluster.instances[1].kill().await;
        let _ = cluster.instances[1].wait().await;
        let r2 = &sessions[1];
        let (request, _) = write_note(7);
        for (method, body) in [
            (reqwest::Method::POST, request.as_str()),
            (reqwest::Method::GET, ""),
            (reqwest::Method::DELETE, ""),
        ] {
            let answer = legacy(&http, &uri, method.clone(), Some(r2), body).await;
            assert_eq!(
                answer,
                (404, "Not Found: Session not found".to_string()),
                "{method}"
            );
        }
        // The other replicas' sessions go on.
        for n in [0, 2] {
            let (request, text) = write_note(n);
            let (status, body) = legacy(
                &http,
                &uri,
                reqwest::Method::POST,
                Some(&sessions[n]),
                &request,
            )
            .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(
                message(&body)["result"]["content"][0]["text"],
                text.as_str()
            );
        }
        // nginx's access log: every request of a session went to its replica; r2's last three
        // tried r2, then a backup.
        // (nginx writes a line once it has sent the answer: the client may have it first.)
        let access_log = cluster.dir.join("access.log");
        let read = || std::fs::read_to_string(&access_log).unwrap_or_default();
        // Three initializes, three initialized, three writes, r2's three, two writes.
        common::eventually(|| read().lines().count() >= 14).await;
        let access = read();
        assert_eq!(access.lines().count(), 14, "{access}");
        let p2 = format!("127.0.0.1:{}", cluster.ports[1]);
        for (n, id) in sessions.iter().enumerate() {
            let own = format!("127.0.0.1:{}", cluster.ports[n]);
            let lines: Vec<Vec<&str>> = access
                .lines()
                .map(|l| l.split('|').collect::<Vec<_>>())
                .filter(|f| f[3] == id.as_str())
                .collect();
            if n == 1 {
                assert_eq!(lines.len(), 5, "{access}");
                assert!(
                    lines[..2].iter().all(|f| f[0] == p2 && f[1] != "404"),
                    "{access}"
                );
                for f in &lines[2..] {
                    let tried: Vec<&str> = f[0].split(", ").collect();
                    assert_eq!(tried.len(), 2, "{access}");
                    assert_eq!(tried[0], p2, "{access}");
                    assert_ne!(tried[1], p2, "{access}");
                    assert_eq!(f[1], "404", "{access}");
                }
            } else {
                assert_eq!(lines.len(), 3, "{access}");
                assert!(lines.iter().all(|f| f[0] == own), "{access}");
            }
        }
        cluster.stop().await;
    })
    .await
    .expect("replica test timed out");
}
