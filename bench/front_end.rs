//! Front-end benchmark: times lexing, layout, parsing and loading with name resolution of a
//! generated 10,000-line program and of the whole prelude, and prints a table of medians.
//!
//! Run it with `cargo bench -p katari-lang --bench front_end` (or `bench/run.sh`, which also
//! records the table in docs/benchmarks.md). It measures and reports; it never asserts on time.
//! Arguments: `--runs N` (default 21) and `--lines N` (default 10000); cargo's own `--bench`
//! argument is ignored.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use katari_lang::layout::layout;
use katari_lang::lexer::lex;
use katari_lang::load::{MemoryFs, load_program};
use katari_lang::parser::parse;
use katari_lang::source::FileId;

/// One unit of the generated program: data types, a synonym, a request, a generic agent, and agents
/// with `match`, `for` with state, `then`, `break`, handlers with state, templates, records,
/// anonymous agents and partial application. `#N#` is replaced by the unit's number.
const UNIT: &str = r#"// ---- unit #N#: a catalogue of items and notes ----

@"An item of unit #N#, with its tags."
data item_#N#(id: integer, name: string, tags: array[string], price: number ?= 0.0)

@"A free-form note of unit #N#."
data note_#N#(text: string, pinned: boolean ?= false)

// Entries are either items or notes.
type entry_#N# = item_#N# | note_#N#

@"Looks up the display label for `key`; the handler decides where labels come from."
request label_#N#(key: string) -> string | null

@"The first element of `items`, or `fallback` when there is none."
agent first_or_#N#[T](items: array[T], fallback: T) -> T {
  match (array.get(target = items, index = 0)) {
    case null -> fallback
    case found -> found
  }
}

@"Summarises `entries`: how many items, their names, and the notes that are too long."
agent summarise_#N#(entries: array[entry_#N#], limit: integer ?= 10) -> string with label_#N# {
  let header = f"unit #N#: limit ${string.to_string(value = limit)}"
  let totals = for (let e in entries, var count = 0, var names: array[string] = []) {
    match (e) {
      case item_#N#(id, name, tags) -> {
        let tagged = string.join(parts = tags, separator = "+")
        next id with { count = count + 1, names = array.append(target = names, value = f"${name}[${tagged}]") }
      }
      case note_#N#(text, pinned => true) -> {
        break [0 - string.length(value = text)]
      }
      case note_#N#(text) -> {
        if (string.length(value = text) > limit) {
          next 0 - 1
        } else {
          next 0
        }
      }
    }
  } then (ids) {
    { ids = ids, count = count, names = names }
  }
  let shown = match (label_#N#(key = header)) {
    case null -> "no label"
    case text -> text
  }
  let first = first_or_#N#(items = totals.names, fallback = "nothing")
  f"${header} (${shown}): ${string.to_string(value = totals.count)} items, first ${first}, all ${string.join(parts = totals.names, separator = ", ")}"
}

@"Scales every price in `items` by `factor`, keeping the cheap ones unchanged."
agent reprice_#N#(items: array[item_#N#], factor: number) -> array[number] {
  let scale = agent (price: number, by: number) -> number { price * by }
  let cheap = array.filter(target = items, keep = agent (value: item_#N#) -> boolean { value.price < 1.5 })
  let by_factor = scale(price = _, by = factor)
  for (let it in items) {
    if (array.length(target = cheap) > 0 && it.price >= 1.5 || it.id == #N#) {
      next by_factor(price = it.price)
    } else {
      next it.price
    }
  }
}

@"Runs unit #N# with labels from a counting handler."
agent run_#N#() -> string {
  use handler (var calls = 0) {
    request label_#N#(key: string) {
      next f"label ${string.to_string(value = calls)} for ${key}" with { calls = calls + 1 }
    }
  } then (result) {
    f"${result} after ${string.to_string(value = calls)} lookups"
  }
  let entries: array[entry_#N#] = [
    item_#N#(id = 1, name = "pear", tags = ["fruit", "green"]),
    note_#N#(text = "remember the figs"),
    item_#N#(id = 2, name = "fig", tags = [], price = 2.5),
    note_#N#(text = "pinned", pinned = true),
  ]
  let stock = { pears = 7, figs = 3, "dried plums" = 0 }
  let total = (stock.pears + 2) * 3 - stock.figs / 2 % 5
  let prices = reprice_#N#(items = [item_#N#(id = total, name = "plum", tags = ["dried"])], factor = 1.25)
  summarise_#N#(entries = entries, limit = total + array.length(target = prices))
}
"#;

