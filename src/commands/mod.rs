//! The offline and one-shot commands: migrate, backup, config, healthcheck, tokens,
//! users, clusters, audit export, secret-key rotation and analyze. Each works against the data dir without a running
//! server, through the same operations the API uses (`auth::accounts`,
//! `fleet::clusters`), so the rules cannot differ. Exit codes: 0 success, 1 runtime
//! failure, 2 bad usage, bad config or bad input (with a one-line reason on stderr).

mod audit_export;
pub mod backtest;
mod backup;
mod rotate_key;
pub mod scan;

pub use audit_export::export as export_audit;
pub use backup::{backup, restore};
pub use rotate_key::rotate_key;

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use crate::auth::accounts::{self, NewTokenInput, NewUserInput};
use crate::auth::Authenticator;
use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::events::config_change::{Actor, AuditContext};
use crate::operation::OpError;
use crate::server::{store_options, ServeError};
use crate::store::{self, Store};

/// A failure with the exit code it maps to.
#[derive(Debug)]
pub struct Exit {
    pub code: i32,
    pub message: String,
}

impl Exit {
    pub fn usage(message: impl std::fmt::Display) -> Self {
        Exit {
            code: 2,
            message: message.to_string(),
        }
    }

    pub fn runtime(message: impl std::fmt::Display) -> Self {
        Exit {
            code: 1,
            message: message.to_string(),
        }
    }
}

/// The binary's way out on failure: one line on stderr, then the exit code.
pub fn exit_with(exit: Exit) -> ! {
    let line = exit.message.lines().next().unwrap_or("failed").to_string();
    eprintln!("kerf: {line}");
    std::process::exit(exit.code)
}

/// The exit of a server that stopped with `e`: bad input (a too-new database, bad TLS
/// files) is a usage error (2); anything else, a failed background job included, is 1.
pub fn serve_exit(e: ServeError) -> Exit {
    match e {
        ServeError::Store(store::StoreError::TooNew { .. }) => Exit::usage(e),
        ServeError::Tls(_) | ServeError::Agent(_) => Exit::usage(e),
        ServeError::Declared(crate::fleet::declared::DeclaredError::Refused(_)) => Exit::usage(e),
        _ => Exit::runtime(e),
    }
}

/// Opens (creating and migrating when needed) the database of `config`.
pub fn open_store(config: &Config) -> Result<Store, Exit> {
    let now = SystemClock.now_ms();
    Store::open_and_migrate(&config.database_path(), &store_options(config), now)
        .map_err(store_exit)
}

pub(crate) fn store_exit(e: store::StoreError) -> Exit {
    match e {
        store::StoreError::TooNew { .. }
        | store::StoreError::ChecksumMismatch { .. }
        | store::StoreError::Corrupt { .. }
        | store::StoreError::Conflict(_) => Exit::usage(e),
        other => Exit::runtime(other),
    }
}

/// A refused operation is the user's to fix (2); a failing system is 1.
pub fn op_exit(e: OpError) -> Exit {
    match e {
        OpError::Store(s) => store_exit(s),
        OpError::Invalid { .. }
        | OpError::Rejected { .. }
        | OpError::NotFound(_)
        | OpError::Conflict { .. } => Exit::usage(e),
        other => Exit::runtime(other),
    }
}

/// Runs one async operation to its end on a small runtime of its own.
pub fn block_on<F: std::future::Future>(work: F) -> Result<F::Output, Exit> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Exit::runtime)?;
    Ok(runtime.block_on(work))
}

/// The audit context of a change made offline by the operator through `command`.
pub fn operator(command: &str) -> AuditContext {
    AuditContext {
        actor: Actor::system(command),
        reason: None,
    }
}

