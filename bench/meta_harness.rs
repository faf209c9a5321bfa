//! Benchmarks of the meta-functions, recorded by `bench/meta.sh` in docs/benchmarks.md ("MCP
//! meta-functions"). They need the binary crate's own modules (the catalog, the search), which a
//! `[[bench]]` target cannot import, so `host/src/meta/mod.rs` compiles this file as its child
//! module `bench`, in the test build only: one test that does nothing unless `KATARI_BENCH_META`
//! names the Markdown file to write; `cargo test` passes it at once. Figures,
//! never timed assertions: only broken set-ups (a missing peer, a wrong entry count) panic.
//!
//! - `search`: `mcp_search_S` over a catalog of 10,000 entries served by
//!   `tests/meta/paged_server.py` (tools, resources, templates, prompts), cached after one fetch:
//!   the whole call (`MetaServer::call`) and the ranking alone (`search::response`), per query.
//! - `catalog`: fetching the catalog of a server with 1,000 tools in pages of 50
//!   (`MetaServer::catalog`), the same 20 `tools/list` requests through katari's MCP client
//!   alone, and the same requests written by hand on the server's stdio (the server's own time
//!   plus the pipe), rounds interleaved.
//! - `tokens`: the prompt tokens the local LLM reports for the first request of
//!   `katari chat --project bench -m hi` with server-everything and the filesystem server offered
//!   as meta-functions, against the same request with every tool offered flat.
//!
//! `KATARI_BENCH_META_PARTS` (default `search,catalog,tokens`) picks the parts,
//! `KATARI_BENCH_META_ITERATIONS` the search rounds (default 30), `KATARI_BENCH_META_ROUNDS` the
//! catalog rounds (default 30), `KATARI_BIN` the katari binary of `tokens` (default
//! `target/release/katari`), `KATARI_BENCH_META_REQUESTS` a file to save the three requests of
//! `tokens` in.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use katari_chat::tools::Tools;
use katari_runtime::mcp::{ServerSpec, TransportSpec};
use katari_tests::fake_llm::FakeLlm;
use katari_tests::peers;
use serde_json::{Value, json};

use super::catalog::{self, Entry, Kind};
use super::search::{self, tokens};
use super::{MetaServer, MetaTools, Spill};
use crate::paths::Paths;

/// The targets of the issue.
const SEARCH_TARGET_MS: f64 = 2.0;
const CATALOG_TARGET_MS: f64 = 20.0;

fn block<F: Future>(f: F) -> F::Output {
    katari_runtime::reactor::runtime().block_on(f)
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Median and 90th percentile (nearest rank) of `samples`, in the samples' unit.
fn median_p90(samples: &[f64]) -> (f64, f64) {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = s.len();
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    let rank = ((0.9 * n as f64).ceil() as usize).clamp(1, n);
    (median, s[rank - 1])
}

/// The CPU time of this process so far, all its threads, in milliseconds (the first field of
/// each `/proc/self/task/*/schedstat`, nanoseconds on the CPU); `None` where there is no such file.
fn cpu_ms() -> Option<f64> {
    let mut total: u64 = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total as f64 / 1e6)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn met(ok: bool) -> &'static str {
    if ok { "yes" } else { "**no**" }
}

/// A temporary folder holding the katari folders of the in-process servers.
struct Home {
    dir: tempfile::TempDir,
    paths: Paths,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().expect("temporary folder");
        let paths = Paths {
            config: dir.path().to_path_buf(),
            data: dir.path().to_path_buf(),
            cache: dir.path().join("cache"),
        };
        Home { dir, paths }
    }

    /// A connected server running `command args` on stdio, named `name` (sessions are cached
    /// per name for the whole process).
    fn server(&self, name: &str, command: &str, args: &[String]) -> MetaServer {
        let spec = ServerSpec {
            name: name.to_string(),
            file: None,
            transport: TransportSpec::Stdio {
                command: command.to_string(),
                args: args.to_vec(),
                env: Vec::new(),
                cwd: None,
                stderr_log: None,
            },
            connect_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(120),
        };
        let server = MetaServer::new(
            spec,
            name,
            None,
            &self.paths,
            Spill::new(&self.paths.cache),
            Vec::new(),
        );
        if let Some(warning) = block(server.connect()) {
            panic!("cannot connect to the benchmark server {name}: {warning}");
        }
        server
    }
}