/// The generated program: as many units as it takes to reach `lines` lines, then a `main`.
fn generate(lines: usize) -> String {
    let unit_lines = UNIT.lines().count();
    let units = lines.div_ceil(unit_lines).max(1);
    let mut text = String::with_capacity(units * UNIT.len() + 256);
    for n in 0..units {
        text.push_str(&UNIT.replace("#N#", &n.to_string()));
        text.push('\n');
    }
    text.push_str("@\"Runs the first and the last unit.\"\nagent main() -> string {\n");
    text.push_str(&format!(
        "  f\"${{run_0()}}\\n${{run_{}()}}\"\n}}\n",
        units - 1
    ));
    text
}

/// One measured stage: a name for the table, the size of its input, and the work.
struct Stage<'a> {
    input: &'static str,
    stage: &'static str,
    lines: usize,
    bytes: usize,
    work: Box<dyn FnMut() + 'a>,
}

impl<'a> Stage<'a> {
    fn new(
        input: &'static str,
        stage: &'static str,
        (lines, bytes): (usize, usize),
        work: impl FnMut() + 'a,
    ) -> Stage<'a> {
        Stage {
            input,
            stage,
            lines,
            bytes,
            work: Box::new(work),
        }
    }
}

/// Runs every stage `runs` times after two warm-up rounds, round-robin (one run of each stage per
/// round), so that a burst of load from elsewhere on the machine slows all stages alike rather than
/// one of them. Returns one row per stage.
fn measure(runs: usize, mut stages: Vec<Stage<'_>>) -> Vec<Row> {
    let mut times: Vec<Vec<Duration>> = stages.iter().map(|_| Vec::with_capacity(runs)).collect();
    for round in 0..runs + 2 {
        for (stage, times) in stages.iter_mut().zip(&mut times) {
            let start = Instant::now();
            (stage.work)();
            if round >= 2 {
                times.push(start.elapsed());
            }
        }
    }
    stages
        .iter()
        .zip(&mut times)
        .map(|(stage, times)| {
            times.sort();
            Row::new(stage.input, stage.stage, stage.lines, stage.bytes, times)
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One row of the result table.
struct Row {
    input: &'static str,
    stage: &'static str,
    lines: usize,
    bytes: usize,
    median: Duration,
    min: Duration,
}

impl Row {
    fn new(
        input: &'static str,
        stage: &'static str,
        text_lines: usize,
        bytes: usize,
        times: &[Duration],
    ) -> Row {
        let median = times.get(times.len() / 2).copied().unwrap_or_default();
        let min = times.first().copied().unwrap_or_default();
        Row {
            input,
            stage,
            lines: text_lines,
            bytes,
            median,
            min,
        }
    }

    fn print(&self) {
        let per_second = |count: usize| {
            let secs = self.median.as_secs_f64();
            if secs > 0.0 {
                count as f64 / secs
            } else {
                f64::INFINITY
            }
        };
        println!(
            "| {} | {} | {} | {} | {:.2} | {:.2} | {:.0} | {:.1} |",
            self.input,
            self.stage,
            self.lines,
            self.bytes,
            ms(self.median),
            ms(self.min),
            per_second(self.lines) / 1000.0,
            per_second(self.bytes) / 1e6,
        );
    }
}

/// Reads `--runs N` and `--lines N`; everything else (cargo's `--bench`) is ignored.
fn args() -> (usize, usize) {
    let mut runs = 21;
    let mut lines = 10_000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = match arg.as_str() {
            "--runs" => &mut runs,
            "--lines" => &mut lines,
            _ => continue,
        };
        match args.next().and_then(|v| v.parse().ok()) {
            Some(n) if n > 0 => *value = n,
            _ => {
                eprintln!("{arg} needs a positive number");
                std::process::exit(2);
            }
        }
    }
    (runs, lines)
}

fn main() {
    let (runs, target_lines) = args();
    let program = generate(target_lines);
    let lines = program.lines().count();
    let prelude = katari_prelude::sources();
    let prelude_lines: usize = prelude.iter().map(|p| p.text.lines().count()).sum();
    let prelude_bytes: usize = prelude.iter().map(|p| p.text.len()).sum();

    // The numbers mean something only if the program is what it claims to be.
    let parsed = parse(FileId(0), &program);
    let syntax_errors: Vec<_> = parsed.diagnostics.iter().filter(|d| d.is_error()).collect();
    if !syntax_errors.is_empty() {
        eprintln!(
            "the generated program has {} syntax errors; the first: {:#?}",
            syntax_errors.len(),
            syntax_errors[0]
        );
        std::process::exit(1);
    }
    let fs = MemoryFs::new().with("bench.kt", program.as_bytes());
    let loaded = load_program(Path::new("bench.kt"), &fs, &prelude);
    let load_errors: Vec<_> = loaded.diagnostics.iter().filter(|d| d.is_error()).collect();
    if let Some(first) = load_errors.first() {
        eprintln!(
            "warning: loading the generated program reports {} errors; the first: {}",
            load_errors.len(),
            first.message
        );
    }
    let checked = katari_lang::check::check_program(&loaded, &katari_lang::check::AllNatives);
    let type_errors = checked.diagnostics.iter().filter(|d| d.is_error()).count();
    if type_errors > 0 {
        eprintln!("warning: checking the generated program reports {type_errors} errors");
    }
    let tiny = MemoryFs::new().with("tiny.kt", "agent main() -> integer { 1 }\n");

    let generated = (lines, program.len());
    let whole_prelude = (prelude_lines, prelude_bytes);
    let rows = measure(
        runs,
        vec![
            Stage::new("generated", "lex", generated, || {
                drop(black_box(lex(FileId(0), &program)))
            }),
            Stage::new("generated", "lex + layout", generated, || {
                drop(black_box(layout(&program, lex(FileId(0), &program).tokens)))
            }),
            Stage::new("generated", "lex + layout + parse", generated, || {
                drop(black_box(parse(FileId(0), &program)))
            }),
            Stage::new(
                "generated",
                "load + resolve (with prelude)",
                generated,
                || {
                    drop(black_box(load_program(
                        Path::new("bench.kt"),
                        &fs,
                        &prelude,
                    )))
                },
            ),
            Stage::new(
                "generated",
                "load + resolve + check (with prelude)",
                generated,
                || {
                    let program = load_program(Path::new("bench.kt"), &fs, &prelude);
                    let checked = katari_lang::check::check_program(
                        &program,
                        &katari_lang::check::AllNatives,
                    );
                    drop(black_box((program, checked)))
                },
            ),
            Stage::new(
                "prelude (14 files)",
                "load + resolve + check (1-line entry)",
                whole_prelude,
                || {
                    let program = load_program(Path::new("tiny.kt"), &tiny, &prelude);
                    let checked = katari_lang::check::check_program(
                        &program,
                        &katari_lang::check::AllNatives,
                    );
                    drop(black_box((program, checked)))
                },
            ),
            Stage::new(
                "prelude (14 files)",
                "lex + layout + parse",
                whole_prelude,
                || {
                    for p in &prelude {
                        drop(black_box(parse(FileId(0), p.text)));
                    }
                },
            ),
            Stage::new(
                "prelude (14 files)",
                "load + resolve (1-line entry)",
                whole_prelude,
                || {
                    drop(black_box(load_program(
                        Path::new("tiny.kt"),
                        &tiny,
                        &prelude,
                    )))
                },
            ),
        ],
    );

    println!(
        "Median and fastest of {runs} runs (after 2 warm-up rounds; stages interleaved), release build."
    );
    println!();
    println!("| input | stage | lines | bytes | median ms | min ms | k lines/s | MB/s |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        row.print();
    }
    // Where the time goes, as shares of the medians: stages are timed cumulatively above.
    let [lexing, laying, parsing, loading] = [0, 1, 2, 3].map(|i| ms(rows[i].median));
    let share = |part: f64| {
        if parsing > 0.0 {
            100.0 * part / parsing
        } else {
            0.0
        }
    };
    println!();
    println!(
        "Generated program: of lex + layout + parse, the lexer takes {:.0}%, the layout pass {:.0}%, \
         the parser {:.0}%; loading (prelude included) and resolving take {:.2}x the time of parsing.",
        share(lexing),
        share(laying - lexing),
        share(parsing - laying),
        if parsing > 0.0 {
            loading / parsing
        } else {
            0.0
        },
    );
    let checking = ms(rows[4].median);
    println!(
        "Type checking the generated program (with the prelude) takes {:.1} ms on top of loading.",
        (checking - loading).max(0.0)
    );
}
