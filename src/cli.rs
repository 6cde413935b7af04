//! The command line: parsing (clap) and dispatch. Exit codes: 0 success, 1 runtime
//! failure, 2 bad usage, bad config or bad input (with a one-line reason on stderr).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::commands::{self, serve_exit, Exit};
use crate::config::{Config, Overrides};

/// kerf rightsizes Kubernetes workloads.
#[derive(Debug, Parser)]
#[command(name = "kerf", version, about, disable_help_subcommand = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// The same flags written before the command (`kerf --data-dir DIR restore …`), kept
/// for scripts; each is refused on a command it does not apply to. Hidden from help:
/// every command lists the flags it takes.
#[derive(Debug, Args, Default, Clone)]
pub struct GlobalArgs {
    #[arg(long, value_name = "FILE", hide = true)]
    pub config: Option<PathBuf>,
    #[arg(long, value_name = "DIR", hide = true)]
    pub data_dir: Option<PathBuf>,
    #[arg(long, value_name = "ADDR", hide = true)]
    pub listen: Option<SocketAddr>,
    #[arg(long, value_name = "FILE", hide = true)]
    pub ready_file: Option<PathBuf>,
}

/// The flags of a command that works on the data dir.
#[derive(Debug, Args, Default, Clone)]
pub struct DataArgs {
    /// TOML config file (env KERF_CONFIG).
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        help_heading = "Config and data"
    )]
    pub config: Option<PathBuf>,
    /// Data directory (env KERF_DATA_DIR).
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        help_heading = "Config and data"
    )]
    pub data_dir: Option<PathBuf>,
}

/// The flags of a command that serves (or shows what serving would use).
#[derive(Debug, Args, Default, Clone)]
pub struct ServeArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Listen address, e.g. 127.0.0.1:8080 (env KERF_LISTEN).
    #[arg(
        long,
        global = true,
        value_name = "ADDR",
        help_heading = "Config and data"
    )]
    pub listen: Option<SocketAddr>,
}

/// The flag of a command that says when it is ready to serve.
#[derive(Debug, Args, Default, Clone)]
pub struct ReadyArgs {
    /// Once listening, write {"addr":"IP:PORT","pid":N} (demo: also "url") to FILE,
    /// atomically, for probes and scripts; a stale FILE is removed at start. No secrets.
    #[arg(long, value_name = "FILE", help_heading = "Config and data")]
    pub ready_file: Option<PathBuf>,
}

