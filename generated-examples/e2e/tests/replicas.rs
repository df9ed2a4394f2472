//! Scale-out: several instances of a generated server behind a real load balancer (nginx from
//! Debian, started here with its own config on a loopback port, round-robin). A call that needs
//! several rounds completes when its rounds land on different instances that share
//! `MCP_REQUEST_STATE_KEYS`, and fails with `-32602 Invalid or expired requestState` when their
//! keys differ.
//!
//! nginx runs as a single process (`master_process off`), so killing it leaves nothing behind.
//! nginx is found on the PATH or in /usr/sbin (`scripts/setup-system.sh`, run by the test script,
//! installs it); when it is missing and the test runs as root, it is installed with
//! `apt-get install -y nginx-light` (bounded by `timeout`), one test at a time: two concurrent
//! apt-get runs fail on dpkg's lock.
#![allow(deprecated)]

mod common;

use std::{path::PathBuf, process::Command as StdCommand, time::Duration};

use common::{Session, TestClient, binary, free_port, spawn_http_with};
use serde_json::json;
use tokio::process::{Child, Command};

const KEY_A: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci1vbmUtMzItYnl0ZXMhIQ==";
const KEY_B: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci10d28tMzItYnl0ZXMhIQ==";

/// The nginx binary: found, or installed with apt-get when running as root.
fn nginx() -> PathBuf {
    let find = || {
        ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .or_else(|| {
                let out = StdCommand::new("sh")
                    .args(["-c", "command -v nginx"])
                    .output()
                    .ok()?;
                let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
                (!path.is_empty()).then(|| PathBuf::from(path))
            })
    };
    if let Some(path) = find() {
        return path;
    }
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = find() {
        return path;
    }
    let uid = StdCommand::new("id").arg("-u").output().expect("id -u");
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "nginx is not installed and this test is not running as root: install nginx-light"
    );
    let status = StdCommand::new("sh")
        .args([
            "-c",
            "export DEBIAN_FRONTEND=noninteractive; \
             timeout 300 apt-get install -y -q nginx-light >/dev/null 2>&1 || \
             (timeout 300 apt-get update -q >/dev/null 2>&1 && \
              timeout 300 apt-get install -y -q nginx-light >/dev/null 2>&1)",
        ])
        .status()
        .expect("run apt-get");
    assert!(status.success(), "apt-get install nginx-light failed");
    find().expect("nginx after apt-get install")
}

/// Instances of an example behind one nginx.
struct Cluster {
    dir: PathBuf,
    port: u16,
    nginx: Child,
    instances: Vec<Child>,
}

