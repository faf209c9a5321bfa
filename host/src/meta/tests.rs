//! Live tests of the meta-functions (`host.md` §17 P01–P16) against real MCP servers started
//! here: server-everything (current, over stdio and Streamable HTTP), its paginating 2025.12.18
//! build `se-legacy`, a Python SDK server (`tests/meta/sdk_server.py`) and a hand-written fake
//! (`tests/meta/raw_server.py`) for what well-behaved servers never send. Each test uses server
//! names of its own: sessions are cached per name for the whole process.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use katari_chat::tools::{ErrorKind, ToolError, Tools};
use katari_tests::peers;
use serde_json::{Value, json};

use super::spill::{Spill, decode_blob};
use super::{MetaTools, catalog::Kind};
use crate::config::{Config, LoadOptions, load};
use crate::paths::Paths;

/// A temporary `KATARI_HOME` with a configuration written by the test: servers go to
/// `mcp.json` (whose names may hold spaces), anything else to `config.toml`.
struct Fixture {
    _dir: tempfile::TempDir,
    paths: Paths,
}

fn repo(relative: &str) -> String {
    peers::repo_root().join(relative).display().to_string()
}

/// An `mcp.json` entry (`"NAME": {...},`) running `command` with `args`.
fn stdio(name: &str, command: &str, args: &[&str]) -> String {
    format!(
        "{}: {},",
        json!(name),
        json!({"type": "stdio", "command": command, "args": args})
    )
}

/// The Python SDK test server over stdio, with extra flags.
fn sdk(name: &str, flags: &[&str]) -> String {
    let script = repo("tests/meta/sdk_server.py");
    let mut args = vec![script.as_str(), "stdio"];
    args.extend(flags);
    stdio(name, &peers::python_mcp().display().to_string(), &args)
}

/// The fake server, with extra flags.
fn raw(name: &str, flags: &[&str]) -> String {
    let script = repo("tests/meta/raw_server.py");
    let mut args = vec![script.as_str()];
    args.extend(flags);
    stdio(name, &peers::python_mcp().display().to_string(), &args)
}

/// server-everything over stdio: the current build, or the paginating legacy one.
fn everything(name: &str, legacy: bool) -> String {
    let entry = peers::everything_entry(legacy).display().to_string();
    stdio(name, "node", &[&entry, "stdio"])
}

fn http(name: &str, url: &str) -> String {
    format!("{}: {},", json!(name), json!({"type": "http", "url": url}))
}

fn block<F: Future>(f: F) -> F::Output {
    katari_runtime::reactor::runtime().block_on(f)
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        let paths = Paths {
            config: home.clone(),
            data: home.clone(),
            cache: home.join("cache"),
        };
        Fixture { _dir: dir, paths }
    }

    fn load(&self, servers: &str, toml: &str) -> Config {
        let mcp = format!(
            "{{\"mcpServers\": {{{}}}}}",
            servers.trim_end().trim_end_matches(',')
        );
        std::fs::write(self.paths.config.join("mcp.json"), mcp).expect("mcp.json");
        std::fs::write(self.paths.config.join("config.toml"), toml).expect("config");
        let opts = LoadOptions {
            paths: self.paths.clone(),
            cwd: self.paths.config.clone(),
            no_workspace: true,
            trust_workspace: false,
            env: &|_| None,
        };
        match load(&opts) {
            Ok(c) => c,
            Err(e) => panic!("bad test configuration:\n{}", e.render()),
        }
    }

    fn spill(&self) -> Spill {
        Spill::new(&self.paths.cache)
    }

    /// Connects every server of `servers` (`mcp.json` entries) and `toml`, in name order.
    fn connect_all(&self, servers: &str, toml: &str, allow: &[&str]) -> (MetaTools, Vec<String>) {
        let config = self.load(servers, toml);
        let servers: Vec<_> = config
            .servers
            .iter()
            .map(|(n, s)| (n.clone(), s.clone()))
            .collect();
        let allow = allow.iter().map(|a| a.to_string()).collect();
        block(MetaTools::connect_with(
            servers,
            &config,
            allow,
            &self.paths,
            self.spill(),
        ))
    }

    fn connect(&self, servers: &str, allow: &[&str]) -> (MetaTools, Vec<String>) {
        self.connect_all(servers, "", allow)
    }

    /// Connects and expects no warning.
    fn tools(&self, servers: &str) -> MetaTools {
        let (tools, warnings) = self.connect(servers, &[]);
        assert!(warnings.is_empty(), "{warnings:?}");
        tools
    }

    fn spilled_files(&self, server: &str) -> Vec<PathBuf> {
        let dir = self.paths.cache.join("mcp-resources").join(server);
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files
    }
}

fn call(tools: &MetaTools, name: &str, args: Value) -> Result<String, ToolError> {
    block(Tools::call(tools, name, args))
}

/// A successful call's result as JSON.
fn ok(tools: &MetaTools, name: &str, args: Value) -> Value {
    match call(tools, name, args) {
        Ok(text) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        Err(e) => panic!("{name} failed: {e:?}"),
    }
}

fn err(tools: &MetaTools, name: &str, args: Value) -> ToolError {
    match call(tools, name, args) {
        Ok(text) => panic!("{name} succeeded: {}", &text[..text.len().min(500)]),
        Err(e) => e,
    }
}

fn names(tools: &MetaTools) -> Vec<String> {
    tools.specs().into_iter().map(|s| s.name).collect()
}

