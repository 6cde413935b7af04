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

/// Flags every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// TOML config file (env KERF_CONFIG).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Data directory (env KERF_DATA_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Listen address, e.g. 127.0.0.1:8080 (env KERF_LISTEN).
    #[arg(long, global = true, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the hub: HTTP API, UI, store.
    Serve,
    /// The whole appliance on a built-in demo fleet: no cluster, no Prometheus.
    /// Uses a temporary data dir unless --data-dir is given.
    Demo,
    /// Apply pending database migrations (a copy is taken first).
    Migrate {
        /// Only show applied and pending migrations.
        #[arg(long)]
        status: bool,
    },
    /// Back up the database (online, safe while serving) and its secret key (FILE.secret.key).
    Backup {
        /// Destination file; must not exist.
        #[arg(long, value_name = "FILE")]
        to: PathBuf,
    },
    /// Restore a backup (the database and its FILE.secret.key) into an empty data dir.
    Restore {
        /// The backup file written by `kerf backup --to FILE`.
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
    },
    /// Secrets at rest.
    Secrets {
        #[command(subcommand)]
        action: SecretsAction,
    },
    /// The audit log.
    Audit {
        #[command(subcommand)]
        action: AuditAction,
    },
    /// Check or print the effective configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Exit 0 when the local server answers /readyz with 200.
    Healthcheck,
    /// Print the version.
    Version,
    /// API tokens.
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
    /// Local users (first-run bootstrap).
    Users {
        #[command(subcommand)]
        action: UserAction,
    },
    /// Registered clusters.
    Clusters {
        #[command(subcommand)]
        action: ClusterAction,
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
    Check,
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

/// Runs the parsed command.
pub fn run(cli: Cli) -> Result<(), Exit> {
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
    let explicit_data_dir = cli.global.data_dir.is_some();
    let overrides = Overrides {
        config_file: cli.global.config.clone(),
        data_dir: cli.global.data_dir.clone(),
        listen: cli.global.listen,
    };
    let config = Config::load(&overrides, std::env::vars()).map_err(Exit::usage)?;
    crate::telemetry::init(&config.log);
    match cli.command {
        Command::Serve => serve(config),
        Command::Demo => crate::demo::run(config, explicit_data_dir),
        Command::Migrate { status } => commands::migrate(&config, status),
        Command::Backup { to } => commands::backup(&config, &to),
        Command::Restore { from } => commands::restore(&config, &from),
        Command::Secrets {
            action: SecretsAction::RotateKey,
        } => commands::rotate_key(&config),
        Command::Audit {
            action: AuditAction::Export { until, to },
        } => commands::export_audit(&config, &until, to.as_deref()),
        Command::Config {
            action: ConfigAction::Print,
        } => commands::print_config(&config),
        Command::Config {
            action: ConfigAction::Check,
        } => commands::check_config(&config),
        Command::Healthcheck => commands::healthcheck(&config),
        Command::Token {
            action:
                TokenAction::Create {
                    name,
                    role,
                    expires_in_days,
                },
        } => commands::create_token(&config, &name, &role, expires_in_days),
        Command::Clusters {
            action: ClusterAction::Create { name },
        } => commands::create_cluster(&config, &name),
        Command::Clusters {
            action: ClusterAction::List,
        } => commands::list_clusters(&config),
        Command::Users {
            action:
                UserAction::Create {
                    name,
                    admin,
                    role,
                    password_file,
                },
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

fn serve(config: Config) -> Result<(), Exit> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Exit::runtime)?;
    runtime
        .block_on(crate::server::run(config))
        .map_err(serve_exit)
}
