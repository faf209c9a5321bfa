//! The command line (`host.md` §2): clap definitions of the subcommands and global flags, and the
//! colour decision of §2.3.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

/// The katari command-line host.
#[derive(Debug, Parser)]
#[command(
    name = "katari",
    version,
    propagate_version = true,
    about = "Runs and checks katari agent scripts.",
    after_help = "Bare `katari` starts the REPL on a terminal; otherwise it prints this help and exits with status 2."
)]
pub struct Cli {
    /// When to colour output.
    ///
    /// `auto` colours only a terminal, and only when NO_COLOR is unset or empty; `always` colours
    /// even when NO_COLOR is set; `never` does not colour.
    #[arg(long, value_enum, global = true, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Ignore the workspace files (`.katari/config.toml` and `.mcp.json`).
    #[arg(long, global = true)]
    pub no_workspace: bool,

    /// Trust the workspace's configuration and start its stdio MCP servers without asking, for
    /// this invocation only (nothing is stored).
    #[arg(long, global = true)]
    pub trust_workspace: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an agent of a script (default `main`).
    #[command(long_about = "Run an agent of a script (default `main`).\n\n\
        The result is printed on stdout (a string raw, anything else as wire JSON); failures go to \
        stderr with exit status 1, usage and program errors with 2, Ctrl-C with 130.")]
    Run(RunArgs),
    /// Check scripts without running them: parse, resolve names, and type-check.
    #[command(
        long_about = "Check scripts without running them: parse, resolve names, and type-check.\n\n\
        Diagnostics are printed on stderr, or with --format json as one JSON object per line on \
        stdout. The exit status is 0 when there are no errors (warnings allowed) and 2 otherwise."
    )]
    Check(CheckArgs),
    /// Show where katari keeps its files, and the effective configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Start the interactive REPL (plain, without prompts, when stdin is not a terminal).
    #[command(
        long_about = "Start the interactive REPL: declarations, `let`s and expressions are \
        checked and evaluated as they are entered; .help lists the commands.\n\n\
        With stdin not a terminal, inputs are read and evaluated in turn without prompts; the \
        exit status is 1 when any input produced an error."
    )]
    Repl,
    /// MCP: OAuth login and credentials, publish script agents, generate typed bindings, list servers.
    Mcp {
        #[command(subcommand)]
        command: McpTop,
    },
    /// Chat with an agent or a project's LLM: interactive, or one message with -m.
    #[command(
        long_about = "Chat with an agent (alone, or viewing a project with --project) or with a \
        project's own LLM (--project without AGENT). Without -m the chat is interactive and \
        needs a terminal; with -m one message is sent, the reply printed on stdout and the thread \
        id on stderr. Threads are stored and resumed with --thread ID."
    )]
    Chat(crate::chat::args::ChatArgs),
    /// List agents, projects, memberships or threads, or print one thread's messages.
    #[command(
        long_about = "List agents, projects, memberships or threads as an aligned table (or a \
        JSON array with --json), or print one thread's messages. An empty list prints a hint on \
        stderr."
    )]
    Get {
        #[command(subcommand)]
        what: GetCommand,
    },
    /// Show one agent, project, membership or thread in full.
    Describe {
        #[command(subcommand)]
        what: DescribeCommand,
    },
    /// Remove an agent, a project or a membership from the configuration, or delete a thread.
    #[command(
        long_about = "Remove an agent, a project or a membership from the configuration file \
        that defines it (keeping every comment and all formatting), or delete a thread.\n\n\
        A delete that removes threads asks for confirmation on a terminal; without one it needs \
        --yes."
    )]
    Delete {
        #[command(subcommand)]
        what: DeleteCommand,
    },
    /// Add an agent to a project, or remove it: memberships.
    Agent {
        #[command(subcommand)]
        command: AgentCommand,
    },
    /// Print a shell completion script for bash, zsh or fish.
    #[command(
        long_about = "Print a shell completion script for bash, zsh or fish on stdout. It \
        completes every command and flag, and asks katari for the configured agent, project, llm \
        and server names where one is expected.\n\n\
        For example: katari completions bash > ~/.local/share/bash-completion/completions/katari"
    )]
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// The configured names of one kind, one a line, for the completion scripts.
    #[command(name = "__complete-names", hide = true)]
    CompleteNames {
        #[arg(value_enum)]
        kind: NameKind,
    },
}