/// The arguments that run `tests/meta/paged_server.py` with `flags`.
fn paged_args(flags: &[&str]) -> Vec<String> {
    let script = peers::repo_root().join("tests/meta/paged_server.py");
    std::iter::once(script.display().to_string())
        .chain(flags.iter().map(|f| f.to_string()))
        .collect()
}

#[test]
fn meta_benchmarks() {
    let Some(out) = std::env::var_os("KATARI_BENCH_META") else {
        return;
    };
    let parts =
        std::env::var("KATARI_BENCH_META_PARTS").unwrap_or_else(|_| "search,catalog,tokens".into());
    let mut summary = String::from("| measurement | figure | target | met |\n|---|---|---|---|\n");
    let mut md = String::new();
    for part in parts.split(',').map(str::trim) {
        let (section, row) = match part {
            "search" => search_bench(),
            "catalog" => catalog_bench(),
            "tokens" => tokens_bench(),
            other => panic!("unknown part '{other}' in KATARI_BENCH_META_PARTS"),
        };
        summary.push_str(&row);
        md.push('\n');
        md.push_str(&section);
    }
    std::fs::write(&out, summary + &md)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", PathBuf::from(&out).display()));
}

// ---------------------------------------------------------------------------------------------
// 1. Search over 10,000 entries

/// The number of tokens of one entry's searchable fields (id, name, title, description, prompt
/// argument names).
fn document_tokens(entry: &Entry) -> usize {
    let mut text = vec![entry.id.as_str(), entry.name.as_str()];
    text.extend(entry.title.as_deref());
    text.extend(entry.description.as_deref());
    for a in entry.arguments.iter().flatten() {
        text.push(&a.name);
    }
    text.into_iter().map(|t| tokens(t).len()).sum()
}