impl Cluster {
    /// Starts one instance per entry of `keys` (its `MCP_REQUEST_STATE_KEYS`) and nginx in
    /// front of them.
    async fn start(server: &str, keys: &[&str], tag: &str) -> Cluster {
        let dir =
            std::env::temp_dir().join(format!("mcpgen-replicas-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let exe = binary(server);
        let mut instances = Vec::new();
        let mut upstreams = String::new();
        for (i, key) in keys.iter().enumerate() {
            let log = dir.join(format!("instance-{i}.log"));
            let (child, port) = spawn_http_with(
                &exe,
                &[("MCP_REQUEST_STATE_KEYS", key)],
                "debug",
                Some(&log),
            )
            .await;
            instances.push(child);
            upstreams.push_str(&format!("        server 127.0.0.1:{port};\n"));
        }
        let nginx_bin = nginx();
        for attempt in 0..5 {
            let port = free_port();
            let conf = format!(
                "master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 64; }}
http {{
    log_format upstream '$upstream_addr $status';
    access_log {dir}/access.log upstream;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    upstream mcp {{
{upstreams}    }}
    server {{
        listen 127.0.0.1:{port};
        location /mcp {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Connection \"\";
            proxy_buffering off;
            proxy_read_timeout 30s;
        }}
    }}
}}
",
                dir = dir.display()
            );
            let conf_path = dir.join("nginx.conf");
            std::fs::write(&conf_path, conf).expect("write nginx.conf");
            let mut child = Command::new(&nginx_bin)
                .arg("-p")
                .arg(&dir)
                .arg("-c")
                .arg(&conf_path)
                .arg("-e")
                .arg(dir.join("error.log"))
                .args(["-g", "daemon off;"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("spawn nginx");
            for _ in 0..200 {
                if tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .is_ok()
                {
                    return Cluster {
                        dir,
                        port,
                        nginx: child,
                        instances,
                    };
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            let _ = child.kill().await;
            eprintln!(
                "nginx attempt {attempt} failed: {}",
                std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            );
        }
        panic!("nginx did not start");
    }

    fn uri(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("instance-{i}.log"))).unwrap_or_default()
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

const ISSUED: &str = "input_required: asking the client";
const RESUMED: &str = "requestState accepted";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_cross_instances_with_a_shared_key() {
    tokio::time::timeout(Duration::from_secs(300), async {
        let cluster = Cluster::start("mrtr-probe", &[KEY_A, KEY_A], "shared").await;
        let client = TestClient::full()
            .accept(json!({"color": "red"}))
            .accept(json!({"size": 2}))
            .sample("A red kite.");
        let session = Session::modern_at(&cluster.uri(), client.clone()).await;
        // Three requests (two input_required rounds and the final one), round-robin over two
        // instances: every round continues on the other instance.
        assert_eq!(
            session.text("make", json!({"item": "kite"})).await,
            "Made a size-2 red kite: A red kite."
        );
        assert_eq!(client.asked().len(), 3);
        let (a, b) = (cluster.log(0), cluster.log(1));
        // Both instances issued a round and both resumed one issued by the other.
        assert_eq!(count(&a, ISSUED) + count(&b, ISSUED), 2, "{a}\n---\n{b}");
        assert_eq!(count(&a, RESUMED) + count(&b, RESUMED), 2, "{a}\n---\n{b}");
        assert_eq!(count(&a, ISSUED), 1, "{a}\n---\n{b}");
        assert_eq!(count(&b, ISSUED), 1, "{a}\n---\n{b}");
        assert_eq!(count(&a, RESUMED), 1, "{a}\n---\n{b}");
        assert_eq!(count(&b, RESUMED), 1, "{a}\n---\n{b}");
        // The balancer really alternated (its access log names the upstream of each request).
        // (nginx logs a request when its response stream ends: wait for the last one.)
        let access_log = cluster.dir.join("access.log");
        let read = || std::fs::read_to_string(&access_log).unwrap_or_default();
        common::eventually(|| read().lines().count() >= 4).await;
        let access = read();
        let upstreams: Vec<&str> = access
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert!(upstreams.len() >= 4, "{access}");
        // nginx logs a request when its response ends, so the log's order is not the order
        // of dispatch when responses overlap; the counts show the balancing (the instance
        // logs above show that every round continued on the other instance).
        let first = upstreams.iter().filter(|u| **u == upstreams[0]).count();
        assert_eq!(first * 2, upstreams.len(), "round-robin: {access}");
        session.close().await;
        // The same with the bookshop's two-round call.
        cluster.stop().await;
        let cluster = Cluster::start("bookshop", &[KEY_A, KEY_A], "bookshop").await;
        let client = TestClient::full().accept(json!({"confirm": true}));
        let session = Session::modern_at(&cluster.uri(), client.clone()).await;
        assert_eq!(
            session
                .text("order_book", json!({"title": "Neuromancer"}))
                .await,
            "Backordered 'Neuromancer'; it ships in 2-3 weeks."
        );
        let (a, b) = (cluster.log(0), cluster.log(1));
        assert_eq!(
            (
                count(&a, ISSUED) + count(&b, ISSUED),
                count(&a, RESUMED) + count(&b, RESUMED)
            ),
            (1, 1)
        );
        assert_eq!(
            count(&a, ISSUED) + count(&a, RESUMED),
            1,
            "one round per instance: {a}\n---\n{b}"
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
        let cluster = Cluster::start("bookshop", &[KEY_A, KEY_B], "different").await;
        let client = TestClient::full().accept(json!({"confirm": true}));
        let session = Session::modern_at(&cluster.uri(), client.clone()).await;
        let error = session
            .protocol_error("order_book", json!({"title": "Neuromancer"}))
            .await;
        assert_eq!(error.code.0, -32602);
        assert_eq!(error.message, "Invalid or expired requestState");
        assert_eq!(error.data, Some(json!({"reason": "invalid_request_state"})));
        let logs = cluster.log(0) + &cluster.log(1);
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
