//! Property tests of the configuration loader (`host.md` §3–§4): arbitrary bytes and random
//! TOML/JSON documents in `config.toml`, `mcp.json`, `.mcp.json` and `secrets.toml` never panic,
//! and every problem is reported as `FILE:LINE: KEY: PROBLEM` with a `fix:`.

use proptest::prelude::*;

use super::*;

/// A temporary folder with `home/` (KATARI_HOME) and `ws/` (a workspace), removed on drop.
struct Dir(tempfile::TempDir);

const FILES: [&str; 4] = [
    "home/config.toml",
    "home/mcp.json",
    "ws/.mcp.json",
    "ws/.katari/config.toml",
];

fn env(name: &str) -> Option<String> {
    (name == "GH_TOKEN").then(|| "tok-123".to_string())
}

/// Writes `files` (path, bytes) into a fresh folder, loads, and checks the report.
fn check(files: &[(&str, Vec<u8>)]) {
    let dir = Dir(tempfile::Builder::new()
        .prefix("katari-config-fuzz-")
        .tempdir()
        .expect("temp dir"));

    std::fs::create_dir_all(dir.0.path().join("home")).expect("temp dir");
    std::fs::create_dir_all(dir.0.path().join("ws/sub")).expect("temp dir");
    for (rel, bytes) in files {
        let path = dir.0.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, bytes).expect("write");
        #[cfg(unix)]
        if rel.ends_with("secrets.toml") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        }
    }
    let home = dir.0.path().join("home");
    let opts = LoadOptions {
        paths: Paths {
            config: home.clone(),
            data: home.clone(),
            cache: home.join("cache"),
        },
        cwd: dir.0.path().join("ws/sub"),
        no_workspace: false,
        trust_workspace: true,
        env: &env,
    };
    let Err(err) = load(&opts) else { return };
    assert!(!err.problems.is_empty(), "an error without problems");
    let secret_texts: Vec<String> = files
        .iter()
        .filter(|(rel, _)| rel.ends_with("secrets.toml"))
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .collect();
    for p in &err.problems {
        let shown = p.render();
        // The exposed-secrets message of §3.3.2 carries its fix in the sentence.
        let fix = p.fix.as_deref().unwrap_or_default();
        assert!(
            !fix.trim().is_empty() || p.message.contains("Fix it with: chmod 600"),
            "no fix in:\n{shown}"
        );
        assert!(!p.message.trim().is_empty(), "no problem in:\n{shown}");
        match &p.at {
            Some((file, line)) => {
                assert!(
                    file.starts_with(&dir.0),
                    "not a configuration file:\n{shown}"
                );
                let text = std::fs::read(file).unwrap_or_default();
                let lines = text.iter().filter(|b| **b == b'\n').count() + 1;
                assert!(
                    *line >= 1 && *line <= lines,
                    "line {line} outside the file of {lines} lines:\n{shown}"
                );
            }
            None => assert!(
                shown.contains(&dir.0.path().display().to_string()),
                "the problem names no file:\n{shown}"
            ),
        }
        // A secrets.toml value never shows up in a problem (the file may be broken anywhere).
        for text in &secret_texts {
            for word in text.split(|c: char| !c.is_alphanumeric()) {
                if word.len() >= 12 && word.starts_with("s3cr3t") {
                    assert!(!shown.contains(word), "a secret is shown:\n{shown}");
                }
            }
        }
    }
}

/// Known keys, so random documents reach the validators and not only "unknown key".
const KEYS: &[&str] = &[
    "llm",
    "mcp",
    "project",
    "agent",
    "chat",
    "repl",
    "kind",
    "base_url",
    "model",
    "api_key",
    "api_key_env",
    "command",
    "args",
    "url",
    "headers",
    "env",
    "cwd",
    "type",
    "oauth",
    "scripts",
    "prompts",
    "priority",
    "text",
    "file",
    "membership",
    "role",
    "user",
    "temperature",
    "max_tokens",
    "context_window",
    "tool_timeout_secs",
    "connect_timeout_secs",
    "edit_mode",
    "history_size",
    "mcpServers",
    "openai",
    "anthropic",
    "stdio",
    "http",
    "sse",
    "local",
    "gh",
    "",
    "a.b",
    "é",
    "x\u{0}y",
];

#[derive(Clone, Debug)]
enum Doc {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Arr(Vec<Doc>),
    Table(Vec<(String, Doc)>),
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(KEYS).prop_map(str::to_string),
        1 => "[a-z_-]{1,12}",
        1 => any::<String>(),
    ]
}

fn doc() -> impl Strategy<Value = Doc> {
    let leaf = prop_oneof![
        proptest::sample::select(
            &[
                "openai",
                "stdio",
                "http",
                "secret:gh",
                "secret:",
                "${GH_TOKEN}",
                "${NOPE}",
                "${",
                "http://127.0.0.1:1/v1",
                "ftp://x",
                "",
                "vi",
                "developer",
                "npx",
                "../x",
            ][..]
        )
        .prop_map(|s| Doc::Str(s.to_string())),
        any::<String>().prop_map(Doc::Str),
        any::<i64>().prop_map(Doc::Int),
        any::<f64>().prop_map(Doc::Float),
        any::<bool>().prop_map(Doc::Bool),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Doc::Arr),
            proptest::collection::vec((key(), inner), 0..6).prop_map(Doc::Table),
        ]
    })
}