/// The section's Markdown and its row of the summary table.
fn search_bench() -> (String, String) {
    let iterations = env_number("KATARI_BENCH_META_ITERATIONS", 30).max(1);
    let home = Home::new();
    let counts = [
        ("tools", 6000),
        ("resources", 2500),
        ("templates", 500),
        ("prompts", 1000),
    ];
    let mut flags: Vec<String> = Vec::new();
    for (kind, n) in counts {
        flags.push(format!("--{kind}"));
        flags.push(n.to_string());
    }
    flags.extend(["--page".to_string(), "500".to_string()]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = home.server(
        "bench_search",
        &peers::python_mcp().display().to_string(),
        &paged_args(&flags),
    );
    let function = "mcp_search_bench_search";
    let (catalog, _) = block(server.catalog(false)).expect("the catalog");
    assert_eq!(catalog.entries.len(), 10_000, "{:?}", catalog.unavailable);
    let tokens_total: usize = catalog.entries.iter().map(document_tokens).sum();

    let pick = |kind: Kind, nth: usize| -> String {
        catalog
            .entries
            .iter()
            .filter(|e| e.kind == kind)
            .nth(nth)
            .map(|e| e.name.clone())
            .expect("an entry of that kind")
    };
    let classes: Vec<(&str, Vec<String>)> = vec![
        (
            "exact names",
            vec![
                pick(Kind::Tool, 10),
                pick(Kind::Tool, 2500),
                pick(Kind::Tool, 5999),
                pick(Kind::Prompt, 500),
                pick(Kind::Template, 250),
            ],
        ),
        (
            "multi-word",
            [
                "create an invoice for a customer",
                "list open pull requests in a repository",
                "export dashboard metrics as CSV",
                "schedule a calendar event for the team",
                "refund a payment",
                "search tickets by label and priority",
                "restore a backup of the warehouse table",
                "summarize recent changes to a document",
            ]
            .map(String::from)
            .to_vec(),
        ),
        (
            "one word",
            ["invoice", "deployment", "webhook"]
                .map(String::from)
                .to_vec(),
        ),
        (
            "misses",
            [
                "kubernetes pod autoscaler",
                "photosynthesis",
                "zzqx quorble",
            ]
            .map(String::from)
            .to_vec(),
        ),
    ];

    // Sanity and warm-up: every query once through the function.
    for (_, queries) in &classes {
        for q in queries {
            let text = block(server.call(function, json!({"query": q}))).expect("a search");
            let v: Value = serde_json::from_str(&text).expect("search JSON");
            assert_eq!(v["total_items"], 10_000, "{v}");
        }
    }

    let mut call: Vec<Vec<f64>> = vec![Vec::new(); classes.len()];
    let mut core: Vec<Vec<f64>> = vec![Vec::new(); classes.len()];
    let mut results: Vec<usize> = vec![0; classes.len()];
    for round in 0..iterations {
        for (c, (_, queries)) in classes.iter().enumerate() {
            for q in queries {
                let start = Instant::now();
                let text = block(server.call(function, json!({"query": q}))).expect("a search");
                call[c].push(ms(start.elapsed()));
                let start = Instant::now();
                let index = catalog.index(|_| true);
                let v = search::response("bench_search", q, 8, &catalog, index).to_string();
                core[c].push(ms(start.elapsed()));
                if round == 0 {
                    let parsed: Value = serde_json::from_str(&text).expect("search JSON");
                    results[c] += parsed["results"].as_array().map_or(0, Vec::len);
                }
                std::hint::black_box(v);
            }
        }
    }
    // Building the index: what the first search after each fetch of the catalog adds.
    let mut build = Vec::new();
    for _ in 0..iterations.min(10) {
        let start = Instant::now();
        let index = search::Index::new(&catalog.entries, |_| true);
        build.push(ms(start.elapsed()));
        std::hint::black_box(index);
    }

    let mut md = String::from(
        "### Search over 10,000 entries\n\n\
         | queries | count | samples | results (mean) | `mcp_search_S` median ms | p90 ms | ranking alone median ms | p90 ms | target | met |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
    );
    let mut all_call = Vec::new();
    let mut all_core = Vec::new();
    for (c, (label, queries)) in classes.iter().enumerate() {
        let (cm, cp) = median_p90(&call[c]);
        let (rm, rp) = median_p90(&core[c]);
        md.push_str(&format!(
            "| {label} | {} | {} | {:.1} | {cm:.2} | {cp:.2} | {rm:.2} | {rp:.2} | < {SEARCH_TARGET_MS} ms | {} |\n",
            queries.len(),
            call[c].len(),
            results[c] as f64 / queries.len() as f64,
            met(cm < SEARCH_TARGET_MS),
        ));
        all_call.extend(&call[c]);
        all_core.extend(&core[c]);
    }
    let (cm, cp) = median_p90(&all_call);
    let (rm, rp) = median_p90(&all_core);
    let (bm, bp) = median_p90(&build);
    md.push_str(&format!(
        "| **all** | {} | {} | | **{cm:.2}** | {cp:.2} | {rm:.2} | {rp:.2} | < {SEARCH_TARGET_MS} ms | {} |\n\n",
        classes.iter().map(|(_, q)| q.len()).sum::<usize>(),
        all_call.len(),
        met(cm < SEARCH_TARGET_MS),
    ));
    md.push_str(&format!(
        "Catalog: {} tools, {} resources, {} templates, {} prompts ({} document tokens, {:.1} per entry). \
         Building the search index (tokenising every entry once; the first search after each fetch \
         of the catalog does it, the timings above are of later searches) takes {bm:.2} ms \
         (median of {}, p90 {bp:.2} ms).\n\n\
         Queries: exact names {:?}; multi-word {:?}; one word {:?}; misses {:?}.\n",
        counts[0].1,
        counts[1].1,
        counts[2].1,
        counts[3].1,
        tokens_total,
        tokens_total as f64 / 10_000.0,
        build.len(),
        classes[0].1,
        classes[1].1,
        classes[2].1,
        classes[3].1,
    ));
    server.close();
    drop(home);
    let row = format!(
        "| `mcp_search_S` over 10,000 entries: median per query (19 queries, {} samples) | {cm:.2} ms (p90 {cp:.2} ms) | < {SEARCH_TARGET_MS} ms | {} |\n",
        all_call.len(),
        met(cm < SEARCH_TARGET_MS),
    );
    (md, row)
}

// ---------------------------------------------------------------------------------------------
// 2. The catalog of a paginating server

/// A hand-written JSON-RPC client on a server's stdio: requests written as lines, replies read
/// as lines, the cursor found by a substring search (no JSON parsing), so that its time is the
/// server's own plus the pipe.
struct RawClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: u64,
}

