//! The chat-turn benchmark of `bench/chat.sh` (docs/benchmarks.md, "Chat turn"): the whole
//! `katari chat bench -m hi` process against the `llm` CLI (and `aichat` when installed) on the
//! same FAKE OpenAI-compatible server, and the latency each adds between the server's first
//! streamed chunk and the first byte on its stdout.
//!
//! Two fakes, both on 127.0.0.1 and neither a model:
//! - whole turns use `katari_tests::fake_llm::FakeLlm`, which answers at once with `ok` streamed
//!   in small chunks (every reply says `"model": "fake"`);
//! - the first-byte measurement uses [`FirstByteFake`] below: it sends the response head at
//!   once, waits [`HEAD_GAP`], notes the instant and writes the first SSE chunk (`Hello`), holds
//!   the rest for [`HOLD`], then finishes the reply. The client's stdout is a pipe read by a
//!   thread of this process that notes the instant of the first byte; both instants come from the
//!   same monotonic clock.
//!
//! Prints Markdown tables on stdout; timings, never assertions (a wrong reply shows as a WARNING
//! line and the process still exits 0).
//!
//! Usage: `cargo bench -p katari --bench chat -- [--runs N] [--first-byte-runs N]
//! [--katari PATH] [--llm PATH] [--aichat PATH] [--curl PATH]`. Peers default to
//! `.peers/bench-llm/bin/llm`, `.peers/aichat/bin/aichat` and `curl` on `PATH`, each left out
//! when missing. `--serve SECONDS` only runs the fake that answers at once and prints its base
//! URL, for profiling a turn by hand.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use katari_tests::fake_llm::FakeLlm;

#[path = "common.rs"]
mod common;

use common::{Args, absolute, fmt_ms, median, ms, on_path, sorted, unknown};

/// The response head goes out at once; the first chunk this long after it.
const HEAD_GAP: Duration = Duration::from_millis(30);
/// How long the rest of the reply is held after the first chunk.
const HOLD: Duration = Duration::from_millis(60);

struct Opts {
    runs: usize,
    first_byte_runs: usize,
    warmup: usize,
    katari: PathBuf,
    llm: Option<PathBuf>,
    aichat: Option<PathBuf>,
    curl: Option<PathBuf>,
    /// Only serve the fake for this many seconds, printing its base URL (for profiling).
    serve: Option<u64>,
}

fn repo_root() -> PathBuf {
    // host/ is this package; the repository is its parent.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn existing(path: PathBuf) -> Option<PathBuf> {
    path.is_file().then_some(path)
}

fn parse_opts() -> Opts {
    let peers =
        std::env::var_os("KATARI_PEERS").map_or_else(|| repo_root().join(".peers"), PathBuf::from);
    let mut opts = Opts {
        runs: 30,
        first_byte_runs: 30,
        warmup: 2,
        katari: PathBuf::from(env!("CARGO_BIN_EXE_katari")),
        llm: existing(peers.join("bench-llm/bin/llm")),
        aichat: existing(peers.join("aichat/bin/aichat")),
        curl: on_path("curl"),
        serve: None,
    };
    let mut args = Args::new();
    while let Some(arg) = args.next_arg() {
        match arg.as_str() {
            "--runs" => opts.runs = args.count(&arg),
            "--first-byte-runs" => opts.first_byte_runs = args.count(&arg),
            "--warmup" => opts.warmup = args.value(&arg).parse().unwrap_or(2),
            "--katari" => opts.katari = absolute(args.value(&arg)),
            "--llm" => opts.llm = Some(absolute(args.value(&arg))),
            "--aichat" => opts.aichat = Some(absolute(args.value(&arg))),
            "--curl" => opts.curl = Some(absolute(args.value(&arg))),
            "--no-llm" => opts.llm = None,
            "--no-aichat" => opts.aichat = None,
            "--no-curl" => opts.curl = None,
            "--serve" => opts.serve = Some(args.value(&arg).parse().unwrap_or(600)),
            other => unknown(other),
        }
    }
    opts
}

/// One client, ready to be spawned against a base URL.
struct Client {
    /// Row label in the tables.
    label: &'static str,
    /// The command line as its user would type it (for the table).
    shown: String,
    /// Whether its stdout must be exactly the reply and a newline.
    checks_reply: bool,
    make: Box<dyn Fn() -> Command>,
}