fn top() -> impl Strategy<Value = Vec<(String, Doc)>> {
    proptest::collection::vec((key(), doc()), 0..6)
}

fn to_json(d: &Doc) -> serde_json::Value {
    match d {
        Doc::Str(s) => s.clone().into(),
        Doc::Int(i) => (*i).into(),
        Doc::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into)
        }
        Doc::Bool(b) => (*b).into(),
        Doc::Arr(a) => a.iter().map(to_json).collect(),
        Doc::Table(t) => t.iter().map(|(k, v)| (k.clone(), to_json(v))).collect(),
    }
}

fn to_toml(d: &Doc) -> toml::Value {
    match d {
        Doc::Str(s) => s.clone().into(),
        Doc::Int(i) => (*i).into(),
        Doc::Float(f) => (*f).into(),
        Doc::Bool(b) => (*b).into(),
        Doc::Arr(a) => toml::Value::Array(a.iter().map(to_toml).collect()),
        Doc::Table(t) => {
            toml::Value::Table(t.iter().map(|(k, v)| (k.clone(), to_toml(v))).collect())
        }
    }
}

fn toml_text(t: &[(String, Doc)]) -> Vec<u8> {
    let table: toml::Table = t.iter().map(|(k, v)| (k.clone(), to_toml(v))).collect();
    toml::to_string(&table).unwrap_or_default().into_bytes()
}

fn json_text(t: &[(String, Doc)], wrap: bool) -> Vec<u8> {
    let obj: serde_json::Map<String, serde_json::Value> =
        t.iter().map(|(k, v)| (k.clone(), to_json(v))).collect();
    let v = if wrap {
        serde_json::json!({ "mcpServers": obj })
    } else {
        serde_json::Value::Object(obj)
    };
    serde_json::to_vec_pretty(&v).expect("JSON")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(which in 0..4usize, bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        check(&[(FILES[which], bytes)]);
    }

    #[test]
    fn random_toml_documents_are_reported(global in top(), ws in top()) {
        check(&[("home/config.toml", toml_text(&global)), ("ws/.katari/config.toml", toml_text(&ws))]);
    }

    #[test]
    fn random_json_documents_are_reported(servers in top(), plain in top(), wrap in any::<bool>()) {
        check(&[("home/mcp.json", json_text(&servers, true)), ("ws/.mcp.json", json_text(&plain, wrap))]);
    }

    #[test]
    fn random_secrets_files_are_reported(secrets in top(), bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
        let mut text = toml_text(&secrets);
        text.extend_from_slice(b"\ngh = \"s3cr3t-value-123\n");
        text.extend_from_slice(&bytes);
        check(&[
            ("home/config.toml", b"[llm.l]\nkind = \"openai\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:1/v1\"\napi_key = \"secret:gh\"\n".to_vec()),
            ("home/secrets.toml", text),
        ]);
    }
}

#[test]
fn deep_nesting_is_a_problem_not_a_crash() {
    let deep = 100_000;
    let toml = format!("x = {}1{}\n", "[".repeat(deep), "]".repeat(deep));
    let json = format!(
        "{{\"mcpServers\": {}1{}}}",
        "[".repeat(deep),
        "]".repeat(deep)
    );
    let inline = format!("x = {}1{}\n", "{a = ".repeat(deep), "}".repeat(deep));
    check(&[("home/config.toml", toml.into_bytes())]);
    check(&[("home/config.toml", inline.into_bytes())]);
    check(&[("home/mcp.json", json.into_bytes())]);
    check(&[(
        "home/config.toml",
        format!("{}x = 1\n", "[a.".repeat(deep)).into_bytes(),
    )]);
}

#[test]
fn huge_numbers_and_wrong_types_are_reported() {
    let text = "[llm.l]\nkind = \"openai\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:1/v1\"\n\
                max_tokens = 99999999999999999999999\ncontext_window = -1\ntemperature = 1e400\n\
                [repl]\nhistory_size = 9223372036854775807\nedit_mode = 3\n";
    check(&[("home/config.toml", text.as_bytes().to_vec())]);
    let json = "{\"mcpServers\": {\"a\": {\"command\": 1e999, \"args\": [1, null, {}], \"env\": []},\
                \"b\": {\"url\": 18446744073709551616, \"headers\": {\"x\": 1}}}}";
    check(&[("home/mcp.json", json.as_bytes().to_vec())]);
}

#[test]
fn non_utf8_files_name_the_file_and_line() {
    for rel in FILES {
        check(&[(rel, b"# ok\n\xff\xfe = 1\n".to_vec())]);
    }
}

#[test]
fn a_broken_secrets_file_does_not_show_its_values() {
    let config = b"[llm.l]\nkind = \"openai\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:1/v1\"\napi_key = \"secret:gh\"\n";
    for broken in [
        &b"gh = \"s3cr3t-value-123\n"[..],
        b"gh = \"s3cr3t-value-123\"\ngh = \"s3cr3t-value-456\"\n",
        b"gh = s3cr3t-value-123\n",
        b"gh = \"s3cr3t-value-123\xff\"\n",
    ] {
        check(&[
            ("home/config.toml", config.to_vec()),
            ("home/secrets.toml", broken.to_vec()),
        ]);
    }
}