impl RawClient {
    fn start(command: &str, args: &[String]) -> RawClient {
        let mut child = Command::new(command)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command}: {e}"));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut client = RawClient {
            child,
            stdin,
            stdout,
            id: 0,
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "katari-bench-raw", "version": "1"}}),
        );
        assert!(init.contains("\"result\""), "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: Value) -> String {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "the server closed its stdout");
            // Skip notifications (no id) the server may send.
            if line.contains(&format!("\"id\":{id}")) {
                return line;
            }
        }
    }

    /// Every page of `tools/list`: (pages, bytes).
    fn list_tools(&mut self) -> (usize, usize) {
        let mut cursor: Option<String> = None;
        let (mut pages, mut bytes) = (0, 0);
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let reply = self.request("tools/list", params);
            pages += 1;
            bytes += reply.len();
            cursor = next_cursor(&reply);
            if cursor.is_none() {
                return (pages, bytes);
            }
        }
    }
}

/// The `nextCursor` of a reply, found without parsing it.
fn next_cursor(reply: &str) -> Option<String> {
    const KEY: &str = "\"nextCursor\":\"";
    reply.rfind(KEY).and_then(|at| {
        let rest = &reply[at + KEY.len()..];
        rest.find('"').map(|end| rest[..end].to_string())
    })
}

/// Every page of `tools/list` through katari's MCP client (`MetaServer::raw`), without building
/// the catalog: the raw result texts.
fn client_pages(server: &MetaServer) -> Vec<String> {
    block(async {
        let mut params = serde_json::Map::new();
        let mut pages = Vec::new();
        loop {
            let reply = server.raw("tools/list", params).await.expect("tools/list");
            let next = next_cursor(&reply);
            pages.push(reply);
            match next {
                Some(c) => params = serde_json::Map::from_iter([("cursor".into(), json!(c))]),
                None => return pages,
            }
        }
    })
}