/// `kerf migrate [--status]`.
pub fn migrate(config: &Config, status_only: bool) -> Result<(), Exit> {
    let path = config.database_path();
    if status_only {
        if !path.exists() {
            println!(
                "database {} does not exist yet; {} migration(s) pending",
                path.display(),
                store::MIGRATIONS.len()
            );
            return Ok(());
        }
        let conn =
            store::open_connection(&path, &store_options(config), true).map_err(store_exit)?;
        let status = store::migration_status(&conn).map_err(store_exit)?;
        for (v, name, at) in &status.applied {
            println!(
                "applied  {v:04}_{name}  at {}",
                crate::timestamp::format_ms(*at)
            );
        }
        for (v, name) in &status.pending {
            println!("pending  {v:04}_{name}");
        }
        let supported = store::MIGRATIONS.last().map_or(0, |m| m.version);
        if status.db_version > supported {
            return Err(Exit::usage(format!(
                "database schema version {} is newer than this kerf supports ({supported})",
                status.db_version
            )));
        }
        return Ok(());
    }
    open_store(config)?;
    println!("database {} is current", path.display());
    Ok(())
}

/// `kerf config print`: the effective configuration, secrets redacted.
pub fn print_config(config: &Config) -> Result<(), Exit> {
    print!("{}", config.to_toml());
    Ok(())
}

/// `kerf config check`: the configuration and the files it names.
pub fn check_config(config: &Config, online: bool) -> Result<(), Exit> {
    if let (Some(c), Some(k)) = (&config.tls.cert_file, &config.tls.key_file) {
        crate::tls::server_config(c, k).map_err(Exit::usage)?;
    }
    let env: Vec<(String, String)> = std::env::vars().collect();
    if let Some(oidc) = &config.auth.oidc {
        check_oidc(oidc, &env, online)?;
    }
    let (datasources, clusters) = crate::fleet::declared::resolve(&config.fleet, &env)
        .map_err(Exit::usage)?
        .counts();
    let declared = if datasources + clusters == 0 {
        String::new()
    } else {
        format!(", declares {datasources} datasource(s) and {clusters} cluster(s)")
    };
    println!(
        "configuration is valid (mode {}, listen {}{declared})",
        config.mode, config.listen
    );
    Ok(())
}

/// `[auth.oidc]`: its secret and CA file read; with `online`, the provider's discovery
/// document and keys fetched and checked (its issuer must be the configured one).
fn check_oidc(
    oidc: &crate::config::oidc::OidcConfig,
    env: &[(String, String)],
    online: bool,
) -> Result<(), Exit> {
    let secret = oidc.client_secret(env).map_err(Exit::usage)?;
    let ca = oidc.ca().map_err(Exit::usage)?;
    if !online {
        return Ok(());
    }
    crate::tls::install_crypto_provider();
    let clock: std::sync::Arc<dyn crate::clock::Clock> =
        std::sync::Arc::new(crate::clock::SystemClock);
    let provider =
        crate::auth::sso::Provider::new(oidc.clone(), secret, ca, clock).map_err(Exit::usage)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Exit::runtime)?;
    let metadata = rt.block_on(provider.discover()).map_err(Exit::runtime)?;
    let keys = metadata.jwks().keys().len();
    let logout = metadata
        .additional_metadata()
        .end_session_endpoint
        .is_some();
    println!(
        "identity provider {} answers: discovery document and {keys} signing key(s){}",
        oidc.issuer,
        if logout {
            ", RP-initiated logout supported"
        } else {
            ""
        }
    );
    Ok(())
}

/// `kerf healthcheck`: GET /readyz on the configured address (loopback when it listens on
/// all interfaces). Plain HTTP only, or a TLS handshake check when TLS is on.
pub fn healthcheck(config: &Config) -> Result<(), Exit> {
    let mut addr = config.listen;
    if addr.ip().is_unspecified() {
        addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    if config.tls_enabled() {
        let stream = std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(3))
            .map_err(|e| Exit::runtime(format!("cannot connect to {addr}: {e}")))?;
        drop(stream);
        println!("ok (TLS port {addr} accepts connections)");
        return Ok(());
    }
    let mut stream = std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(3))
        .map_err(|e| Exit::runtime(format!("cannot connect to {addr}: {e}")))?;
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
    write!(stream, "GET /readyz HTTP/1.0\r\nHost: {addr}\r\n\r\n").map_err(Exit::runtime)?;
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    let status = reply.lines().next().unwrap_or("").to_string();
    if status.split_whitespace().nth(1) == Some("200") {
        println!("ok");
        Ok(())
    } else {
        Err(Exit::runtime(format!("not ready: {status}")))
    }
}

