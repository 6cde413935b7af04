//! `kerf audit export --until TIME [--to FILE]`: the audit rows that arrived before
//! TIME, oldest first, as JSON Lines, before retention prunes them. Each line is
//! `{"record":"event","seq","cluster","receivedAt","event":{…}}` (the event as the
//! agent sent it) or `{"record":"configChange","seq","receivedAt","change":{…}}` (as
//! `GET /v1/audit/config` serves it). Read page by page: the log's size does not matter.

use std::io::Write;
use std::path::Path;

use super::{block_on, open_store, store_exit, Exit};
use crate::config::Config;
use crate::store::ExportRow;
use crate::timestamp::{format_ms, parse_ms};

const PAGE: usize = 1000;

/// One JSON line for `row`. The payload is JSON kerf stored itself, written as is.
fn line(row: &ExportRow) -> String {
    let quote = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let at = quote(&format_ms(row.received_at_ms));
    if row.config_change {
        format!(
            r#"{{"record":"configChange","seq":{},"receivedAt":{at},"change":{}}}"#,
            row.seq, row.payload
        )
    } else {
        let cluster = quote(row.cluster.as_deref().unwrap_or(""));
        format!(
            r#"{{"record":"event","seq":{},"cluster":{cluster},"receivedAt":{at},"event":{}}}"#,
            row.seq, row.payload
        )
    }
}

/// Opens the destination: `to` (a new file, owner-only: it holds the audit), else stdout.
fn destination(to: Option<&Path>) -> Result<Box<dyn Write>, Exit> {
    let Some(to) = to else {
        return Ok(Box::new(std::io::stdout().lock()));
    };
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let file = opts.open(to).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => Exit::usage(format!(
            "{} already exists; choose a new file",
            to.display()
        )),
        _ => Exit::runtime(format!("cannot create {}: {e}", to.display())),
    })?;
    Ok(Box::new(std::io::BufWriter::new(file)))
}

/// `kerf audit export`.
pub fn export(config: &Config, until: &str, to: Option<&Path>) -> Result<(), Exit> {
    let until_ms = parse_ms(until).ok_or_else(|| {
        Exit::usage(format!(
            "--until {until:?} is not an RFC 3339 time (2026-01-31T00:00:00Z)"
        ))
    })?;
    let store = open_store(config)?;
    let mut out = destination(to)?;
    let write_err = |e: std::io::Error| Exit::runtime(format!("cannot write the export: {e}"));
    let (mut after, mut rows) = (None, 0u64);
    loop {
        let page = block_on(store.reading(move |r| r.audit_export_page(until_ms, after, PAGE)))?
            .map_err(store_exit)?;
        for row in &page {
            writeln!(out, "{}", line(row)).map_err(write_err)?;
        }
        rows += page.len() as u64;
        match page.last() {
            Some(last) if page.len() == PAGE => after = Some((last.received_at_ms, last.seq)),
            _ => break,
        }
    }
    out.flush().map_err(write_err)?;
    eprintln!("exported {rows} audit row(s) that arrived before {until}");
    Ok(())
}
