//! The offline and one-shot commands: migrate, backup, config, healthcheck, tokens,
//! clusters and analyze. Each works against the data dir without a running server.

use std::io::{Read, Write};
use std::path::Path;

use crate::bootstrap;
use crate::cli::{ClusterAction, ConfigAction, Exit, TokenAction, UserAction};
use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::server::store_options;
use crate::store::{self, Store};

fn open_store(config: &Config) -> Result<Store, Exit> {
    Store::open_and_migrate(
        &config.database_path(),
        &store_options(config),
        SystemClock.now_ms(),
    )
    .map_err(store_exit)
}

fn store_exit(e: store::StoreError) -> Exit {
    match e {
        store::StoreError::TooNew { .. }
        | store::StoreError::ChecksumMismatch { .. }
        | store::StoreError::Conflict(_) => Exit::usage(e),
        other => Exit::runtime(other),
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
                crate::api::audit::rfc3339(*at)
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

/// `kerf backup --to FILE`.
pub fn backup(config: &Config, to: &Path) -> Result<(), Exit> {
    let path = config.database_path();
    if !path.exists() {
        return Err(Exit::usage(format!("no database at {}", path.display())));
    }
    if to.exists() {
        return Err(Exit::usage(format!(
            "{} already exists; choose a new file",
            to.display()
        )));
    }
    store::backup_to(&path, to).map_err(store_exit)?;
    println!("backed up {} to {}", path.display(), to.display());
    Ok(())
}

/// `kerf config check|print`.
pub fn config(config: &Config, action: ConfigAction) -> Result<(), Exit> {
    match action {
        ConfigAction::Print => {
            print!("{}", config.to_toml());
            Ok(())
        }
        ConfigAction::Check => {
            if let (Some(c), Some(k)) = (&config.tls.cert_file, &config.tls.key_file) {
                crate::tls::server_config(c, k).map_err(Exit::usage)?;
            }
            println!(
                "configuration is valid (mode {:?}, listen {})",
                config.mode, config.listen
            );
            Ok(())
        }
    }
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

/// `kerf token create`.
pub fn token(config: &Config, action: TokenAction) -> Result<(), Exit> {
    let TokenAction::Create {
        name,
        role,
        expires_in_days,
    } = action;
    let store = open_store(config)?;
    let now = SystemClock.now_ms();
    let expires_at = expires_in_days.map(|d| now + i64::from(d) * 86_400_000);
    let value = bootstrap::create_token(
        &store,
        &name,
        &role,
        expires_at,
        "kerf token create (cli)",
        now,
    )
    .map_err(bootstrap_exit)?;
    eprintln!(
        "created {role} token {:?}; it is shown only once:",
        name.trim()
    );
    println!("{value}");
    Ok(())
}

/// `kerf users create NAME [--admin|--role R] [--password-file F]`: prints the one-time
/// password on stdout (nothing is printed when it came from a file).
pub fn users(config: &Config, action: UserAction) -> Result<(), Exit> {
    let UserAction::Create {
        name,
        admin,
        role,
        password_file,
    } = action;
    let role = if admin {
        Some("admin".to_string())
    } else {
        role
    };
    let (password, generated) = match &password_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Exit::usage(format!("cannot read {}: {e}", path.display())))?;
            (text.lines().next().unwrap_or("").to_string(), false)
        }
        None => (crate::auth::password::generate(), true),
    };
    let store = open_store(config)?;
    bootstrap::create_user(
        &store,
        &config.auth,
        &name,
        role.as_deref(),
        &password,
        "kerf users create (cli)",
        SystemClock.now_ms(),
    )
    .map_err(bootstrap_exit)?;
    let role_text = role.as_deref().unwrap_or("no fleet role");
    if generated {
        eprintln!("created user {name:?} ({role_text}); the one-time password is shown only once:");
        println!("{password}");
    } else {
        eprintln!("created user {name:?} ({role_text}) with the password from the file");
    }
    Ok(())
}

fn bootstrap_exit(e: bootstrap::BootstrapError) -> Exit {
    match e {
        bootstrap::BootstrapError::Store(s) => store_exit(s),
        bootstrap::BootstrapError::Invalid(m) => Exit::usage(m),
        other => Exit::runtime(other),
    }
}

/// `kerf clusters create|list`.
pub fn clusters(config: &Config, action: ClusterAction) -> Result<(), Exit> {
    let store = open_store(config)?;
    match action {
        ClusterAction::Create { name } => {
            let value = bootstrap::create_cluster(
                &store,
                &name,
                "kerf clusters create (cli)",
                SystemClock.now_ms(),
            )
            .map_err(bootstrap_exit)?;
            eprintln!("registered cluster {name:?}; its agent token is shown only once:");
            println!("{value}");
        }
        ClusterAction::List => {
            let list = store
                .write_blocking(|c| store::list_clusters(c))
                .map_err(store_exit)?;
            for c in list {
                let state = if c.retired_at.is_some() {
                    "retired"
                } else {
                    "active"
                };
                println!(
                    "{}\t{}\t{}",
                    c.name,
                    state,
                    crate::api::audit::rfc3339(c.created_at)
                );
            }
        }
    }
    Ok(())
}

/// Cluster names are DNS labels so they are safe in URLs, labels and file names.
pub fn valid_cluster_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
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

#[cfg(test)]
mod tests {
    #[test]
    fn cluster_names_are_dns_labels() {
        for ok in ["prod", "eu-west-1", "a", "x9"] {
            assert!(super::valid_cluster_name(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "Prod", "a_b", &"a".repeat(64)] {
            assert!(!super::valid_cluster_name(bad), "{bad}");
        }
    }
}