/// Homes of the clients (configuration naming the fake's URL), kept until the end.
struct Homes {
    _dirs: Vec<tempfile::TempDir>,
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn clients(opts: &Opts, base_url: &str, homes: &mut Homes) -> Vec<Client> {
    let mut out = Vec::new();

    // katari with its home on the disk like the peers', and the same again with the home on a
    // tmpfs (a diagnostic row: there `fsync` costs nothing, so the difference is what the
    // database's syncs cost on this disk).
    let tmpfs = Path::new("/dev/shm");
    let katari_homes = [(
        "katari",
        tempfile::tempdir().expect("a temporary KATARI_HOME"),
    )]
    .into_iter()
    .chain(
        tmpfs
            .is_dir()
            .then(|| tempfile::tempdir_in(tmpfs).ok())
            .flatten()
            .map(|home| ("katari, home on tmpfs (no fsync cost)", home)),
    );
    for (label, home) in katari_homes {
        write(
            &home.path().join("config.toml"),
            &format!(
                "# A FAKE OpenAI-compatible server (bench/chat.rs), not a model.\n\
                 [llm.fake]\nkind = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"fake-model\"\n\n\
                 [agent.bench]\nllm = \"fake\"\nsystem_prompt = \"You are a benchmark.\"\n"
            ),
        );
        let (katari, dir) = (opts.katari.clone(), home.path().to_path_buf());
        out.push(Client {
            label,
            shown: "katari chat bench -m hi".into(),
            checks_reply: true,
            make: Box::new(move || {
                let mut c = Command::new(&katari);
                c.args(["chat", "bench", "-m", "hi"])
                    .current_dir(&dir)
                    .env("KATARI_HOME", &dir)
                    .env("USER", "bench")
                    .env_remove("OPENAI_API_KEY");
                c
            }),
        });
        homes._dirs.push(home);
    }

    if let Some(llm) = &opts.llm {
        let home = tempfile::tempdir().expect("a temporary LLM_USER_PATH");
        write(
            &home.path().join("extra-openai-models.yaml"),
            &format!(
                "# A FAKE OpenAI-compatible server (bench/chat.rs), not a model.\n\
                 - model_id: fake\n  model_name: fake-model\n  api_base: \"{base_url}\"\n"
            ),
        );
        let (llm, dir) = (llm.clone(), home.path().to_path_buf());
        out.push(Client {
            label: "llm",
            shown: "llm -m fake hi".into(),
            checks_reply: true,
            make: Box::new(move || {
                let mut c = Command::new(&llm);
                c.args(["-m", "fake", "hi"])
                    .current_dir(&dir)
                    .env("LLM_USER_PATH", &dir)
                    .env_remove("OPENAI_API_KEY");
                c
            }),
        });
        homes._dirs.push(home);
    }

    if let Some(aichat) = &opts.aichat {
        let home = tempfile::tempdir().expect("a temporary AICHAT_CONFIG_DIR");
        write(
            &home.path().join("config.yaml"),
            &format!(
                "# A FAKE OpenAI-compatible server (bench/chat.rs), not a model.\n\
                 model: fake:fake-model\nstream: true\nsave: false\nhighlight: false\n\
                 clients:\n  - type: openai-compatible\n    name: fake\n    api_base: \"{base_url}\"\n\
                 \x20   models:\n      - name: fake-model\n"
            ),
        );
        let (aichat, dir) = (aichat.clone(), home.path().to_path_buf());
        out.push(Client {
            label: "aichat",
            shown: "aichat hi".into(),
            checks_reply: true,
            make: Box::new(move || {
                let mut c = Command::new(&aichat);
                c.arg("hi")
                    .current_dir(&dir)
                    .env("AICHAT_CONFIG_DIR", &dir)
                    .env_remove("OPENAI_API_KEY");
                c
            }),
        });
        homes._dirs.push(home);
    }

    if let Some(curl) = &opts.curl {
        let (curl, url) = (curl.clone(), format!("{base_url}/chat/completions"));
        out.push(Client {
            label: "curl (floor)",
            shown: "curl -sN -d '{…\"stream\":true}' URL".into(),
            checks_reply: false,
            make: Box::new(move || {
                let mut c = Command::new(&curl);
                c.args([
                    "-sN",
                    "-H",
                    "Content-Type: application/json",
                    "-d",
                    r#"{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
                    &url,
                ]);
                c
            }),
        });
    }
    out
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Runs one whole turn; returns the wall time, or why the run does not count.
fn whole_turn(client: &Client, expected: &str) -> Result<Duration, String> {
    let mut command = (client.make)();
    command.stdin(Stdio::null());
    let start = Instant::now();
    let output = command
        .output()
        .map_err(|e| format!("cannot run {}: {e}", client.label))?;
    let wall = start.elapsed();
    if !output.status.success() {
        return Err(format!(
            "{} exited with {}: {}",
            client.label,
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    if client.checks_reply && output.stdout != expected.as_bytes() {
        return Err(format!(
            "{} printed {:?}, not {expected:?}",
            client.label,
            String::from_utf8_lossy(&output.stdout)
        ));
    }
    Ok(wall)
}

// ---------------------------------------------------------------------------------------------
// The first-byte fake.

/// A FAKE OpenAI-compatible server for the first-byte measurement: every chat-completions
/// request gets the head at once, then after [`HEAD_GAP`] the first SSE chunk (`Hello`, its
/// sending instant noted), then after [`HOLD`] the rest (` world`, finish, usage, `[DONE]`).
struct FirstByteFake {
    addr: SocketAddr,
    sent: Arc<Mutex<Vec<Instant>>>,
    stop: Arc<AtomicBool>,
}

impl FirstByteFake {
    fn start() -> FirstByteFake {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the first-byte fake");
        let addr = listener
            .local_addr()
            .expect("the first-byte fake's address");
        let sent = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_sent, thread_stop) = (sent.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if thread_stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let sent = thread_sent.clone();
                std::thread::spawn(move || {
                    // A client that went away mid-answer is its own problem.
                    let _ = answer(stream, &sent);
                });
            }
        });
        FirstByteFake { addr, sent, stop }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn last_sent(&self) -> Option<Instant> {
        self.sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .last()
            .copied()
    }

    fn clear(&self) {
        self.sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

impl Drop for FirstByteFake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

fn chunk(out: &mut TcpStream, data: &str) -> std::io::Result<()> {
    let event = format!("data: {data}\n\n");
    out.write_all(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes())?;
    out.flush()
}

fn delta(content: &str, role: bool) -> String {
    let delta = if role {
        serde_json::json!({ "role": "assistant", "content": content })
    } else {
        serde_json::json!({ "content": content })
    };
    serde_json::json!({
        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
        "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": null }],
    })
    .to_string()
}

fn answer(stream: TcpStream, sent: &Mutex<Vec<Instant>>) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let is_chat = line.starts_with("POST ") && line.contains("/chat/completions");
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 {
            break;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut out = stream;
    if !is_chat {
        let body =
            r#"{"error":{"message":"the first-byte fake has no such route","type":"not_found"}}"#;
        return out.write_all(
            format!(
                "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    }
    out.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
          Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
    )?;
    out.flush()?;
    std::thread::sleep(HEAD_GAP);
    let first = delta("Hello", true);
    let at = Instant::now();
    chunk(&mut out, &first)?;
    sent.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(at);
    std::thread::sleep(HOLD);
    chunk(&mut out, &delta(" world", false))?;
    let finish = serde_json::json!({
        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
        "choices": [{ "index": 0, "delta": {}, "logprobs": null, "finish_reason": "stop" }],
    });
    chunk(&mut out, &finish.to_string())?;
    let usage = serde_json::json!({
        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
        "choices": [], "usage": { "prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12 },
    });
    chunk(&mut out, &usage.to_string())?;
    chunk(&mut out, "[DONE]")?;
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

/// One streamed turn against the first-byte fake: the time from the first chunk's sending to
/// the first byte on the client's stdout.
fn first_byte(client: &Client, fake: &FirstByteFake) -> Result<Duration, String> {
    fake.clear();
    let mut child = (client.make)()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", client.label))?;
    let mut stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        let mut first = None;
        let mut all = Vec::new();
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    first.get_or_insert_with(Instant::now);
                    all.extend_from_slice(&buf[..n]);
                }
            }
        }
        (first, all)
    });
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    let status = child
        .wait()
        .map_err(|e| format!("wait for {}: {e}", client.label))?;
    let (first, all) = reader
        .join()
        .map_err(|_| "the stdout reader panicked".to_string())?;
    if !status.success() {
        return Err(format!(
            "{} exited with {status}: {}",
            client.label,
            stderr.trim()
        ));
    }
    if client.checks_reply && all != b"Hello world\n" {
        return Err(format!(
            "{} printed {:?}, not \"Hello world\\n\"",
            client.label,
            String::from_utf8_lossy(&all)
        ));
    }
    let sent = fake
        .last_sent()
        .ok_or_else(|| format!("{} sent no chat request", client.label))?;
    let first = first.ok_or_else(|| format!("{} printed nothing", client.label))?;
    first.checked_duration_since(sent).ok_or_else(|| {
        format!(
            "{} printed before the first chunk was sent: {:?}",
            client.label,
            String::from_utf8_lossy(&all)
        )
    })
}

// ---------------------------------------------------------------------------------------------

fn main() {
    let opts = parse_opts();
    if let Some(seconds) = opts.serve {
        // For profiling by hand: the fake that answers at once, for this long.
        let fake = FakeLlm::start();
        println!("{}", fake.base_url());
        std::thread::sleep(Duration::from_secs(seconds));
        return;
    }
    let mut homes = Homes { _dirs: Vec::new() };

    // (a)–(c): whole turns against FakeLlm, which answers at once.
    let fake = FakeLlm::start();
    let turn_clients = clients(&opts, &fake.base_url(), &mut homes);
    let mut walls: Vec<Vec<f64>> = vec![Vec::new(); turn_clients.len()];
    let mut warnings = Vec::new();
    for round in 0..opts.warmup + opts.runs {
        for (i, client) in turn_clients.iter().enumerate() {
            match whole_turn(client, "ok\n") {
                Ok(wall) if round >= opts.warmup => walls[i].push(ms(wall)),
                Ok(_) => {}
                Err(e) => warnings.push(e),
            }
        }
    }
    // Start-up floor: katari's own cheapest command, no server, no database.
    let mut version = Vec::new();
    for round in 0..opts.warmup + opts.runs {
        let start = Instant::now();
        let ok = Command::new(&opts.katari)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok && round >= opts.warmup {
            version.push(ms(start.elapsed()));
        }
    }
    drop(fake);

    // (d): first byte, against the fake that holds the rest of the reply.
    let slow = FirstByteFake::start();
    let fb_clients = clients(&opts, &slow.base_url(), &mut homes);
    let mut firsts: Vec<Vec<f64>> = vec![Vec::new(); fb_clients.len()];
    for round in 0..opts.warmup + opts.first_byte_runs {
        for (i, client) in fb_clients.iter().enumerate() {
            match first_byte(client, &slow) {
                Ok(d) if round >= opts.warmup => firsts[i].push(ms(d)),
                Ok(_) => {}
                Err(e) => warnings.push(e),
            }
        }
    }

    let walls: Vec<Vec<f64>> = walls.into_iter().map(sorted).collect();
    let firsts: Vec<Vec<f64>> = firsts.into_iter().map(sorted).collect();
    let version = sorted(version);
    let katari_median = median(&walls[0]);
    let katari_first = median(&firsts[0]);

    println!(
        "Whole process, one streamed turn against a fake that answers at once ({} runs per client after {} warm-up rounds, clients alternating):",
        opts.runs, opts.warmup
    );
    println!();
    println!(
        "| client | command | median ms | p90 ms | min ms | runs | client / katari (median) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (client, w) in turn_clients.iter().zip(&walls) {
        println!(
            "| {} | `{}` | {} | {} | {} | {} | {} |",
            client.label,
            client.shown,
            fmt_ms(median(w)),
            fmt_ms(percentile(w, 90.0)),
            fmt_ms(w.first().copied().unwrap_or(f64::NAN)),
            w.len(),
            if client.label == "katari" {
                "1.00×".to_string()
            } else {
                format!("{:.2}×", median(w) / katari_median)
            }
        );
    }
    println!(
        "| katari (start-up floor) | `katari --version` | {} | {} | {} | {} | {:.2}× |",
        fmt_ms(median(&version)),
        fmt_ms(percentile(&version, 90.0)),
        fmt_ms(version.first().copied().unwrap_or(f64::NAN)),
        version.len(),
        median(&version) / katari_median
    );
    println!();
    println!(
        "First byte: time from the fake's sending of the first SSE chunk to the first byte on the client's stdout (pipe), {} runs per client after {} warm-up rounds:",
        opts.first_byte_runs, opts.warmup
    );
    println!();
    println!("| client | median ms | p90 ms | min ms | runs | client / katari (median) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (client, f) in fb_clients.iter().zip(&firsts) {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            client.label,
            fmt_ms(median(f)),
            fmt_ms(percentile(f, 90.0)),
            fmt_ms(f.first().copied().unwrap_or(f64::NAN)),
            f.len(),
            if client.label == "katari" {
                "1.00×".to_string()
            } else {
                format!("{:.1}×", median(f) / katari_first)
            }
        );
    }
    println!();
    let llm = turn_clients
        .iter()
        .position(|c| c.label == "llm")
        .map(|i| median(&walls[i]));
    let verdict = |ok: bool| if ok { "met" } else { "missed" };
    println!(
        "Targets: whole process {} ms (< 20 ms: {}){}; first byte {} ms (< 2 ms: {}).",
        fmt_ms(katari_median),
        verdict(katari_median < 20.0),
        llm.map_or_else(String::new, |l| format!(
            ", `llm` / katari {:.1}× (≥ 10×: {})",
            l / katari_median,
            verdict(l / katari_median >= 10.0)
        )),
        fmt_ms(katari_first),
        verdict(katari_first < 2.0),
    );
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for w in warnings {
        *seen.entry(w).or_default() += 1;
    }
    for (w, n) in seen {
        println!();
        println!("WARNING ({n}×): {w}");
    }
}
