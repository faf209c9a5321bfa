//! The `katari` binary: parses the command line and dispatches to one module per command.
//!
//! Exit statuses follow `host.md` §2.2: 0 success, 1 something outside the command line failed
//! (here: output could not be written), 2 usage errors and programs with errors.

mod chat;
mod check;
mod cli;
mod config;
mod front;
mod host;
mod login;
mod manage;
mod mcp_cmd;
mod mcp_serve;
mod meta;
mod paths;
mod repl;
mod run;
mod spinner;
mod store;
mod table;

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use cli::{Cli, Command};

/// Scripts allocate on nearly every step (strings, records, data values); mimalloc's small-object
/// paths cost a fraction of glibc's (`docs/benchmarks.md`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let Cli {
        color,
        command,
        no_workspace,
        trust_workspace,
    } = cli::parse();
    // The configuration is loaded (and a broken one reported, exit 2) before a command that
    // uses it does anything else (`host.md` §4.1.3).
    let config = || config::init(no_workspace, trust_workspace, true).map_err(ExitCode::from);
    let no_color = std::env::var_os("NO_COLOR");
    let stderr_color = cli::use_color(color, io::stderr().is_terminal(), no_color.as_ref());
    match command {
        // Bare `katari` starts the REPL on a terminal, and is a usage error otherwise (§2.1).
        None if io::stdin().is_terminal() && io::stdout().is_terminal() => {
            if let Err(code) = config() {
                return code;
            }
            let status = repl::run(true, stderr_color);
            katari_runtime::mcp::client::shutdown();
            ExitCode::from(status)
        }
        None => {
            let _ = io::stderr().write_all(cli::usage().as_bytes());
            ExitCode::from(2)
        }
        Some(Command::Repl) => {
            if let Err(code) = config() {
                return code;
            }
            let terminal = io::stdin().is_terminal() && io::stdout().is_terminal();
            let status = repl::run(terminal, stderr_color);
            katari_runtime::mcp::client::shutdown();
            ExitCode::from(status)
        }
        Some(Command::Run(args)) => {
            if let Err(code) = config() {
                return code;
            }
            let opts = run::RunOptions {
                file: args.file,
                agent: args.agent,
                arg: args.arg,
                arg_file: args.arg_file,
                assignments: args.assign,
                answers: args.answers,
                json: args.json,
                color: stderr_color,
            };
            let status = run::run(&opts);
            // Configured stdio servers are stopped before the process ends (`host.md` §9.1.4).
            katari_runtime::mcp::client::shutdown();
            ExitCode::from(status)
        }
        Some(Command::Mcp {
            command: cli::McpTop::Serve(args),
        }) => {
            if let Err(code) = config() {
                return code;
            }
            let opts = mcp_serve::ServeOptions {
                file: args.file,
                agents: args.agents,
                listen: args.listen,
                no_auth: args.no_auth,
                color: stderr_color,
            };
            ExitCode::from(mcp_serve::run(&opts))
        }
        Some(Command::Mcp {
            command: cli::McpTop::Auth(command),
        }) => ExitCode::from(login::run(command)),
        Some(Command::Mcp {
            command: cli::McpTop::Pull(args),
        }) => {
            let opts = mcp_cmd::pull::PullOptions {
                url: args.url,
                out: args.out,
                headers: args.headers,
                oauth: args.oauth,
                force: args.force,
            };
            ExitCode::from(mcp_cmd::pull::run(&opts))
        }
        Some(Command::Mcp {
            command: cli::McpTop::List(args),
        }) => match config() {
            Ok(config) => ExitCode::from(mcp_cmd::list::run(&config, args.probe, args.json)),
            Err(code) => code,
        },
        Some(Command::Config { command }) => {
            ExitCode::from(config::command(command, no_workspace, trust_workspace))
        }
        Some(Command::Chat(args)) => {
            let status = chat::command::run(args, stderr_color, no_workspace, trust_workspace);
            // Configured stdio servers are stopped before the process ends (`host.md` §9.1.4).
            katari_runtime::mcp::client::shutdown();
            ExitCode::from(status)
        }
        Some(Command::Get { what }) => manage_command(manage::Request::Get(what), config),
        Some(Command::Describe { what }) => manage_command(manage::Request::Describe(what), config),
        Some(Command::Delete { what }) => manage_command(manage::Request::Delete(what), config),
        Some(Command::Agent { command }) => manage_command(manage::Request::Agent(command), config),
        Some(Command::Completions { shell }) => print_or_fail(&manage::complete::script(shell)),
        Some(Command::CompleteNames { kind }) => {
            print_or_fail(&manage::complete::names(kind, no_workspace))
        }
        Some(Command::Check(args)) => {
            let result = check::check(
                &args.files,
                args.format(),
                stderr_color,
                &mut io::stdout().lock(),
                &mut io::stderr().lock(),
            );
            match result {
                Ok(check::Outcome::Clean) => ExitCode::SUCCESS,
                Ok(check::Outcome::Errors) => ExitCode::from(2),
                Err(err) => output_failed(&err),
            }
        }
    }
}

/// `get`, `describe`, `delete` and `agent` (`host.md` §6), once the configuration is loaded.
fn manage_command(
    request: manage::Request,
    config: impl FnOnce() -> Result<std::sync::Arc<config::Config>, ExitCode>,
) -> ExitCode {
    match config() {
        Ok(config) => ExitCode::from(manage::run(request, &config)),
        Err(code) => code,
    }
}

/// Writes `text` on stdout: success, or exit 1 when it cannot be written.
fn print_or_fail(text: &str) -> ExitCode {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => output_failed(&err),
    }
}

/// Reports that stdout or stderr could not be written (a closed pipe, a full disk).
fn output_failed(err: &io::Error) -> ExitCode {
    let _ = writeln!(io::stderr(), "error: cannot write output: {err}");
    ExitCode::from(1)
}