impl Drop for RawClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The section's Markdown and its row of the summary table.
fn catalog_bench() -> (String, String) {
    let rounds = env_number("KATARI_BENCH_META_ROUNDS", 30).max(1);
    let (tools, page) = (1000, 50);
    let python = peers::python_mcp().display().to_string();
    let args = paged_args(&["--tools", &tools.to_string(), "--page", &page.to_string()]);
    let home = Home::new();
    let server = home.server("bench_paged", &python, &args);
    let mut raw = RawClient::start(&python, &args);

    let (catalog, _) = block(server.catalog(true)).expect("the catalog");
    assert_eq!(catalog.entries.len(), tools, "{:?}", catalog.unavailable);
    let (pages, bytes) = raw.list_tools();
    assert_eq!(pages, tools / page);
    for _ in 0..3 {
        block(server.catalog(true)).expect("the catalog");
        raw.list_tools();
    }
    let texts = client_pages(&server);
    assert_eq!(texts.len(), pages);
    // Wall times, and this process's CPU time (katari's threads, not the server's), per fetch.
    let mut wall: [Vec<f64>; 3] = Default::default();
    let mut cpu: [Vec<f64>; 3] = Default::default();
    for round in 0..rounds {
        // Rotate which goes first, so none always follows the same other's work.
        for which in 0..3 {
            let kind = (which + round) % 3;
            let cpu_start = cpu_ms();
            let start = Instant::now();
            match kind {
                0 => {
                    let (c, _) = block(server.catalog(true)).expect("the catalog");
                    assert_eq!(c.entries.len(), tools);
                }
                1 => {
                    client_pages(&server);
                }
                _ => {
                    raw.list_tools();
                }
            }
            wall[kind].push(ms(start.elapsed()));
            if let (Some(a), Some(b)) = (cpu_start, cpu_ms()) {
                cpu[kind].push(b - a);
            }
        }
    }
    // The parse alone: the same replies made into catalog entries in-process.
    let mut parse = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        let mut entries = Vec::new();
        for text in &texts {
            catalog::page(Kind::Tool, text, &mut entries).expect("a page");
        }
        parse.push(ms(start.elapsed()));
        assert_eq!(entries.len(), tools);
    }
    let (qm, qp) = median_p90(&parse);
    let [katari, client, plain] = &wall;
    let cpu_median = |k: usize| -> String {
        if cpu[k].is_empty() {
            "–".into()
        } else {
            format!("{:.1}", median_p90(&cpu[k]).0)
        }
    };
    let (km, kp) = median_p90(katari);
    let (cm, cp) = median_p90(client);
    let (pm, pp) = median_p90(plain);
    let added = km - pm;
    let mut md = format!(
        "### Catalog of a paginating server\n\n\
         {tools} tools in pages of {page} ({pages} `tools/list` requests, {bytes} bytes of replies), \
         tests/meta/paged_server.py (Python SDK low-level `Server`) on stdio; {rounds} rounds, \
         interleaved.\n\n\
         | measurement | median ms | p90 ms | per page median ms | client CPU median ms |\n|---|---:|---:|---:|---:|\n\
         | katari: `MetaServer::catalog` (fetch, parse, catalog entries) | {km:.1} | {kp:.1} | {:.2} | {} |\n\
         | of which katari's MCP client: the same requests through `client::request_raw` | {cm:.1} | {cp:.1} | {:.2} | {} |\n\
         | of which parsing the replies into entries (`catalog::page`, in-process) | {qm:.1} | {qp:.1} | {:.2} | {qm:.1} |\n\
         | plain: the same requests by hand on stdio (server + pipe) | {pm:.1} | {pp:.1} | {:.2} | {} |\n\n\
         Client CPU: this process's CPU time during the fetch (all its threads; the server is \
         another process).\n\n",
        km / pages as f64,
        cpu_median(0),
        cm / pages as f64,
        cpu_median(1),
        qm / pages as f64,
        pm / pages as f64,
        cpu_median(2),
    );
    let cpu_added = match (cpu[0].is_empty(), cpu[2].is_empty()) {
        (false, false) => format!("{:.1} ms", median_p90(&cpu[0]).0 - median_p90(&cpu[2]).0),
        _ => "–".into(),
    };
    md.push_str(&format!(
        "| katari adds | wall: difference of medians | CPU: difference of medians | target | met (wall) |\n\
         |---|---:|---:|---|---|\n\
         | to {pages} requests | {added:.1} ms ({:.2} ms per page) | {cpu_added} | < {CATALOG_TARGET_MS} ms | {} |\n",
        added / pages as f64,
        met(added < CATALOG_TARGET_MS),
    ));
    server.close();
    drop(raw);
    drop(home);
    let row = format!(
        "| catalog of 1,000 tools in {pages} pages: time katari adds to the server's | {added:.1} ms wall ({cpu_added} CPU) | < {CATALOG_TARGET_MS} ms | {} |\n",
        met(added < CATALOG_TARGET_MS),
    );
    (md, row)
}

// ---------------------------------------------------------------------------------------------
// 3. Prompt tokens: meta-functions against flat tools