/// The shells `katari completions` writes scripts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// What `katari __complete-names` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NameKind {
    Agents,
    Projects,
    Llms,
    Servers,
}

#[derive(Debug, Subcommand)]
pub enum GetCommand {
    /// List the configured agents (with --project: that project's members).
    Agents {
        /// Only the members of this project, with their role and brain.
        #[arg(long, value_name = "PROJECT")]
        project: Option<String>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List the configured projects.
    Projects {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List memberships: which agent is in which project, with its role and brain.
    Memberships {
        /// Only this agent's memberships.
        #[arg(long, value_name = "AGENT")]
        agent: Option<String>,
        /// Only the memberships in this project.
        #[arg(long, value_name = "PROJECT")]
        project: Option<String>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List stored threads: every agent thread and your own project threads.
    Threads {
        /// Only this agent's threads.
        #[arg(long, value_name = "AGENT", conflicts_with = "project")]
        agent: Option<String>,
        /// Only your threads of this project.
        #[arg(long, value_name = "PROJECT")]
        project: Option<String>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print the messages of one thread.
    Thread {
        /// The thread's id, or a unique prefix of at least 8 characters.
        #[arg(value_name = "ID")]
        id: String,
        /// Print one JSON object {"thread", "messages"} instead.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum DescribeCommand {
    /// Show an agent: its file, llm, prompts, parameters, personalities and memberships.
    Agent {
        /// The agent's name.
        #[arg(value_name = "AGENT")]
        agent: String,
        /// Print one JSON object instead.
        #[arg(long)]
        json: bool,
    },
    /// Show a project: its file, llm, prompts, servers, script tools and members.
    Project {
        /// The project's name.
        #[arg(value_name = "PROJECT")]
        project: String,
        /// Print one JSON object instead.
        #[arg(long)]
        json: bool,
    },
    /// Show an agent's membership in a project and what the project adds to its chats.
    Membership {
        /// The agent's name.
        #[arg(value_name = "AGENT")]
        agent: String,
        /// The project.
        #[arg(long, value_name = "PROJECT")]
        project: String,
        /// Print one JSON object instead.
        #[arg(long)]
        json: bool,
    },
    /// Show a thread: scope, owner, title, times, turns and whether its last turn was interrupted.
    Thread {
        /// The thread's id, or a unique prefix of at least 8 characters.
        #[arg(value_name = "ID")]
        id: String,
        /// Print one JSON object instead.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum DeleteCommand {
    /// Remove [agent.NAME] with all its sub-tables, and delete the agent's threads.
    Agent {
        /// The agent's name.
        #[arg(value_name = "AGENT")]
        agent: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Remove [project.NAME] and delete the project's threads; refused while agents are members.
    Project {
        /// The project's name.
        #[arg(value_name = "PROJECT")]
        project: String,
        /// Remove the project's memberships from their agents as well.
        #[arg(long)]
        force: bool,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Remove an agent's membership in a project (the same as `katari agent leave`).
    Membership {
        /// The agent's name.
        #[arg(value_name = "AGENT")]
        agent: String,
        /// The project.
        #[arg(long, value_name = "PROJECT")]
        project: String,
    },
    /// Delete one thread and its messages.
    Thread {
        /// The thread's id, or a unique prefix of at least 8 characters.
        #[arg(value_name = "ID")]
        id: String,
        /// Delete another user's project thread too.
        #[arg(long)]
        force: bool,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Add the agent to a project, or update its role and brain there.
    #[command(
        long_about = "Add the agent to a project, or update its role and brain there (running it \
        again changes nothing). Only the flags given change an existing membership; an empty \
        value (--role '' or --llm '') removes that key."
    )]
    Join {
        /// The agent's name.
        #[arg(value_name = "AGENT")]
        agent: String,
        /// The project to join.
        #[arg(long, value_name = "PROJECT")]
        project: String,
        /// The agent's role in the project (developer, qa, security, sre).
        #[arg(long, value_name = "ROLE")]
        role: Option<String>,
        /// The llm the agent uses in this project instead of its own.
        #[arg(long, value_name = "LLM")]
        llm: Option<String>,
    },
    /// Remove the agent from a project (its threads are kept).
    Leave {
        /// The agent's name.
        #[arg(value_name = "AGENT")]
        agent: String,
        /// The project to leave.
        #[arg(long, value_name = "PROJECT")]
        project: String,
    },
}

/// The `mcp` subcommands: those of [`McpCommand`] (handled by `login.rs`), `serve`, `pull` and `list`.
#[derive(Debug, Subcommand)]
pub enum McpTop {
    #[command(flatten)]
    Auth(McpCommand),
    /// Publish a script's documented agents as an MCP server (stdio, or HTTP with --listen).
    #[command(
        long_about = "Publish a script's documented top-level agents (or those named by --agents) \
        as MCP tools.\n\n\
        By default (and with --stdio) newline-delimited JSON-RPC is served on stdin/stdout; with \
        --listen, Streamable HTTP at http://HOST:PORT/mcp, with a bearer token printed on stderr \
        unless --no-auth (loopback addresses only). Ctrl-C, or the end of stdin in stdio mode, \
        stops the server with status 0."
    )]
    Serve(ServeArgs),
    /// Generate a module of typed bindings for the tools of an MCP server.
    #[command(
        long_about = "Generate a module of typed bindings for the tools of an MCP server.\n\n\
        Connects (Streamable HTTP, falling back to legacy HTTP+SSE), lists every tool and writes \
        FILE: one `connect` agent returning a typed agent per tool, each calling mcp.call. Header \
        values may be secret:KEY references to secrets.toml; neither they nor tokens are written \
        to FILE."
    )]
    Pull(PullArgs),
    /// List the configured MCP servers; --probe connects to each one.
    List(ListArgs),
}

#[derive(Debug, Args)]
pub struct PullArgs {
    /// The MCP server's URL (http or https).
    #[arg(long, value_name = "URL")]
    pub url: String,

    /// The module file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,

    /// A header sent on every request, as NAME=VALUE (VALUE may be secret:KEY); repeatable.
    #[arg(long = "header", value_name = "K=V")]
    pub headers: Vec<String>,

    /// Authenticate with this stored OAuth credential (see `katari mcp login`).
    #[arg(long, value_name = "NAME")]
    pub oauth: Option<String>,

    /// Overwrite FILE when it exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Connect to every server (10 s limit each) and add status, protocol, capabilities and
    /// counts.
    #[arg(long)]
    pub probe: bool,

    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The script whose agents to publish.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Publish only these agents (comma-separated names); default: every documented one.
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    pub agents: Option<Vec<String>>,

    /// Serve JSON-RPC on stdin/stdout, one message per line (the default).
    #[arg(long, conflicts_with = "listen")]
    pub stdio: bool,

    /// Serve Streamable HTTP at http://HOST:PORT/mcp (HOST defaults to 127.0.0.1; port 0 picks
    /// a free port).
    #[arg(long, value_name = "[HOST:]PORT")]
    pub listen: Option<String>,

    /// Do not require the bearer token (allowed only on a loopback address).
    #[arg(long)]
    pub no_auth: bool,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Log in to an MCP server with OAuth and store the credential under NAME.
    #[command(
        long_about = "Log in to an MCP server with OAuth and store the credential under NAME.\n\n\
        Discovers the authorization server, registers katari as a client (unless --client-id), \
        prints the authorization URL on stderr and opens it in a browser ($BROWSER when set), then \
        waits for the redirect on a loopback port."
    )]
    Login(LoginArgs),
    /// List stored OAuth credentials (never their tokens).
    Credentials {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Delete a stored OAuth credential.
    Logout {
        /// The credential's name.
        #[arg(value_name = "NAME")]
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The MCP server's URL (https, or http on localhost).
    #[arg(long, value_name = "URL")]
    pub url: String,

    /// The name to store the credential under.
    #[arg(long, value_name = "NAME")]
    pub name: String,

    /// The scope to ask for (default: what the server advertises).
    #[arg(long, value_name = "S")]
    pub scope: Option<String>,

    /// Do not open a browser; only print the URL.
    #[arg(long)]
    pub no_browser: bool,

    /// Use this pre-registered client id instead of dynamic registration.
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,

    /// The environment variable holding the pre-registered client's secret.
    #[arg(long, value_name = "VAR", requires = "client_id")]
    pub client_secret_env: Option<String>,

    /// How long to wait for the browser's redirect, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The script to run.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The top-level agent to run.
    #[arg(value_name = "AGENT")]
    pub agent: Option<String>,

    /// The argument object as JSON, e.g. '{"name":"ada"}'.
    #[arg(long, value_name = "JSON", conflicts_with = "arg_file")]
    pub arg: Option<String>,

    /// Read the argument object from a file.
    #[arg(long, value_name = "PATH")]
    pub arg_file: Option<PathBuf>,

    /// Set one argument: the value is JSON when it parses, a string otherwise.
    #[arg(short = 'a', value_name = "NAME=VALUE")]
    pub assign: Vec<String>,

    /// Answers for unhandled requests: a JSON object of arrays by qualified request name.
    #[arg(long, value_name = "PATH")]
    pub answers: Option<PathBuf>,

    /// Print every result as wire JSON (a string result quoted).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The scripts to check; each is loaded with the modules it imports.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// How to print diagnostics.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
}

impl CheckArgs {
    /// The format asked for, with `--json` standing for `--format json`.
    pub fn format(&self) -> Format {
        if self.json { Format::Json } else { self.format }
    }
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the location of every file and folder katari uses (`(missing)` when absent).
    Path {
        /// Print one JSON object instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Print the effective merged configuration, each entity with the file it came from.
    #[command(
        long_about = "Print the effective merged configuration as TOML, each entity preceded by a \
        comment naming the file it came from. Secret references are shown as written, never \
        resolved; MCP header and env values are shown as <hidden>."
    )]
    Show {
        /// Print JSON instead of TOML.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Rendered diagnostics with source snippets, on stderr.
    Text,
    /// One JSON object per diagnostic per line, on stdout.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Parses the process's arguments, exiting with clap's message on `--help`, `--version` (status
/// 0) or a usage error (status 2).
pub fn parse() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    match try_parse(&args, clap_color(&args)) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    }
}

/// [`parse`] without exiting: the parsed command line, or the error to print (whose exit code
/// is 0 for `--help` and `--version`, 2 for usage errors).
fn try_parse(args: &[OsString], color: clap::ColorChoice) -> Result<Cli, clap::Error> {
    let mut cmd = command().color(color);
    let mut matches = cmd
        .try_get_matches_from_mut(args)
        .map_err(|err| with_nearest_spelling(err, args))?;
    Cli::from_arg_matches_mut(&mut matches)
}

/// The clap command, with every subcommand's `--version` saying `katari X.Y.Z` as the top
/// level does (`host.md` §2.1), rather than clap's `katari-check X.Y.Z` or `katari-path X.Y.Z`.
pub fn command() -> clap::Command {
    fn name_katari(cmd: clap::Command) -> clap::Command {
        cmd.display_name("katari").mut_subcommands(name_katari)
    }
    Cli::command().mut_subcommands(name_katari)
}

/// The farthest a misspelling may be from a valid spelling for the usage error to name it
/// (`host.md` §2.1.2).
const SUGGESTION_DISTANCE: usize = 2;

/// Replaces clap's own "a similar … exists" tip of an unknown subcommand or flag with the
/// nearest valid spelling within [`SUGGESTION_DISTANCE`] edits (`host.md` §2.1.2). clap's
/// similarity measure both misses close spellings (`rn` for `run`, `--ags` for `--arg`) and
/// offers far ones (`config` for `configure`).
fn with_nearest_spelling(mut err: clap::Error, args: &[OsString]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let (invalid_kind, suggested_kind) = match err.kind() {
        ErrorKind::InvalidSubcommand => (
            ContextKind::InvalidSubcommand,
            ContextKind::SuggestedSubcommand,
        ),
        ErrorKind::UnknownArgument => (ContextKind::InvalidArg, ContextKind::SuggestedArg),
        _ => return err,
    };
    let Some(ContextValue::String(invalid)) = err.get(invalid_kind).cloned() else {
        return err;
    };
    let mut cmd = command();
    cmd.build();
    let (leaf, typed) = failing_command(&cmd, args, &invalid);
    let nearest = if suggested_kind == ContextKind::SuggestedSubcommand {
        let names = leaf.get_subcommands().map(|s| s.get_name().to_string());
        nearest(&typed, names)
    } else if typed.starts_with('-') {
        let flags = leaf.get_arguments().flat_map(|a| {
            let long = a.get_long().map(|l| format!("--{l}"));
            let short = a.get_short().map(|s| format!("-{s}"));
            long.into_iter().chain(short)
        });
        nearest(&typed, flags)
    } else {
        // A stray positional argument: there is no spelling to suggest.
        return err;
    };
    err.remove(suggested_kind);
    // clap's usage line names the flag it suggested (`Usage: katari check --no-workspace
    // <FILE>...`); the command's own usage line is what goes with our suggestion.
    let mut leaf = leaf.clone();
    err.insert(
        ContextKind::Usage,
        ContextValue::StyledStr(leaf.render_usage()),
    );
    // An empty list of other tips still costs a blank line.
    if matches!(err.get(ContextKind::Suggested), Some(ContextValue::StyledStrs(tips)) if tips.is_empty())
    {
        err.remove(ContextKind::Suggested);
    }
    if let Some(nearest) = nearest {
        // clap's other tip (`to pass '--x' as a value, use '-- --x'`) would only distract.
        err.remove(ContextKind::Suggested);
        err.insert(suggested_kind, ContextValue::String(nearest));
    }
    err
}

/// The (built) command in which parsing stopped at `invalid`, and the word as typed: clap
/// reports `-json` as its first letter `-j`, but the nearest spelling of `-json` is `--json`.
fn failing_command<'a>(
    top: &'a clap::Command,
    args: &[OsString],
    invalid: &str,
) -> (&'a clap::Command, String) {
    let mut cmd = top;
    for word in args.iter().skip(1).map(|w| w.to_string_lossy()) {
        if word == "--" {
            break;
        }
        let flag_name = word.split('=').next().unwrap_or_default();
        if word == invalid || flag_name == invalid {
            return (cmd, flag_name.to_string());
        }
        if invalid.len() == 2 && !word.starts_with("--") && word.starts_with(invalid) {
            return (cmd, word.into_owned());
        }
        if let Some(sub) = cmd.find_subcommand(word.as_ref()) {
            cmd = sub;
        }
    }
    (cmd, invalid.to_string())
}

/// The candidate nearest to `typed` when it is within [`SUGGESTION_DISTANCE`] edits and no
/// other candidate is as near: a one-letter flag is one edit from every other one-letter flag,
/// and naming one of them at random would mislead.
fn nearest(typed: &str, candidates: impl Iterator<Item = String>) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    let mut tied = false;
    for candidate in candidates {
        let distance = katari_lang::suggest::edit_distance(typed, &candidate);
        if distance == 0 || distance > SUGGESTION_DISTANCE {
            continue;
        }
        match &best {
            Some((d, _)) if distance > *d => {}
            Some((d, c)) if distance == *d => tied |= *c != candidate,
            _ => {
                best = Some((distance, candidate));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(_, c)| c)
}

/// The usage text printed by bare `katari`.
pub fn usage() -> String {
    command().render_help().to_string()
}

/// Whether to colour a stream (`host.md` §2.3): `always` forces colour; otherwise colour only a
/// terminal, and only when `NO_COLOR` is unset or empty, and `--color` is not `never`.
pub fn use_color(choice: ColorChoice, is_terminal: bool, no_color: Option<&OsString>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal && no_color.is_none_or(|value| value.is_empty()),
    }
}

/// clap's own colouring of help (stdout) and usage errors (stderr), following `--color` before
/// it is parsed. clap's `auto` also obeys `CLICOLOR_FORCE`, which would colour a pipe; §2.3.1
/// allows colour only on a terminal, so `auto` is settled here when neither stream is one, or
/// when `NO_COLOR` forbids it.
fn clap_color(args: &[OsString]) -> clap::ColorChoice {
    let terminal = std::io::stdout().is_terminal() || std::io::stderr().is_terminal();
    let no_color = std::env::var_os("NO_COLOR");
    match color_flag(args) {
        ColorChoice::Always => clap::ColorChoice::Always,
        ColorChoice::Never => clap::ColorChoice::Never,
        ColorChoice::Auto if use_color(ColorChoice::Auto, terminal, no_color.as_ref()) => {
            clap::ColorChoice::Auto
        }
        ColorChoice::Auto => clap::ColorChoice::Never,
    }
}

/// The last `--color` value on the command line (before `--`), `auto` when there is none or
/// it is not valid (clap reports that).
fn color_flag(args: &[OsString]) -> ColorChoice {
    let mut choice = ColorChoice::Auto;
    let mut words = args.iter().map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        let value = match word.strip_prefix("--color") {
            Some("") => words.next().map(|v| v.into_owned()),
            Some(rest) => rest.strip_prefix('=').map(str::to_string),
            None => None,
        };
        match value.as_deref() {
            Some("always") => choice = ColorChoice::Always,
            Some("never") => choice = ColorChoice::Never,
            Some("auto") => choice = ColorChoice::Auto,
            _ => {}
        }
    }
    choice
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> OsString {
        OsString::from(s)
    }