/// `kerf token create`: a fleet-role API token, printed once.
pub fn create_token(
    config: &Config,
    name: &str,
    role: &str,
    expires_in_days: Option<u32>,
) -> Result<(), Exit> {
    let store = open_store(config)?;
    let now = SystemClock.now_ms();
    let input = NewTokenInput {
        name: name.to_string(),
        role: role.to_string(),
        team: None,
        expires_at: expires_in_days.map(|d| now + i64::from(d) * 86_400_000),
    };
    let ctx = operator("kerf token create (cli)");
    let made = block_on(accounts::create_token(&store, now, ctx, input))?.map_err(op_exit)?;
    eprintln!(
        "created {role} token {:?}; it is shown only once:",
        made.token.name
    );
    println!("{}", made.value);
    Ok(())
}

/// `kerf users create NAME [--admin|--role R] [--password-file F]`: prints the generated
/// password on stdout (nothing is printed when it came from a file).
pub fn create_user(
    config: &Config,
    name: &str,
    role: Option<String>,
    password_file: Option<&Path>,
) -> Result<(), Exit> {
    let password = match password_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Exit::usage(format!("cannot read {}: {e}", path.display())))?;
            Some(text.lines().next().unwrap_or("").to_string())
        }
        None => None,
    };
    let store = open_store(config)?;
    let auth = Authenticator::new(&config.auth, Arc::new(SystemClock)).map_err(Exit::runtime)?;
    let role_text = role.clone().unwrap_or_else(|| "no fleet role".into());
    let input = NewUserInput {
        username: name.to_string(),
        display_name: String::new(),
        role,
        password,
    };
    let ctx = operator("kerf users create (cli)");
    let now = SystemClock.now_ms();
    let made = block_on(accounts::create_user(&store, &auth, now, ctx, input))?.map_err(op_exit)?;
    match made.one_time_password {
        Some(p) => {
            eprintln!(
                "created user {name:?} ({role_text}); its generated password is shown only this once:"
            );
            println!("{p}");
        }
        None => eprintln!("created user {name:?} ({role_text}) with the password from the file"),
    }
    Ok(())
}

/// `kerf clusters create NAME`: registers it and prints its agent token once.
pub fn create_cluster(config: &Config, name: &str) -> Result<(), Exit> {
    let store = open_store(config)?;
    let ctx = operator("kerf clusters create (cli)");
    let now = SystemClock.now_ms();
    let work =
        crate::fleet::clusters::register(&store, now, ctx, name.to_string(), Default::default());
    let made = block_on(work)?.map_err(op_exit)?;
    eprintln!("registered cluster {name:?}; its agent token is shown only once:");
    println!("{}", made.token);
    Ok(())
}

/// `kerf clusters list`: name, state and registration time, one per line.
pub fn list_clusters(config: &Config) -> Result<(), Exit> {
    let store = open_store(config)?;
    let list = block_on(crate::fleet::clusters::list(&store))?.map_err(op_exit)?;
    for c in list {
        let c = c.cluster;
        println!("{}\t{}\t{}", c.name, c.state, c.created_at);
    }
    Ok(())
}

/// `kerf analyze`.
pub fn analyze(policy: Option<&Path>, pretty: bool, input: &str) -> Result<(), Exit> {
    let input_bytes = if input == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| Exit::usage(format!("cannot read stdin: {e}")))?;
        buf
    } else {
        std::fs::read(input).map_err(|e| Exit::usage(format!("cannot read {input}: {e}")))?
    };
    let policy_bytes = match policy {
        Some(p) => Some(
            std::fs::read(p)
                .map_err(|e| Exit::usage(format!("cannot read {}: {e}", p.display())))?,
        ),
        None => None,
    };
    let out = crate::analysis::analyze_json(&input_bytes, policy_bytes.as_deref(), pretty)
        .map_err(Exit::usage)?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&out)
        .and_then(|_| stdout.write_all(b"\n"))
        .and_then(|_| stdout.flush())
        .map_err(|e| Exit::runtime(format!("cannot write output: {e}")))
}