fn result_ids(search: &Value) -> Vec<(String, String)> {
    search["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap_or_default().to_string(),
                r["id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn p01_a_full_server_gives_five_functions_with_the_sanitised_name() {
    let f = Fixture::new();
    let script = repo("tests/meta/sdk_server.py");
    let python = peers::python_mcp().display().to_string();
    let described = format!(
        "[mcp.p01-described]\ncommand = {}\nargs = [{}, \"stdio\"]\ndescription = \"Tickets and logs\"\n",
        json!(python),
        json!(script)
    );
    let (all, warnings) = f.connect_all(&sdk("sdk p01 server", &[]), &described, &[]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let [described, tools] =
        [0, 1].map(|i| MetaTools::from_servers(vec![all.servers()[i].clone()]));
    assert_eq!(tools.servers()[0].name(), "sdk p01 server");
    assert_eq!(tools.servers()[0].sanitised(), "sdk_p01_server");
    let about = &described.specs()[0].description;
    assert!(about.contains("'p01-described'"), "{about}");
    assert!(about.contains("Tickets and logs"), "{about}");
    described.close();
    assert_eq!(
        names(&tools),
        [
            "mcp_search_sdk_p01_server",
            "mcp_describe_sdk_p01_server",
            "mcp_invoke_sdk_p01_server",
            "mcp_read_sdk_p01_server",
            "mcp_prompt_sdk_p01_server"
        ]
    );
    let specs = tools.specs();
    for spec in &specs {
        assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
        assert!(spec.name.len() <= 64);
    }
    let search = &specs[0];
    assert!(search.description.contains("'sdk p01 server'"));
    assert!(
        search
            .description
            .contains("Use the log resource for incidents.")
    );
    assert!(search.description.contains("`kind`"));
    assert!(
        specs[2]
            .description
            .contains("mcp_describe_sdk_p01_server first")
    );
    // The parameter schemas of §10.2: properties, types, defaults and enums.
    assert_eq!(search.parameters["required"], json!(["query"]));
    assert_eq!(search.parameters["properties"]["top_k"]["type"], "integer");
    assert_eq!(search.parameters["properties"]["top_k"]["default"], 8);
    let describe = &specs[1].parameters;
    assert_eq!(
        describe["properties"]["kind"]["enum"],
        json!(["tool", "resource", "resource_template", "prompt"])
    );
    assert_eq!(describe["properties"]["kind"]["default"], "tool");
    assert_eq!(
        specs[2].parameters["properties"]["arguments"]["default"],
        json!({})
    );
    let read = &specs[3].parameters;
    assert_eq!(read["required"], json!(["uri"]));
    assert_eq!(read["properties"]["offset"]["default"], 0);
    assert_eq!(read["properties"]["offset"]["minimum"], 0);
    assert_eq!(read["properties"]["max_bytes"]["default"], 51200);
    assert_eq!(read["properties"]["pattern"]["type"], "string");
    assert_eq!(
        read["properties"]["arguments"]["additionalProperties"]["type"],
        "string"
    );
    let prompt = &specs[4].parameters;
    assert_eq!(prompt["required"], json!(["prompt"]));
    assert_eq!(
        prompt["properties"]["arguments"]["additionalProperties"]["type"],
        "string"
    );
    tools.close();
}

#[test]
fn p02_a_resources_only_server_and_a_failed_handshake() {
    let f = Fixture::new();
    let tools = f.tools(&raw("p02-resources", &["--resources-only"]));
    assert_eq!(
        names(&tools),
        [
            "mcp_search_p02-resources",
            "mcp_describe_p02-resources",
            "mcp_read_p02-resources"
        ]
    );
    tools.close();
    // A server that cannot start: one sanitised warning, and search, describe and invoke.
    let (tools, warnings) = f.connect(
        &stdio("p02 broken", "/nonexistent/\u{1b}[31mserver", &[]),
        &[],
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("p02 broken"), "{}", warnings[0]);
    assert!(!warnings[0].contains('\u{1b}'), "{}", warnings[0]);
    assert_eq!(
        names(&tools),
        [
            "mcp_search_p02_broken",
            "mcp_describe_p02_broken",
            "mcp_invoke_p02_broken"
        ]
    );
    let e = err(&tools, "mcp_invoke_p02_broken", json!({"tool": "x"}));
    assert_eq!(e.kind, ErrorKind::ServerError);
    // The model gets the raw message.
    assert!(e.message.contains('\u{1b}'), "{}", e.message);
    let e = err(&tools, "mcp_search_p02_broken", json!({"query": "x"}));
    assert_eq!(e.kind, ErrorKind::ServerError);
}

#[test]
fn p03_search_returns_mixed_kinds_with_audience_and_bounded_top_k() {
    let f = Fixture::new();
    let tools = f.tools(&sdk("p03", &[]));
    let s = ok(
        &tools,
        "mcp_search_p03",
        json!({"query": "log echo greeting summarize"}),
    );
    assert_eq!(s["server"], "p03");
    assert_eq!(s["total_items"], 13);
    let kinds: Vec<String> = result_ids(&s).into_iter().map(|(k, _)| k).collect();
    for kind in ["tool", "resource", "resource_template", "prompt"] {
        assert!(kinds.iter().any(|k| k == kind), "{kinds:?}");
    }
    assert!(s.get("unavailable").is_none());
    let log = s["results"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["id"] == "file:///logs/app.log"))
        .expect("the log")
        .clone();
    assert_eq!(
        log.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(
            ["kind", "id", "name", "description", "mime_type", "score"]
                .map(String::from)
                .to_vec()
        )
    );
    let prompt = s["results"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["id"] == "summarize_pr"))
        .expect("the prompt");
    assert_eq!(
        prompt["arguments"],
        json!([{"name": "repo", "required": true}, {"name": "number", "required": true},
               {"name": "style", "required": false}])
    );
    // Scores have 2 decimals at most.
    for r in s["results"].as_array().into_iter().flatten() {
        let score = r["score"].as_f64().expect("score");
        assert_eq!((score * 100.0).round() / 100.0, score);
    }
    let user = ok(&tools, "mcp_search_p03", json!({"query": "for-user"}));
    assert_eq!(user["results"][0]["id"], "data://for-user");
    assert_eq!(user["results"][0]["audience"], json!(["user"]));
    // An empty query gives the catalog in order; top_k defaults to 8, is capped at 20 and
    // raised to 1.
    let all = ok(&tools, "mcp_search_p03", json!({"query": ""}));
    let ids = result_ids(&all);
    assert_eq!(ids.len(), 8);
    assert_eq!(ids[0], ("tool".to_string(), "echo".to_string()));
    assert_eq!(ids[4].0, "resource");
    let big = ok(&tools, "mcp_search_p03", json!({"query": "", "top_k": 500}));
    assert_eq!(result_ids(&big).len(), 13);
    let last = result_ids(&big);
    assert_eq!(last[9].0, "resource_template");
    assert_eq!(last[12], ("prompt".to_string(), "summarize_pr".to_string()));
    let one = ok(&tools, "mcp_search_p03", json!({"query": "", "top_k": -3}));
    assert_eq!(result_ids(&one).len(), 1);
    // An exact name ranks first whatever its score.
    let exact = ok(&tools, "mcp_search_p03", json!({"query": "ECHO"}));
    assert_eq!(result_ids(&exact)[0].1, "echo");
    tools.close();
}

#[test]
fn p03_search_over_server_everything() {
    let f = Fixture::new();
    let tools = f.tools(&everything("p03 everything", false));
    let s = ok(
        &tools,
        "mcp_search_p03_everything",
        json!({"query": "echo", "top_k": 50}),
    );
    let ids = result_ids(&s);
    assert_eq!(ids[0], ("tool".to_string(), "echo".to_string()));
    assert!(ids.len() <= 20);
    let all = ok(
        &tools,
        "mcp_search_p03_everything",
        json!({"query": "", "top_k": 20}),
    );
    let total = all["total_items"].as_u64().expect("total");
    assert!(total >= 13 + 7 + 2 + 4, "{total}");
    let kinds: Vec<String> = result_ids(&all).into_iter().map(|(k, _)| k).collect();
    assert_eq!(kinds.len(), 20);
    tools.close();
}

#[test]
fn p04_pagination_and_an_unavailable_kind() {
    let f = Fixture::new();
    let tools = f.tools(&everything("p04-legacy", true));
    let server = &tools.servers()[0];
    let (catalog, _) = block(server.catalog(false)).expect("catalog");
    let resources: Vec<&str> = catalog
        .entries
        .iter()
        .filter(|e| e.kind == Kind::Resource)
        .map(|e| e.id.as_str())
        .collect();
    assert_eq!(resources.len(), 100);
    assert_eq!(resources[0], "test://static/resource/1");
    assert_eq!(resources[99], "test://static/resource/100");
    let d = ok(
        &tools,
        "mcp_describe_p04-legacy",
        json!({"tool": "test://static/resource/100", "kind": "resource"}),
    );
    assert_eq!(d["uri"], "test://static/resource/100");
    tools.close();

    // The prompt listing fails; tools, resources and templates are still there.
    let tools = f.tools(&sdk("p04-failing", &["--fail-prompt-listing"]));
    let s = ok(
        &tools,
        "mcp_search_p04-failing",
        json!({"query": "", "top_k": 20}),
    );
    assert_eq!(s["total_items"], 10);
    let unavailable = s["unavailable"].as_array().expect("unavailable");
    assert_eq!(unavailable.len(), 1);
    assert_eq!(unavailable[0]["kind"], "prompt");
    let error = unavailable[0]["error"].as_str().expect("error");
    assert!(error.starts_with("prompts/list failed: "), "{error}");
    assert!(error.contains("prompt storage is down"), "{error}");
    tools.close();

    // A listing whose cursors loop ends at the first repeated cursor.
    let tools = f.tools(&raw("p04-loop", &[]));
    let (catalog, _) = block(tools.servers()[0].catalog(false)).expect("catalog");
    let pages: Vec<&str> = catalog
        .entries
        .iter()
        .filter(|e| e.kind == Kind::Resource)
        .map(|e| e.raw_id.as_str())
        .collect();
    assert_eq!(pages, ["raw://page/1", "raw://page/2", "raw://page/3"]);
    assert!(catalog.failure(Kind::Prompt).is_some());
    tools.close();
}

#[test]
fn p05_describe_gives_each_kind_its_shape() {
    let f = Fixture::new();
    let tools = f.tools(&sdk("p05", &[]));
    let d = "mcp_describe_p05";
    let tool = call(&tools, d, json!({"tool": "echo"})).expect("tool");
    // The input schema exactly as the server listed it (its key order kept).
    assert_eq!(
        tool,
        concat!(
            r#"{"kind":"tool","id":"echo","name":"echo","description":"Echo the text back.","#,
            r#""invocation":{"type":"object","required":["tool","arguments"],"properties":{"tool":{"type":"string","const":"echo"},"#,
            r#""arguments":{"properties":{"text":{"title":"Text","type":"string"}},"required":["text"],"type":"object","title":"echoArguments"}}},"#,
            r#""output_schema":{"properties":{"result":{"title":"Result","type":"string"}},"required":["result"],"type":"object","title":"echoOutput"}}"#
        )
    );
    let resource = ok(
        &tools,
        d,
        json!({"tool": "file:///logs/app.log", "kind": "resource"}),
    );
    assert_eq!(
        resource,
        json!({"kind": "resource", "id": "file:///logs/app.log", "uri": "file:///logs/app.log",
               "name": "app.log", "description": "The application log", "mime_type": "text/plain"})
    );
    let user = ok(
        &tools,
        d,
        json!({"tool": "data://for-user", "kind": "resource"}),
    );
    assert_eq!(user["audience"], json!(["user"]));
    let template = ok(
        &tools,
        d,
        json!({"tool": "greeting://{name}/hello", "kind": "resource_template"}),
    );
    assert_eq!(
        serde_json::to_string(&template).expect("json"),
        concat!(
            r#"{"kind":"resource_template","id":"greeting://{name}/hello","uri_template":"greeting://{name}/hello","#,
            r#""name":"greeting","description":"A greeting","mime_type":"text/plain","variables":["name"],"expandable":true}"#
        )
    );
    let prompt = ok(&tools, d, json!({"tool": "summarize_pr", "kind": "prompt"}));
    assert_eq!(
        prompt,
        json!({"kind": "prompt", "id": "summarize_pr", "name": "summarize_pr",
               "description": "Summarise a pull request.",
               "arguments": [{"name": "repo", "required": true}, {"name": "number", "required": true},
                             {"name": "style", "required": false}]})
    );
    let e = err(&tools, d, json!({"tool": "nope", "kind": "prompt"}));
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert_eq!(
        e.message,
        "No prompt 'nope' in the catalog of MCP server 'p05'. Use mcp_search_p05 to find the right id."
    );
    let e = err(&tools, d, json!({"tool": "echo", "kind": "widget"}));
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    tools.close();

    let tools = f.tools(&raw("p05-raw", &[]));
    let t = ok(
        &tools,
        "mcp_describe_p05-raw",
        json!({"tool": "raw://{+path}{?q,lang}{#frag}{.ext}{/seg*}{;p}{&more}{name:3}", "kind": "resource_template"}),
    );
    assert_eq!(t["expandable"], false);
    assert_eq!(
        t["variables"],
        json!([
            "path", "q", "lang", "frag", "ext", "seg", "p", "more", "name"
        ])
    );
    tools.close();
}

/// The `result` text of the reply with `id` among raw JSON-RPC messages (one per line).
fn raw_result(lines: &str, id: u64) -> String {
    for line in lines.lines() {
        let line = line.strip_prefix("data: ").unwrap_or(line);
        if let Some((i, r)) = katari_runtime::mcp::raw::response_parts(line.as_bytes())
            && line[i].trim() == id.to_string()
        {
            return line[r].to_string();
        }
    }
    panic!("no reply {id} in:\n{lines}");
}

/// What the SDK test server sends for `tools/call` of `tool`, byte for byte, over stdio.
fn sdk_stdio_reply(tool: &str, arguments: Value) -> String {
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
               "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
    ];
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    // The server answers each line as it comes; closing stdin after the last request would
    // race the answer, so a tiny driver keeps it open until the reply arrives.
    let driver = format!(
        "import subprocess,sys\np=subprocess.Popen([sys.executable,{:?},'stdio'],stdin=subprocess.PIPE,stdout=subprocess.PIPE)\n\
         p.stdin.write(sys.stdin.buffer.read());p.stdin.flush()\n\
         for line in p.stdout:\n    sys.stdout.buffer.write(line)\n    if line.startswith(b'{{\"jsonrpc\":\"2.0\",\"id\":2') or b'\"id\":2,' in line: break\n\
         p.kill()\n",
        repo("tests/meta/sdk_server.py")
    );
    let mut child = Command::new(peers::python_mcp())
        .args(["-c", &driver])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("driver");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("output");
    raw_result(&String::from_utf8_lossy(&out.stdout), 2)
}