fn katari_bin() -> PathBuf {
    let bin = std::env::var_os("KATARI_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| peers::repo_root().join("target/release/katari"));
    assert!(
        bin.exists(),
        "{} is missing: cargo build --release -p katari",
        bin.display()
    );
    bin
}

/// Writes the chat home's `config.toml`: the LLM at `base_url`, project `bench` with both
/// servers.
fn write_config(home: &Path, base_url: &str, everything: &Path, files: &Path, notes: &Path) {
    let q = |p: &Path| serde_json::to_string(&p.display().to_string()).expect("path");
    let config = format!(
        "[llm.bench]\nkind = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"{}\"\n\n\
         [project.bench]\nllm = \"bench\"\nmcp_servers = [\"everything\", \"files\"]\n\n\
         [mcp.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n\
         [mcp.files]\ncommand = \"node\"\nargs = [{}, {}]\n",
        peers::LOCAL_LLM_MODEL,
        q(everything),
        q(files),
        q(notes),
    );
    std::fs::write(home.join("config.toml"), config).expect("config.toml");
}

fn chat_hi(home: &Path, extra: &[&str]) -> Value {
    let out = Command::new(katari_bin())
        .args(["--no-workspace", "chat", "--project", "bench"])
        .args(extra)
        .args(["-m", "hi", "--no-stream"])
        .current_dir(home)
        .env("KATARI_HOME", home)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run katari chat");
    assert_eq!(
        out.status.code(),
        Some(0),
        "katari chat failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// Sends `body` (made non-streaming, one token) to the local LLM; the usage it reports, or
/// the error it gave.
fn prompt_tokens(base_url: &str, body: &Value) -> Result<u64, String> {
    let mut body = body.clone();
    let o = body.as_object_mut().expect("a request object");
    o.insert("stream".into(), json!(false));
    o.remove("stream_options");
    o.remove("max_completion_tokens");
    o.insert("max_tokens".into(), json!(1));
    let url = format!("{base_url}/chat/completions");
    block(async move {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(600))
            .build()
            .map_err(|e| e.to_string())?;
        let reply = client
            .post(url)
            .json(&body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = reply.status();
        let text = reply.text().await.map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!("HTTP {status}: {text}"));
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        v["usage"]["prompt_tokens"]
            .as_u64()
            .ok_or_else(|| format!("no usage in {text}"))
    })
}

/// The section's Markdown and its row of the summary table.
fn tokens_bench() -> (String, String) {
    let npm = peers::peers_dir().join("npm/node_modules");
    let everything = peers::everything_entry(false);
    let files = npm.join("@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        files.exists(),
        "{} is missing: run tests/peers/install.sh",
        files.display()
    );
    let home = Home::new();
    let notes = home.dir.path().join("notes");
    std::fs::create_dir_all(&notes).expect("notes");
    std::fs::write(notes.join("todo.md"), "- water the plants\n").expect("a note");

    // katari's first request, captured by a fake LLM (it answers "ok").
    let fake = FakeLlm::start();
    write_config(
        home.dir.path(),
        &fake.base_url(),
        &everything,
        &files,
        &notes,
    );
    chat_hi(home.dir.path(), &[]);
    let katari_request = fake
        .requests()
        .into_iter()
        .next()
        .expect("katari's request");
    drop(fake);
    let meta_tools = katari_request["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();

    // The flat side: every tool of both servers as katari's client lists them, each as its own
    // function with its input schema, in katari's request format.
    let started = Home::new();
    let servers = vec![
        started.server(
            "everything",
            "node",
            &[everything.display().to_string(), "stdio".into()],
        ),
        started.server(
            "files",
            "node",
            &[files.display().to_string(), notes.display().to_string()],
        ),
    ];
    let in_process: Vec<String> = MetaTools::from_servers(servers.clone())
        .specs()
        .into_iter()
        .map(|s| s.name)
        .collect();
    let sent: Vec<&str> = meta_tools
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    let mut flat = Vec::new();
    let mut per_server = Vec::new();
    for server in &servers {
        let (catalog, _) = block(server.catalog(false)).expect("a catalog");
        let tools: Vec<&Entry> = catalog
            .entries
            .iter()
            .filter(|e| e.kind == Kind::Tool)
            .collect();
        per_server.push(format!("{} {}", server.name(), tools.len()));
        for e in tools {
            flat.push(json!({"type": "function", "function": {
                "name": e.raw_id,
                "description": e.description.clone().unwrap_or_default(),
                "parameters": e.input_schema.clone().unwrap_or_else(|| json!({"type": "object"})),
            }}));
        }
    }
    let messages: Vec<String> = katari_request["messages"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|m| {
                    let content = m["content"].as_str().unwrap_or("(parts)");
                    let shown: String = content.chars().take(60).collect();
                    format!("{} {:?}", m["role"].as_str().unwrap_or("?"), shown)
                })
                .collect()
        })
        .unwrap_or_default();
    let messages = messages.join("; ");
    // Server instructions go into `mcp_search_S`'s description (katari's side only).
    let instructions: Vec<String> = servers
        .iter()
        .filter_map(|s| {
            let text = s.handshake()?.instructions?;
            (!text.trim().is_empty()).then(|| format!("{} {} bytes", s.name(), text.len()))
        })
        .collect();
    for s in &servers {
        s.close();
    }
    let mut names: Vec<&str> = flat
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "tool names collide across the servers");

    let mut bare = katari_request.clone();
    if let Some(o) = bare.as_object_mut() {
        o.remove("tools");
        o.remove("tool_choice");
        o.remove("parallel_tool_calls");
    }
    let mut flat_request = katari_request.clone();
    flat_request["tools"] = Value::Array(flat.clone());

    if let Some(path) = std::env::var_os("KATARI_BENCH_META_REQUESTS") {
        let all = json!({"no_tools": bare, "katari": katari_request, "flat": flat_request});
        std::fs::write(&path, serde_json::to_string_pretty(&all).expect("JSON"))
            .expect("write the requests");
    }
    let llm = peers::start_local_llm();
    let base = llm.local_llm_base_url();
    let none = prompt_tokens(&base, &bare);
    let meta = prompt_tokens(&base, &katari_request);
    let flat_tokens = prompt_tokens(&base, &flat_request);
    // katari itself against the model: its reported usage (summed over the turn's rounds).
    write_config(home.dir.path(), &base, &everything, &files, &notes);
    let real = chat_hi(home.dir.path(), &["--temperature", "0", "--seed", "42"]);
    drop(llm);

    let json_bytes = |tools: &[Value]| -> usize {
        if tools.is_empty() {
            0
        } else {
            Value::Array(tools.to_vec()).to_string().len()
        }
    };
    let shown = |r: &Result<u64, String>| match r {
        Ok(n) => n.to_string(),
        Err(e) => format!("error: {}", e.chars().take(200).collect::<String>()),
    };
    let extra = |r: &Result<u64, String>| match (r, &none) {
        (Ok(n), Ok(base)) => (*n as i64 - *base as i64).to_string(),
        _ => "–".into(),
    };
    let mut md = format!(
        "### Prompt tokens: meta-functions against flat tools\n\n\
         The first request of `katari chat --project bench -m hi --no-stream` (project `bench`: \
         server-everything and server-filesystem on stdio, no scripts), captured from katari, then \
         sent to the local model ({}) with `max_tokens: 1`: as katari sends it, with its `tools` \
         replaced by every tool of both servers as its own function (name, description, input \
         schema, as katari's client lists them: {}), and without tools. Same messages in all \
         three.\n\n\
         | request | functions | `tools` JSON bytes | prompt_tokens | tokens for the tools |\n\
         |---|---:|---:|---:|---:|\n\
         | no tools | 0 | 0 | {} | – |\n\
         | katari: meta-functions | {} | {} | {} | {} |\n\
         | flat: every tool a function | {} | {} | {} | {} |\n\n",
        peers::LOCAL_LLM_MODEL,
        per_server.join(", "),
        shown(&none),
        meta_tools.len(),
        json_bytes(&meta_tools),
        shown(&meta),
        extra(&meta),
        flat.len(),
        json_bytes(&flat),
        shown(&flat_tokens),
        extra(&flat_tokens),
    );
    let row = match (&meta, &flat_tokens) {
        (Ok(m), Ok(f)) => format!(
            "| prompt tokens of a chat's first request (server-everything + server-filesystem): meta-functions against flat tools | {m} against {f} (flat {:.2}x) | fewer than flat | {} |\n",
            *f as f64 / *m as f64,
            met(m < f),
        ),
        _ => format!(
            "| prompt tokens of a chat's first request: meta-functions against flat tools | {} against {} | fewer than flat | – |\n",
            shown(&meta),
            shown(&flat_tokens),
        ),
    };
    if let (Ok(m), Ok(f)) = (&meta, &flat_tokens) {
        let ratio = *f as f64 / *m as f64;
        let tools_ratio = match &none {
            Ok(b) if m > b => format!(
                "; the tools alone: {:.1}x ({} against {} tokens)",
                (f - b) as f64 / (m - b) as f64,
                f - b,
                m - b
            ),
            _ => String::new(),
        };
        md.push_str(&format!(
            "Flat over meta: {ratio:.2}x the prompt tokens of the whole first request{tools_ratio}. \
             Fewer tokens with meta-functions: {}.\n\n",
            met(m < f)
        ));
    }
    md.push_str(&format!(
        "katari's `tools` include the servers' instructions ({}), which the flat request leaves \
         out; the messages (the same in all three): {}.\n\n\
         katari's functions: {} (in-process `MetaTools::specs()`: {}). katari's own run against \
         the model (`--temperature 0 --seed 42`): `usage.prompt_tokens` {} over the turn, {} tool \
         call(s), finish reason {}.\n",
        if instructions.is_empty() {
            "none".to_string()
        } else {
            instructions.join(", ")
        },
        messages,
        sent.join(", "),
        if in_process == sent {
            "the same".to_string()
        } else {
            in_process.join(", ")
        },
        real["usage"]["prompt_tokens"],
        real["tool_calls"].as_array().map_or(0, Vec::len),
        real["finish_reason"],
    ));
    (md, row)
}