    #[test]
    fn auto_colours_only_a_terminal_without_no_color() {
        assert!(use_color(ColorChoice::Auto, true, None));
        assert!(!use_color(ColorChoice::Auto, false, None));
        assert!(!use_color(ColorChoice::Auto, true, Some(&os("1"))));
        assert!(use_color(ColorChoice::Auto, true, Some(&os(""))));
    }

    #[test]
    fn always_and_never_win() {
        assert!(use_color(ColorChoice::Always, false, Some(&os("1"))));
        assert!(!use_color(ColorChoice::Never, true, None));
    }

    #[test]
    fn json_flag_means_json_format() {
        let cli =
            Cli::try_parse_from(["katari", "check", "--json", "a.kt"]).expect("valid command line");
        let Some(Command::Check(args)) = cli.command else {
            panic!("expected check")
        };
        assert_eq!(args.format(), Format::Json);
        let cli =
            Cli::try_parse_from(["katari", "check", "a.kt", "b.kt"]).expect("valid command line");
        let Some(Command::Check(args)) = cli.command else {
            panic!("expected check")
        };
        assert_eq!(args.format(), Format::Text);
        assert_eq!(args.files.len(), 2);
    }

    #[test]
    fn color_flag_is_global() {
        let cli = Cli::try_parse_from(["katari", "check", "a.kt", "--color", "never"])
            .expect("valid command line");
        assert_eq!(cli.color, ColorChoice::Never);
    }