/// What a Streamable HTTP server at `url` sends for `tools/call`, byte for byte.
fn http_reply(url: &str, tool: &str, arguments: Value) -> String {
    block(async {
        let http = reqwest::Client::new();
        let post = |body: Value, session: Option<String>| {
            let mut request = http
                .post(url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .body(body.to_string());
            if let Some(s) = session {
                request = request
                    .header("mcp-session-id", s)
                    .header("mcp-protocol-version", "2025-11-25");
            }
            request.send()
        };
        let init = post(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                   "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}),
            None,
        )
        .await
        .expect("initialize");
        let session = init
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let _ = init.text().await;
        let _ = post(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            session.clone(),
        )
        .await;
        let reply = post(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
            session,
        )
        .await
        .expect("call");
        raw_result(&reply.text().await.expect("body"), 2)
    })
}

#[test]
fn p06_an_in_bounds_result_is_passed_byte_for_byte() {
    let f = Fixture::new();
    // stdio: the Python SDK sorts keys ("text" before "type"), which a re-serialisation of
    // rmcp's model would not keep.
    let tools = f.tools(&sdk("p06-stdio", &[]));
    let args = json!({"text": "héllo \u{1b}[1m\"quoted\""});
    let sent = call(
        &tools,
        "mcp_invoke_p06-stdio",
        json!({"tool": "echo", "arguments": args}),
    )
    .expect("echo");
    assert_eq!(sent, sdk_stdio_reply("echo", args));
    assert!(sent.starts_with(r#"{"content":[{"text":"#), "{sent}");
    tools.close();

    // Streamable HTTP: server-everything's annotated message (annotations in its own order).
    let peer = peers::start_everything("streamableHttp", false);
    let url = format!("{}/mcp", peer.base());
    let tools = f.tools(&http("p06-http", &url));
    let args = json!({"messageType": "success", "includeImage": false});
    let sent = call(
        &tools,
        "mcp_invoke_p06-http",
        json!({"tool": "get-annotated-message", "arguments": args}),
    )
    .expect("annotated");
    assert_eq!(sent, http_reply(&url, "get-annotated-message", args));
    tools.close();
    drop(peer);
}

#[test]
fn p07_out_of_bounds_results_are_rewritten() {
    let f = Fixture::new();
    let tools = f.tools(&sdk("p07", &[]));
    let i = "mcp_invoke_p07";
    let big = ok(&tools, i, json!({"tool": "big_text"}));
    let text = big["content"][0]["text"].as_str().expect("text");
    let (kept, line) = text.rsplit_once('\n').expect("a truncation line");
    assert_eq!(kept.len(), 204_798);
    assert!(kept.chars().all(|c| c == '€'));
    assert_eq!(
        line,
        "[truncated: showing the first 204798 of 300000 bytes; call the tool again with narrower arguments]"
    );
    // The structured copy of the same text is replaced by the marker.
    let n = big["structuredContent"]["original_bytes"]
        .as_u64()
        .expect("marker");
    assert_eq!(
        big["structuredContent"],
        json!({"truncated": true, "original_bytes": n,
               "note": format!("structured content of {n} bytes exceeds the 204800-byte limit; call the tool again with narrower arguments")})
    );
    let structured = ok(&tools, i, json!({"tool": "big_structured"}));
    assert_eq!(structured["structuredContent"]["original_bytes"], 250_011);
    assert_eq!(structured["structuredContent"]["truncated"], true);
    // The image is spilled, never inlined.
    let picture = call(&tools, i, json!({"tool": "picture"})).expect("picture");
    assert!(!picture.contains("iVBORw0KGgo"), "{picture}");
    let picture: Value = serde_json::from_str(&picture).expect("json");
    let spilled = &picture["content"][0];
    assert_eq!(spilled["spilled"], true);
    assert_eq!(spilled["uri"], Value::Null);
    assert_eq!(spilled["mime_type"], "image/png");
    assert_eq!(spilled["sniffed"], false);
    let path = PathBuf::from(spilled["path"].as_str().expect("path"));
    assert!(path.is_absolute());
    assert_eq!(
        spilled["size_bytes"].as_u64(),
        std::fs::metadata(&path).ok().map(|m| m.len())
    );
    tools.close();

    // Metadata over 4096 bytes is clamped.
    let tools = f.tools(&raw("p07-raw", &[]));
    let s = ok(&tools, "mcp_search_p07-raw", json!({"query": "escape"}));
    let description = s["results"][0]["description"]
        .as_str()
        .expect("description");
    assert!(description.len() <= 4096 && description.ends_with('…'));
    let resource = ok(
        &tools,
        "mcp_describe_p07-raw",
        json!({"tool": "raw://page/1", "kind": "resource"}),
    );
    let name = resource["name"].as_str().expect("name");
    assert_eq!(name.len(), 4096);
    assert!(name.ends_with('…'));
    let search = &tools.specs()[0];
    assert!(search.description.contains("bold instructions"));
    assert!(search.description.len() < 4096 + 1000);
    tools.close();
}

#[test]
fn p08_large_text_is_paged_without_losing_or_repeating_a_byte() {
    let f = Fixture::new();
    let tools = f.tools(&sdk("p08", &[]));
    let r = "mcp_read_p08";
    let first = ok(&tools, r, json!({"uri": "file:///logs/app.log"}));
    assert_eq!(first["uri"], "file:///logs/app.log");
    assert_eq!(first["mime_type"], "text/plain");
    assert_eq!(first["text"].as_str().map(str::len), Some(51200));
    assert_eq!(first["truncated"], true);
    assert_eq!(first["next_offset"], 51200);
    let total = first["total_bytes"].as_u64().expect("total");
    assert!(total > 1_000_000, "{total}");
    assert_eq!(
        first["note"],
        "Content truncated; re-call with offset=51200 to continue (max_bytes is clamped to 204800)"
    );
    let wide = ok(
        &tools,
        r,
        json!({"uri": "file:///logs/app.log", "max_bytes": 999999}),
    );
    assert_eq!(wide["text"].as_str().map(str::len), Some(204800));
    assert_eq!(wide["next_offset"], 204800);
    // Pages of an odd size over 1-, 2-, 3- and 4-byte characters, starting inside one.
    let expected = "aé€😀".repeat(60000);
    let mut joined = String::new();
    let mut offset = json!(2);
    loop {
        let page = ok(
            &tools,
            r,
            json!({"uri": "data://multibyte", "offset": offset, "max_bytes": 99_999}),
        );
        joined.push_str(page["text"].as_str().expect("text"));
        if page["truncated"] == false {
            assert_eq!(page["next_offset"], Value::Null);
            assert!(page.get("note").is_none());
            break;
        }
        offset = page["next_offset"].clone();
    }
    assert_eq!(joined, expected[3..]);
    let past = ok(
        &tools,
        r,
        json!({"uri": "data://multibyte", "offset": 10_000_000}),
    );
    assert_eq!(past["text"], "");
    assert_eq!(past["truncated"], false);
    tools.close();
}

#[test]
fn p09_pattern_filters_lines_with_context() {
    let f = Fixture::new();
    let tools = f.tools(&sdk("p09", &[]));
    let r = "mcp_read_p09";
    let hit = ok(
        &tools,
        r,
        json!({"uri": "file:///logs/app.log", "pattern": "ERROR"}),
    );
    let text = hit["text"].as_str().expect("text");
    let lines: Vec<&str> = text.lines().take(6).collect();
    assert_eq!(
        lines,
        [
            "998-000998 INFO request served in 28 ms",
            "999-000999 INFO request served in 29 ms",
            "1000:001000 ERROR disk full on node 30 ms",
            "1001-001001 INFO request served in 31 ms",
            "1002-001002 INFO request served in 32 ms",
            "--",
        ]
    );
    // 30 groups of 5 lines (the last, at the end of the log, of 3) and 29 separators.
    assert_eq!(text.lines().count(), 29 * 5 + 3 + 29);
    assert!(
        text.ends_with("30000:030000 ERROR disk full on node 27 ms\n"),
        "{}",
        &text[text.len() - 200..]
    );
    let total = hit["total_bytes"].as_u64().expect("total") as usize;
    assert_eq!(total, text.len());
    assert_eq!(hit["truncated"], false);
    // Paging counts bytes of the filtered stream.
    let page = ok(
        &tools,
        r,
        json!({"uri": "file:///logs/app.log", "pattern": "ERROR", "offset": 100, "max_bytes": 50}),
    );
    assert_eq!(page["text"].as_str(), Some(&text[100..150]));
    assert_eq!(page["total_bytes"].as_u64(), Some(total as u64));
    assert_eq!(page["next_offset"], 150);
    let e = err(
        &tools,
        r,
        json!({"uri": "file:///logs/app.log", "pattern": "(unclosed"}),
    );
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    assert!(e.message.starts_with("Invalid pattern: "), "{}", e.message);
    tools.close();
}

#[test]
fn p10_templates_expand_at_level_one_only() {
    let f = Fixture::new();
    let tools = f.tools(&sdk("p10", &[]));
    let r = "mcp_read_p10";
    let hello = ok(
        &tools,
        r,
        json!({"uri": "greeting://{name}/hello", "arguments": {"name": "Ada L", "unused": "x"}}),
    );
    assert_eq!(hello["uri"], "greeting://Ada%20L/hello");
    let text = hello["text"].as_str().expect("text");
    assert!(
        text == "Hello, Ada L!" || text == "Hello, Ada%20L!",
        "{text}"
    );
    let e = err(
        &tools,
        r,
        json!({"uri": "greeting://{+name}/hello", "arguments": {"name": "a"}}),
    );
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    assert_eq!(
        e.message,
        "Resource template 'greeting://{+name}/hello' uses '{+name}', which needs RFC 6570 beyond level 1; only simple {name} substitution is supported."
    );
    let e = err(&tools, r, json!({"uri": "greeting://{name}/hello"}));
    assert_eq!(
        e.message,
        "Resource template 'greeting://{name}/hello' needs a value for 'name' in arguments."
    );
    tools.close();

    let tools = f.tools(&everything("p10-everything", false));
    let text = ok(
        &tools,
        "mcp_read_p10-everything",
        json!({"uri": "demo://resource/dynamic/text/{resourceId}", "arguments": {"resourceId": "7"}}),
    );
    assert_eq!(text["uri"], "demo://resource/dynamic/text/7");
    assert!(text["text"].as_str().is_some_and(|t| !t.is_empty()));
    tools.close();
}

#[test]
fn p11_blobs_become_text_or_spill_files() {
    let f = Fixture::new();
    let tools = f.tools(&sdk("p11 sdk", &[]));
    let r = "mcp_read_p11_sdk";
    let text = ok(
        &tools,
        r,
        json!({"uri": "data://utf8-blob", "max_bytes": 20}),
    );
    assert_eq!(text["mime_type"], "application/octet-stream");
    assert_eq!(text["text"], "plain text in a blob");
    assert_eq!(text["truncated"], true);
    let chart = ok(&tools, r, json!({"uri": "data://chart.png"}));
    let mut png = vec![0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A];
    for _ in 0..4 {
        png.extend(0..=255u8);
    }
    let digest: String = <sha2::Sha256 as sha2::Digest>::digest(&png)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let path = f
        .paths
        .cache
        .join("mcp-resources/p11_sdk")
        .join(format!("{digest}.png"));
    assert_eq!(
        chart,
        json!({"spilled": true, "path": path.display().to_string(), "uri": "data://chart.png",
               "mime_type": "image/png", "sniffed": false, "size_bytes": png.len(), "sha256": digest})
    );
    assert_eq!(std::fs::read(&path).expect("spilled"), png);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    tools.close();

    // The paginating server's even resources are binary blobs.
    let tools = f.tools(&everything("p11-legacy", true));
    let blob = ok(
        &tools,
        "mcp_read_p11-legacy",
        json!({"uri": "test://static/resource/2"}),
    );
    if blob.get("spilled").is_some() {
        assert!(blob["path"].as_str().is_some_and(|p| p.ends_with(".bin")));
    } else {
        // Its blob may well be UTF-8 text, which is then paged as text.
        assert!(blob["text"].is_string(), "{blob}");
    }
    tools.close();
}

/// Spills three contents many times over from several threads; with `KATARI_META_SPILL_DIR`
/// set (the second process of [`p12_the_same_blob_leaves_one_complete_file`]) into that
/// folder, else into a fresh one.
#[test]
fn spill_worker_saves_one_file_per_content() {
    let dir = std::env::var_os("KATARI_META_SPILL_DIR").map(PathBuf::from);
    let temp = tempfile::tempdir().expect("temp");
    let cache = dir.unwrap_or_else(|| temp.path().to_path_buf());
    spill_from_threads(&cache);
    check_spill_tree(&cache);
}

fn contents() -> Vec<Vec<u8>> {
    (0..3u8)
        .map(|i| {
            (0..300_000u32)
                .map(|n| (n % 251) as u8 ^ i.wrapping_mul(77))
                .collect()
        })
        .collect()
}

fn spill_from_threads(cache: &Path) {
    let spill = Spill::new(cache);
    std::thread::scope(|scope| {
        for t in 0..8 {
            let spill = &spill;
            scope.spawn(move || {
                for round in 0..10 {
                    for (i, bytes) in contents().iter().enumerate() {
                        if (t + round + i) % 2 == 0 {
                            let saved = spill.save("conc", bytes, Some("image/png")).expect("save");
                            assert_eq!(std::fs::read(&saved.path).expect("read"), *bytes);
                        }
                    }
                }
            });
        }
    });
}

fn check_spill_tree(cache: &Path) {
    let dir = cache.join("mcp-resources/conc");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    for bytes in contents() {
        let saved = Spill::new(cache)
            .save("conc", &bytes, Some("image/png"))
            .expect("save");
        assert_eq!(std::fs::read(&saved.path).expect("read"), bytes);
    }
}

#[test]
fn p12_the_same_blob_leaves_one_complete_file() {
    let f = Fixture::new();
    let tools = f.tools(&sdk("p12", &[]));
    let r = "mcp_read_p12";
    let first = ok(&tools, r, json!({"uri": "data://chart.png"}));
    let path = PathBuf::from(first["path"].as_str().expect("path"));
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    std::fs::File::open(&path)
        .and_then(|file| file.set_modified(old))
        .expect("age the file");
    let again = ok(&tools, r, json!({"uri": "data://chart.png"}));
    assert_eq!(again, first);
    let modified = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .expect("mtime");
    assert!(modified > old, "the reused file's time is refreshed");
    assert_eq!(f.spilled_files("p12"), [path]);
    tools.close();

    // Eight threads here and eight in a second process, spilling the same contents at once.
    let cache = f.paths.cache.clone();
    let exe = std::env::current_exe().expect("test binary");
    let mut other = Command::new(exe)
        .args([
            "meta::tests::spill_worker_saves_one_file_per_content",
            "--exact",
            "--test-threads=1",
        ])
        .env("KATARI_META_SPILL_DIR", &cache)
        .stdout(Stdio::null())
        .spawn()
        .expect("second process");
    spill_from_threads(&cache);
    assert!(
        other.wait().expect("wait").success(),
        "the second process failed"
    );
    check_spill_tree(&cache);
}

#[test]
fn p13_eviction_keeps_the_new_file_and_too_large_blobs_write_nothing() {
    let f = Fixture::new();
    let spill = f.spill().with_limit(250);
    let old = |secs: u64| std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    let a = spill.save("evict", &[1; 100], None).expect("a");
    std::fs::File::open(&a.path)
        .and_then(|file| file.set_modified(old(1_000)))
        .expect("age");
    let b = spill.save("evict", &[2; 100], None).expect("b");
    std::fs::File::open(&b.path)
        .and_then(|file| file.set_modified(old(2_000)))
        .expect("age");
    // Another server's file counts towards the same tree.
    let c = spill
        .save("other", &[3; 100], Some("application/pdf"))
        .expect("c");
    assert!(c.path.to_string_lossy().ends_with(".pdf"));
    assert!(!a.path.exists(), "the oldest file is evicted");
    assert!(b.path.exists() && c.path.exists());
    // A file larger than the whole bound stays: it is the one just written.
    let d = spill.save("evict", &[4; 400], None).expect("d");
    assert!(d.path.exists());
    assert!(!b.path.exists() && !c.path.exists());

    let tools = f.tools(&raw("p13", &[]));
    let e = err(&tools, "mcp_read_p13", json!({"uri": "raw://huge-blob"}));
    assert_eq!(e.kind, ErrorKind::TooLarge);
    assert_eq!(
        e.message,
        "Binary content from raw://huge-blob exceeds the 50 MiB limit and was not saved."
    );
    assert!(f.spilled_files("p13").is_empty());
    // Exactly 50 MiB is still saved.
    let max = ok(&tools, "mcp_read_p13", json!({"uri": "raw://max-blob"}));
    assert_eq!(max["size_bytes"], 52_428_800);
    assert!(max["path"].as_str().is_some_and(|p| p.ends_with(".zip")));
    tools.close();
}

#[test]
fn p14_multi_item_reads_return_contents_within_the_cap() {
    let f = Fixture::new();
    let tools = f.tools(&raw("p14", &[]));
    let multi = ok(
        &tools,
        "mcp_read_p14",
        json!({"uri": "raw://multi", "max_bytes": 204800}),
    );
    assert_eq!(multi["uri"], "raw://multi");
    let contents = multi["contents"].as_array().expect("contents");
    assert_eq!(contents.len(), 4);
    assert_eq!(contents[0]["uri"], "raw://multi/0");
    assert_eq!(contents[0]["text"].as_str().map(str::len), Some(60000));
    assert_eq!(
        contents[3],
        json!({"omitted_items": 2, "note": "2 more content items omitted: the response is capped at 204800 bytes"})
    );
    assert!(serde_json::to_string(&multi).expect("json").len() <= 204_800);
    // Paging applies to each text item.
    let paged = ok(
        &tools,
        "mcp_read_p14",
        json!({"uri": "raw://multi", "max_bytes": 30000}),
    );
    let items = paged["contents"].as_array().expect("contents");
    assert_eq!(items.len(), 5);
    assert!(items.iter().all(|i| i["next_offset"] == 30000));
    tools.close();
}

#[test]
fn p15_prompts_are_flattened_and_checked() {
    let f = Fixture::new();
    let tools = f.tools(&sdk("p15", &[]));
    let p = "mcp_prompt_p15";
    let text = call(
        &tools,
        p,
        json!({"prompt": "two_step", "arguments": {"topic": "tea"}}),
    )
    .expect("prompt");
    assert_eq!(
        text,
        "[user]\nTell me about tea.\n\n[assistant]\ntea is a fine topic."
    );
    let single = call(
        &tools,
        p,
        json!({"prompt": "summarize_pr", "arguments": {"repo": "k/k", "number": "7"}}),
    )
    .expect("prompt");
    assert_eq!(single, "Summarise pull request 7 of k/k in a short style.");
    let e = err(
        &tools,
        p,
        json!({"prompt": "summarize_pr", "arguments": {"style": "long"}}),
    );
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    assert_eq!(
        e.message,
        "Prompt 'summarize_pr' on MCP server 'p15' is missing required arguments: repo, number"
    );
    let e = err(
        &tools,
        p,
        json!({"prompt": "summarize_pr", "arguments": {"repo": 7}}),
    );
    assert_eq!(
        e.message,
        "Prompt arguments must be strings; 'repo' is not."
    );
    let e = err(&tools, p, json!({"prompt": "nope"}));
    assert_eq!(e.kind, ErrorKind::NotFound);
    tools.close();

    // Non-text parts: an image is spilled and named by its file.
    let tools2 = f.tools(&sdk("p15-image", &[]));
    let text = call(
        &tools2,
        "mcp_prompt_p15-image",
        json!({"prompt": "picture_prompt"}),
    )
    .expect("prompt");
    let (first, second) = text.split_once("\n\n").expect("two messages");
    assert_eq!(first, "[user]\nLook at this:");
    let path = second
        .strip_prefix("[user]\n(image content saved to ")
        .and_then(|rest| rest.strip_suffix(')'))
        .expect("a saved image");
    assert!(
        path.ends_with(".png") && Path::new(path).is_file(),
        "{path}"
    );
    tools2.close();

    let tools = f.tools(&everything("p15-everything", false));
    let e = err(
        &tools,
        "mcp_prompt_p15-everything",
        json!({"prompt": "args-prompt"}),
    );
    assert_eq!(
        e.message,
        "Prompt 'args-prompt' on MCP server 'p15-everything' is missing required arguments: city"
    );
    let text = call(
        &tools,
        "mcp_prompt_p15-everything",
        json!({"prompt": "args-prompt", "arguments": {"city": "Lima"}}),
    )
    .expect("prompt");
    assert!(text.contains("Lima"), "{text}");
    // An embedded resource contributes its text (the blob of this server is ASCII text).
    for kind in ["Text", "Blob"] {
        let text = call(
            &tools,
            "mcp_prompt_p15-everything",
            json!({"prompt": "resource-prompt", "arguments": {"resourceType": kind, "resourceId": "3"}}),
        )
        .expect("prompt");
        let parts: Vec<&str> = text.split("\n\n").collect();
        assert_eq!(parts.len(), 2, "{text}");
        assert!(
            parts[0].starts_with("[user]\nThis prompt includes"),
            "{text}"
        );
        assert!(
            parts[1].starts_with("[user]\n") && parts[1].len() > 8,
            "{text}"
        );
    }
    tools.close();
}

#[test]
fn p16_errors_stay_raw_for_the_model_and_unknown_functions_are_refused() {
    let f = Fixture::new();
    let tools = f.tools(&raw("p16", &[]));
    // An isError result is passed as it is, escape sequences included.
    let failed = err(&tools, "mcp_invoke_p16", json!({"tool": "escape"}));
    assert_eq!(
        failed.payload(),
        r#"{"content":[{"type":"text","text":"\u001b[31mboom\u001b[0m\u0007 failed"}],"isError":true}"#
    );
    assert_eq!(failed.message, "\u{1b}[31mboom\u{1b}[0m\u{7} failed");
    // A server error keeps its raw text.
    let e = err(
        &tools,
        "mcp_read_p16",
        json!({"uri": "raw://\u{1b}[31mmissing"}),
    );
    assert_eq!(e.kind, ErrorKind::ServerError);
    assert!(e.message.contains("\u{1b}[31mmissing"), "{}", e.message);
    let payload: Value = serde_json::from_str(&e.payload()).expect("payload");
    assert!(
        payload["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains('\u{1b}'))
    );
    // Server metadata reaches the model raw too.
    let s = ok(&tools, "mcp_search_p16", json!({"query": "escape"}));
    assert!(
        s["results"][0]["title"]
            .as_str()
            .is_some_and(|t| t.contains('\u{1b}'))
    );
    let e = err(&tools, "mcp_fly_p16", json!({}));
    assert_eq!(e.kind, ErrorKind::UnknownTool);
    assert!(e.message.contains("mcp_search_p16"), "{}", e.message);
    let e = block(tools.servers()[0].call("mcp_invoke_p17", json!({}))).expect_err("unknown");
    assert_eq!(e.kind, ErrorKind::UnknownTool);
    tools.close();
}

#[test]
fn allow_tool_denies_invokes_and_hides_tools_from_search() {
    let f = Fixture::new();
    let (tools, warnings) = f.connect(&sdk("allow me", &[]), &["allow_me/echo"]);
    assert!(warnings.is_empty());
    let s = ok(
        &tools,
        "mcp_search_allow_me",
        json!({"query": "", "top_k": 20}),
    );
    let tool_ids: Vec<String> = result_ids(&s)
        .into_iter()
        .filter(|(k, _)| k == "tool")
        .map(|(_, id)| id)
        .collect();
    assert_eq!(tool_ids, ["echo"]);
    let e = err(&tools, "mcp_invoke_allow_me", json!({"tool": "big_text"}));
    assert_eq!(e.kind, ErrorKind::Denied);
    assert_eq!(
        e.message,
        "Tool 'allow me/big_text' is not in this chat's --allow-tool list."
    );
    let echo = ok(
        &tools,
        "mcp_invoke_allow_me",
        json!({"tool": "echo", "arguments": {"text": "x"}}),
    );
    assert_eq!(echo["content"][0]["text"], "Echo: x");
    tools.close();
    let (tools, _) = f.connect(&sdk("allow all", &[]), &["allow all/*"]);
    let big = ok(&tools, "mcp_invoke_allow_all", json!({"tool": "big_text"}));
    assert!(big["content"].is_array());
    tools.close();
}

#[test]
fn list_changed_notifications_drop_the_catalog() {
    let f = Fixture::new();
    let tools = f.tools(&raw("changes", &[]));
    let s = "mcp_search_changes";
    let before = ok(&tools, s, json!({"query": "added later"}));
    assert!(result_ids(&before).is_empty());
    ok(&tools, "mcp_invoke_changes", json!({"tool": "change"}));
    // The notification arrives with the reply; the next search lists again.
    let after = ok(&tools, s, json!({"query": "added later"}));
    assert_eq!(result_ids(&after)[0].1, "added_later");
    tools.close();
}

#[test]
fn describe_of_a_missing_id_refreshes_the_catalog_once() {
    let f = Fixture::new();
    let tools = f.tools(&raw("quiet", &[]));
    let before = ok(&tools, "mcp_search_quiet", json!({"query": "added later"}));
    assert!(result_ids(&before).is_empty());
    // The list changes without a notification: the cached catalog is stale.
    ok(
        &tools,
        "mcp_invoke_quiet",
        json!({"tool": "change_quietly"}),
    );
    let stale = ok(&tools, "mcp_search_quiet", json!({"query": "added later"}));
    assert!(result_ids(&stale).is_empty());
    let d = ok(&tools, "mcp_describe_quiet", json!({"tool": "added_later"}));
    assert_eq!(d["id"], "added_later");
    tools.close();

    // invalidate() forgets the catalog at the end of a turn.
    let tools = f.tools(&raw("quiet-turn", &[]));
    let s = "mcp_search_quiet-turn";
    assert!(result_ids(&ok(&tools, s, json!({"query": "added later"}))).is_empty());
    ok(
        &tools,
        "mcp_invoke_quiet-turn",
        json!({"tool": "change_quietly"}),
    );
    assert!(result_ids(&ok(&tools, s, json!({"query": "added later"}))).is_empty());
    tools.invalidate();
    let fresh = ok(&tools, s, json!({"query": "added later"}));
    assert_eq!(result_ids(&fresh)[0].1, "added_later");
    tools.close();
}

#[test]
fn server_everything_over_legacy_sse() {
    let peer = peers::start_everything("sse", false);
    let f = Fixture::new();
    let entry = format!(
        "{}: {},",
        json!("sse-everything"),
        json!({"type": "sse", "url": format!("{}/sse", peer.base())})
    );
    let tools = f.tools(&entry);
    let echo = call(
        &tools,
        "mcp_invoke_sse-everything",
        json!({"tool": "echo", "arguments": {"message": "hi"}}),
    )
    .expect("echo");
    assert_eq!(echo, r#"{"content":[{"type":"text","text":"Echo: hi"}]}"#);
    let s = ok(
        &tools,
        "mcp_search_sse-everything",
        json!({"query": "tiny image"}),
    );
    assert_eq!(result_ids(&s)[0].1, "get-tiny-image");
    tools.close();
    drop(peer);
}

#[test]
fn server_everything_over_streamable_http() {
    let peer = peers::start_everything("streamableHttp", false);
    let f = Fixture::new();
    let tools = f.tools(&http("http everything", &format!("{}/mcp", peer.base())));
    assert_eq!(names(&tools).len(), 5);
    let d = ok(
        &tools,
        "mcp_describe_http_everything",
        json!({"tool": "get-sum"}),
    );
    assert_eq!(d["invocation"]["properties"]["tool"]["const"], "get-sum");
    let sum = ok(
        &tools,
        "mcp_invoke_http_everything",
        json!({"tool": "get-sum", "arguments": {"a": 2, "b": 3}}),
    );
    assert!(
        sum["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains('5'))
    );
    let image = ok(
        &tools,
        "mcp_invoke_http_everything",
        json!({"tool": "get-tiny-image"}),
    );
    let spilled: Vec<&Value> = image["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter(|c| c["spilled"] == true)
        .collect();
    assert_eq!(spilled.len(), 1, "{image}");
    // Arguments are not validated by the host: the server's rejection comes back as it is.
    let rejected = err(
        &tools,
        "mcp_invoke_http_everything",
        json!({"tool": "get-sum", "arguments": {"a": "x"}}),
    );
    let rejected: Value = serde_json::from_str(&rejected.payload()).expect("the server's result");
    assert_eq!(rejected["isError"], true);
    tools.close();
    drop(peer);
}

#[test]
fn bad_input_gives_typed_errors_never_panics() {
    let f = Fixture::new();
    let tools = f.tools(&format!("{}{}", sdk("bad-sdk", &[]), raw("bad-raw", &[])));
    let invalid = |name: &str, args: Value| {
        let e = err(&tools, name, args.clone());
        assert_eq!(e.kind, ErrorKind::InvalidArgument, "{name} {args}: {e:?}");
        e.message
    };
    let (s, d, i, r, p) = (
        "mcp_search_bad-sdk",
        "mcp_describe_bad-sdk",
        "mcp_invoke_bad-sdk",
        "mcp_read_bad-sdk",
        "mcp_prompt_bad-sdk",
    );
    assert_eq!(
        invalid(s, json!({"query": 3})),
        "Parameter 'query' of mcp_search_bad-sdk must be a string."
    );
    assert_eq!(
        invalid(s, json!({})),
        "Parameter 'query' of mcp_search_bad-sdk is required."
    );
    invalid(s, json!({"query": "x", "top_k": "8"}));
    invalid(s, json!({"query": "x", "top_k": 2.5}));
    invalid(s, json!([1, 2]));
    invalid(d, json!({"tool": ["echo"]}));
    invalid(d, json!({"tool": "echo", "kind": 1}));
    invalid(i, json!({"tool": {}}));
    invalid(i, json!({"tool": "echo", "arguments": "text=1"}));
    invalid(i, json!({"tool": "echo", "arguments": [1]}));
    invalid(r, json!({"uri": 5}));
    invalid(r, json!({"uri": "data://x", "arguments": {"a": 1}}));
    invalid(r, json!({"uri": "data://x", "arguments": "a"}));
    invalid(r, json!({"uri": "data://x", "pattern": true}));
    assert_eq!(
        invalid(r, json!({"uri": "data://x", "offset": -1})),
        "Parameter 'offset' of mcp_read_bad-sdk must be an integer ≥ 0."
    );
    invalid(r, json!({"uri": "data://x", "offset": "0"}));
    invalid(r, json!({"uri": "data://x", "max_bytes": "big"}));
    invalid(
        r,
        json!({"uri": "data://x", "pattern": "a{1000}{1000}{1000}"}),
    );
    invalid(p, json!({"prompt": 1}));
    invalid(p, json!({"prompt": "two_step", "arguments": [1]}));
    // Clamped, not refused: max_bytes below 1, huge numbers, nulls as absent.
    let one = ok(
        &tools,
        r,
        json!({"uri": "file:///logs/app.log", "max_bytes": -5, "offset": null}),
    );
    assert_eq!(one["text"].as_str().map(str::len), Some(1));
    let huge = ok(
        &tools,
        r,
        json!({"uri": "file:///logs/app.log", "offset": 18446744073709551615u64}),
    );
    assert_eq!(huge["text"], "");
    // A 10,000-character pattern compiles and filters.
    let long = format!("ERROR|{}", "z".repeat(10_000));
    let hit = ok(
        &tools,
        r,
        json!({"uri": "file:///logs/app.log", "pattern": long}),
    );
    assert!(hit["text"].as_str().is_some_and(|t| t.contains("1000:")));
    // A template with every operator and modifier.
    let e = invalid(
        "mcp_read_bad-raw",
        json!({"uri": "raw://{+path}{?q,lang}{#frag}{.ext}{/seg*}{;p}{&more}{name:3}"}),
    );
    assert!(e.contains("uses '{+path}'"), "{e}");
    // Malformed content items become error entries, the rest is kept.
    let m = ok(
        &tools,
        "mcp_read_bad-raw",
        json!({"uri": "raw://malformed"}),
    );
    let items = m["contents"].as_array().expect("contents");
    assert_eq!(items.len(), 5);
    assert_eq!(items[0]["text"], "fine");
    for item in &items[1..] {
        assert_eq!(item["error"]["type"], "server_error", "{item}");
    }
    assert!(
        items[4]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not valid base64"))
    );
    let e = err(
        &tools,
        "mcp_read_bad-raw",
        json!({"uri": "raw://bad-base64"}),
    );
    assert_eq!(e.kind, ErrorKind::ServerError);
    assert_eq!(
        e.message,
        "Binary content from raw://bad-base64 is not valid base64."
    );
    let m = ok(&tools, "mcp_invoke_bad-raw", json!({"tool": "malformed"}));
    let content = m["content"].as_array().expect("content");
    assert_eq!(content[0]["error"]["type"], "server_error");
    assert_eq!(content[1]["error"]["type"], "server_error");
    assert_eq!(content[2], "not an object");
    assert_eq!(content[3]["text"], "still here");
    tools.close();
}

#[test]
fn base64_is_decoded_in_chunks_up_to_the_limit() {
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes: Vec<u8> = (0..200_000u32).map(|n| (n * 7 % 256) as u8).collect();
    let text = engine.encode(&bytes);
    assert_eq!(decode_blob(&text).expect("decode"), bytes);
    let wrapped: String = text
        .as_bytes()
        .chunks(76)
        .map(|c| format!("{}\n", String::from_utf8_lossy(c)))
        .collect();
    assert_eq!(decode_blob(&wrapped).expect("decode"), bytes);
    assert_eq!(decode_blob("aGk").expect("unpadded"), b"hi");
    assert_eq!(
        decode_blob("aGk=aGk="),
        Err(super::spill::BlobError::NotBase64)
    );
    assert_eq!(decode_blob("!!!!"), Err(super::spill::BlobError::NotBase64));
    let over = "A".repeat((52_428_800 / 3 + 1) * 4);
    assert_eq!(decode_blob(&over), Err(super::spill::BlobError::TooLarge));
}

#[test]
fn the_extension_table_is_fixed() {
    use super::spill::extension;
    assert_eq!(extension(Some("image/PNG; q=1")), "png");
    assert_eq!(extension(Some("application/gzip")), "gz");
    assert_eq!(extension(Some("video/mp4")), "mp4");
    assert_eq!(extension(Some("../../etc/passwd")), "bin");
    assert_eq!(extension(None), "bin");
}
