//! No Rust panic escapes the evaluator on any program that checks: example and conformance
//! programs, mutated at the token level, are loaded, checked and — when clean — run with a step
//! limit and a small call-depth limit, in a bounded property test.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use katari_lang::lexer::lex;
use katari_lang::source::FileId;
use katari_runtime::machine::Ctx;
use proptest::prelude::*;

fn seeds() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in ["examples", "tests/scripts/conformance"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "kt"))
            .collect();
        paths.sort();
        for p in paths {
            // Scripts that wait on the network or the listener are left out.
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            if !text.contains("mcp.")
                && !text.contains("webhook.")
                && !text.contains("http.")
                && !text.contains("time.sleep")
            {
                out.push(text);
            }
        }
    }
    assert!(
        out.len() >= 20,
        "expected the example and conformance programs as seeds, found {}",
        out.len()
    );
    out
}

/// Applies token-level edits: delete, duplicate or swap tokens, replace literals.
fn mutate(text: &str, edits: &[(u8, usize, usize)]) -> String {
    let tokens = lex(FileId(0), text).tokens;
    if tokens.is_empty() {
        return text.to_string();
    }
    let mut pieces: Vec<String> = tokens
        .iter()
        .map(|(_, s)| text[s.range()].to_string())
        .collect();
    let gaps: Vec<String> = {
        let mut g = Vec::new();
        let mut prev = 0;
        for (_, s) in &tokens {
            g.push(text[prev..s.start as usize].to_string());
            prev = s.end as usize;
        }
        g.push(text[prev..].to_string());
        g
    };
    for (kind, a, b) in edits {
        let n = pieces.len();
        let (i, j) = (a % n, b % n);
        match kind % 5 {
            0 => pieces[i] = String::new(),
            1 => pieces[i] = format!("{} {}", pieces[i], pieces[i]),
            2 => pieces.swap(i, j),
            3 => {
                pieces[i] =
                    ["0", "-1", "1.5", "\"\"", "null", "true", "[]", "{}"][j % 8].to_string()
            }
            _ => pieces[i] = pieces[j].clone(),
        }
    }
    let mut out = String::new();
    for (k, p) in pieces.iter().enumerate() {
        out.push_str(&gaps[k]);
        out.push_str(p);
    }
    out.push_str(gaps.last().map(String::as_str).unwrap_or(""));
    out
}

/// Loads, checks and, when clean, runs `main` with limits; returns whether it ran.
fn load_and_run(text: &str) -> bool {
    let Ok(mut machine) = common::lowered("/fuzz/prog.kt", text) else {
        return false;
    };
    machine.step_limit = 20_000;
    machine.max_depth = 300;
    let machine = Arc::new(machine);
    let Some(main) = machine.by_name.get("prog.main").cloned() else {
        return false;
    };
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024 * 1024)
        .spawn(move || {
            let mut ctx = Ctx::new(machine);
            let _ = ctx.call(&main, Vec::new());
        });
    match handle {
        Ok(h) => {
            assert!(h.join().is_ok(), "the evaluator panicked on:\n{text}");
            true
        }
        Err(_) => false,
    }
}

#[test]
fn every_seed_runs_without_a_rust_panic() {
    let mut ran = 0;
    for seed in seeds() {
        if load_and_run(&seed) {
            ran += 1;
        }
    }
    assert!(ran >= 15, "most seeds should check and run, only {ran} did");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, max_shrink_iters: 50, .. ProptestConfig::default() })]

    #[test]
    fn mutated_programs_never_panic(seed in 0usize..1000, edits in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..4)) {
        let seeds = seeds();
        let text = mutate(&seeds[seed % seeds.len()], &edits);
        let _ = load_and_run(&text);
    }
}