    #[test]
    fn check_needs_a_file() {
        let err = Cli::try_parse_from(["katari", "check"]).expect_err("a file is required");
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn clap_follows_color_flag_before_parsing() {
        assert_eq!(
            color_flag(&[os("katari"), os("--color"), os("never")]),
            ColorChoice::Never
        );
        assert_eq!(
            color_flag(&[os("katari"), os("--color=always"), os("check")]),
            ColorChoice::Always
        );
        assert_eq!(color_flag(&[os("katari"), os("check")]), ColorChoice::Auto);
        assert_eq!(
            clap_color(&[os("katari"), os("--color=always"), os("check")]),
            clap::ColorChoice::Always
        );
    }

    #[test]
    fn nearest_is_unique_and_within_two_edits() {
        let names = || {
            ["run", "check", "repl", "config"]
                .map(String::from)
                .into_iter()
        };
        assert_eq!(nearest("chek", names()), Some("check".into()));
        assert_eq!(nearest("rpl", names()), Some("repl".into()));
        assert_eq!(nearest("configure", names()), None);
        let shorts = || ["-a", "-h", "-V"].map(String::from).into_iter();
        assert_eq!(nearest("-b", shorts()), None);
    }

    #[test]
    fn clap_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn subcommand_version_names_katari() {
        let err = command()
            .try_get_matches_from(["katari", "check", "-V"])
            .expect_err("prints the version");
        assert_eq!(err.kind(), clap::error::ErrorKind::DisplayVersion);
        assert_eq!(
            err.to_string(),
            format!("katari {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
}