/// The flags of `kerf healthcheck`: where the server listens, no data dir.
#[derive(Debug, Args, Default, Clone)]
pub struct ProbeArgs {
    /// TOML config file (env KERF_CONFIG).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The server's listen address (env KERF_LISTEN).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the hub: HTTP API, UI, store.
    Serve {
        #[command(flatten)]
        at: ServeArgs,
        #[command(flatten)]
        ready: ReadyArgs,
    },
    /// The whole appliance on a built-in demo fleet: no cluster, no Prometheus.
    /// Uses a temporary data dir unless --data-dir is given.
    Demo {
        #[command(flatten)]
        at: ServeArgs,
        #[command(flatten)]
        ready: ReadyArgs,
    },
    /// Apply pending database migrations (a copy is taken first).
    Migrate {
        /// Only show applied and pending migrations.
        #[arg(long)]
        status: bool,
        #[command(flatten)]
        at: DataArgs,
    },
    /// Back up the database (online, safe while serving) and its secret key (FILE.secret.key).
    Backup {
        /// Destination file; must not exist.
        #[arg(long, value_name = "FILE")]
        to: PathBuf,
        #[command(flatten)]
        at: DataArgs,
    },
    /// Restore a backup (the database and its FILE.secret.key) into an empty data dir.
    Restore {
        /// The backup file written by `kerf backup --to FILE`.
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
        #[command(flatten)]
        at: DataArgs,
    },
    /// Secrets at rest.
    Secrets {
        #[command(subcommand)]
        action: SecretsAction,
        #[command(flatten)]
        at: DataArgs,
    },
    /// The audit log.
    Audit {
        #[command(subcommand)]
        action: AuditAction,
        #[command(flatten)]
        at: DataArgs,
    },
    /// Check or print the effective configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
        #[command(flatten)]
        at: ServeArgs,
    },
    /// Exit 0 when the local server answers /readyz with 200.
    Healthcheck {
        #[command(flatten)]
        at: ProbeArgs,
    },
    /// Print the version.
    Version,
    /// API tokens.
    Token {
        #[command(subcommand)]
        action: TokenAction,
        #[command(flatten)]
        at: DataArgs,
    },
    /// Local users (first-run bootstrap).
    Users {
        #[command(subcommand)]
        action: UserAction,
        #[command(flatten)]
        at: DataArgs,
    },
    /// Registered clusters.
    Clusters {
        #[command(subcommand)]
        action: ClusterAction,
        #[command(flatten)]
        at: DataArgs,
    },
    /// Recommend requests and limits for a cluster straight from its Prometheus, without
    /// a hub (workloads from kube-state-metrics, usage from cAdvisor).
    Scan(Box<commands::scan::ScanArgs>),
    /// Ask a hub how a preset or policy would have done on the recorded usage of the
    /// selected workloads (cost change, CPU above request, would-be OOM kills,
    /// throttling; in and out of sample).
    Backtest(Box<commands::backtest::BacktestArgs>),
    /// Analyze a resource-analysis-input/v2 JSON snapshot offline.
    Analyze {
        /// Policy JSON; omitted fields take their defaults.
        #[arg(long, value_name = "POLICY.json")]
        policy: Option<PathBuf>,
        /// Indent the output.
        #[arg(long)]
        pretty: bool,
        /// Input JSON file, or - for stdin.
        #[arg(value_name = "INPUT.json", default_value = "-")]
        input: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum SecretsAction {
    /// Make a new secret.key and seal every stored secret again under it (one
    /// transaction); the old key is kept as secret.key.old-<time>.
    RotateKey,
}

#[derive(Debug, Subcommand)]
pub enum AuditAction {
    /// Write the rows that arrived before --until as JSON Lines, oldest first (keep
    /// them before `[audit]` retention prunes them).
    Export {
        /// RFC 3339 time, e.g. 2026-01-01T00:00:00Z.
        #[arg(long, value_name = "TIME")]
        until: String,
        /// A new file (created 0600); stdout when omitted.
        #[arg(long, value_name = "FILE")]
        to: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Validate the configuration and the files it names.
    Check {
        /// Also reach what the configuration points at: the identity provider's
        /// discovery document and keys.
        #[arg(long)]
        online: bool,
    },
    /// Print the effective configuration (secrets redacted).
    Print,
}

#[derive(Debug, Subcommand)]
pub enum TokenAction {
    /// Create an API token and print it once.
    Create {
        /// A name saying who or what uses it.
        #[arg(long)]
        name: String,
        /// Fleet role; only `admin` can be bootstrapped offline.
        #[arg(long, default_value = "admin")]
        role: String,
        /// Days until it expires (default: never).
        #[arg(long, value_name = "DAYS")]
        expires_in_days: Option<u32>,
    },
}

#[derive(Debug, Subcommand)]
pub enum UserAction {
    /// Create a user and print a one-time password (or take it from --password-file).
    Create {
        /// Username: letters, digits, '.', '_', '-', '@'.
        name: String,
        /// Give the user the fleet admin role (same as --role admin).
        #[arg(long, conflicts_with = "role")]
        admin: bool,
        /// Fleet role: admin, editor or viewer (default: none; team roles only).
        #[arg(long)]
        role: Option<String>,
        /// Read the password from this file (first line) instead of generating one.
        #[arg(long, value_name = "FILE")]
        password_file: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ClusterAction {
    /// Register a cluster and print its agent token once.
    Create {
        /// Cluster name: lower-case letters, digits and '-', at most 63 characters.
        name: String,
    },
    /// List registered clusters.
    List,
}

/// The flags a command takes (`None`: no such flag there).
struct Taken {
    config: Option<Option<PathBuf>>,
    data_dir: Option<Option<PathBuf>>,
    listen: Option<Option<SocketAddr>>,
    ready_file: Option<Option<PathBuf>>,
}

impl Command {
    /// Its name as typed, for messages.
    fn name(&self) -> &'static str {
        match self {
            Command::Serve { .. } => "serve",
            Command::Demo { .. } => "demo",
            Command::Migrate { .. } => "migrate",
            Command::Backup { .. } => "backup",
            Command::Restore { .. } => "restore",
            Command::Secrets { .. } => "secrets",
            Command::Audit { .. } => "audit",
            Command::Config { .. } => "config",
            Command::Healthcheck { .. } => "healthcheck",
            Command::Version => "version",
            Command::Token { .. } => "token",
            Command::Users { .. } => "users",
            Command::Clusters { .. } => "clusters",
            Command::Analyze { .. } => "analyze",
            Command::Scan(_) => "scan",
            Command::Backtest(_) => "backtest",
        }
    }

    fn taken(&self) -> Taken {
        let data = |d: &DataArgs| Taken {
            config: Some(d.config.clone()),
            data_dir: Some(d.data_dir.clone()),
            listen: None,
            ready_file: None,
        };
        let serve = |s: &ServeArgs| Taken {
            listen: Some(s.listen),
            ..data(&s.data)
        };
        match self {
            Command::Serve { at, ready } | Command::Demo { at, ready } => Taken {
                ready_file: Some(ready.ready_file.clone()),
                ..serve(at)
            },
            Command::Config { at, .. } => serve(at),
            Command::Migrate { at, .. }
            | Command::Backup { at, .. }
            | Command::Restore { at, .. }
            | Command::Secrets { at, .. }
            | Command::Audit { at, .. }
            | Command::Token { at, .. }
            | Command::Users { at, .. }
            | Command::Clusters { at, .. } => data(at),
            Command::Healthcheck { at } => Taken {
                config: Some(at.config.clone()),
                data_dir: None,
                listen: Some(at.listen),
                ready_file: None,
            },
            Command::Version
            | Command::Analyze { .. }
            | Command::Scan(_)
            | Command::Backtest(_) => Taken {
                config: None,
                data_dir: None,
                listen: None,
                ready_file: None,
            },
        }
    }
}

/// The command's own flag, else the same flag written before the command; refused
/// where the command takes no such flag.
fn pick<T>(
    own: Option<Option<T>>,
    before: Option<T>,
    flag: &str,
    cmd: &str,
) -> Result<Option<T>, Exit> {
    match (own, before) {
        (None, Some(_)) => Err(Exit::usage(format!(
            "--{flag} does not apply to `kerf {cmd}`"
        ))),
        (None, None) => Ok(None),
        (Some(own), before) => Ok(own.or(before)),
    }
}

/// The overrides the command line gives and its `--ready-file` (not config: it names
/// this process's signal, not a setting), checked against what the command takes.
fn overrides(cli: &Cli) -> Result<(Overrides, Option<PathBuf>), Exit> {
    let (taken, cmd, g) = (cli.command.taken(), cli.command.name(), &cli.global);
    let overrides = Overrides {
        config_file: pick(taken.config, g.config.clone(), "config", cmd)?,
        data_dir: pick(taken.data_dir, g.data_dir.clone(), "data-dir", cmd)?,
        listen: pick(taken.listen, g.listen, "listen", cmd)?,
    };
    let ready_file = pick(taken.ready_file, g.ready_file.clone(), "ready-file", cmd)?;
    Ok((overrides, ready_file))
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> Result<(), Exit> {
    let (overrides, ready_file) = overrides(&cli)?;
    // Before anything can fail: a file left by an earlier process must not say ready.
    if let Some(path) = &ready_file {
        crate::server::ready_file::clear(path).map_err(Exit::usage)?;
    }
    if let Command::Analyze {
        policy,
        pretty,
        input,
    } = &cli.command
    {
        return commands::analyze(policy.as_deref(), *pretty, input);
    }
    if let Command::Scan(args) = &cli.command {
        return commands::scan::scan(args);
    }
    if let Command::Backtest(args) = &cli.command {
        return commands::backtest::backtest(args);
    }
    if matches!(cli.command, Command::Version) {
        println!("kerf {}{}", env!("CARGO_PKG_VERSION"), features());
        return Ok(());
    }
    let explicit_data_dir = overrides.data_dir.is_some();
    let config = Config::load(&overrides, std::env::vars()).map_err(Exit::usage)?;
    crate::telemetry::init(&config.log);
    match cli.command {
        Command::Serve { .. } => until_exit(ready_file, |r| serve(config, r)),
        Command::Demo { .. } => until_exit(ready_file, |r| {
            crate::demo::run(config, explicit_data_dir, r)
        }),
        Command::Migrate { status, .. } => commands::migrate(&config, status),
        Command::Backup { to, .. } => commands::backup(&config, &to),
        Command::Restore { from, .. } => commands::restore(&config, &from),
        Command::Secrets {
            action: SecretsAction::RotateKey,
            ..
        } => commands::rotate_key(&config),
        Command::Audit {
            action: AuditAction::Export { until, to },
            ..
        } => commands::export_audit(&config, &until, to.as_deref()),
        Command::Config {
            action: ConfigAction::Print,
            ..
        } => commands::print_config(&config),
        Command::Config {
            action: ConfigAction::Check { online },
            ..
        } => commands::check_config(&config, online),
        Command::Healthcheck { .. } => commands::healthcheck(&config),
        Command::Token {
            action:
                TokenAction::Create {
                    name,
                    role,
                    expires_in_days,
                },
            ..
        } => commands::create_token(&config, &name, &role, expires_in_days),
        Command::Clusters {
            action: ClusterAction::Create { name },
            ..
        } => commands::create_cluster(&config, &name),
        Command::Clusters {
            action: ClusterAction::List,
            ..
        } => commands::list_clusters(&config),
        Command::Users {
            action:
                UserAction::Create {
                    name,
                    admin,
                    role,
                    password_file,
                },
            ..
        } => {
            let role = if admin {
                Some("admin".to_string())
            } else {
                role
            };
            commands::create_user(&config, &name, role, password_file.as_deref())
        }
        Command::Version | Command::Analyze { .. } | Command::Scan(_) | Command::Backtest(_) => {
            Ok(())
        }
    }
}

fn features() -> &'static str {
    if cfg!(feature = "agent") {
        " (features: agent)"
    } else {
        " (features: none)"
    }
}

/// Serves with `ready_file`, and removes it once serving has ended: a stopped process
/// is not ready.
fn until_exit(
    ready_file: Option<PathBuf>,
    serve: impl FnOnce(Option<PathBuf>) -> Result<(), Exit>,
) -> Result<(), Exit> {
    let result = serve(ready_file.clone());
    if let Some(path) = &ready_file {
        if let Err(e) = crate::server::ready_file::clear(path) {
            tracing::warn!(error = %e, "the ready file outlives the server");
        }
    }
    result
}

fn serve(config: Config, ready_file: Option<PathBuf>) -> Result<(), Exit> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Exit::runtime)?;
    runtime
        .block_on(crate::server::run(config, ready_file))
        .map_err(serve_exit)
}
