//! A real SMTP server on loopback (tests/it/support/smtp_server.py on aiosmtpd, from
//! Debian's python3-aiosmtpd, installed by scripts/ensure-smtp.sh): kerf's email channel
//! submits to it over STARTTLS with AUTH, and tests read each accepted message back —
//! subject, decoded plain text and HTML, the login used and whether TLS was on.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// The interpreter that has aiosmtpd (`KERF_TEST_PYTHON`, else Debian's).
fn python() -> String {
    std::env::var("KERF_TEST_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".into())
}

/// A running SMTP server.
pub struct Smtp {
    child: Child,
    pub port: u16,
    messages: Arc<Mutex<Vec<Value>>>,
}

impl Smtp {
    /// Starts the server; `auth` requires that login, `tls` (cert, key PEM files) offers
    /// and requires STARTTLS.
    pub fn start(auth: Option<(&str, &str)>, tls: Option<(&Path, &Path)>) -> Smtp {
        Smtp::start_with(auth, tls, false)
    }

    /// As [`Smtp::start`]; `implicit` speaks TLS from the first byte (SMTPS) instead of
    /// offering STARTTLS.
    pub fn start_with(
        auth: Option<(&str, &str)>,
        tls: Option<(&Path, &Path)>,
        implicit: bool,
    ) -> Smtp {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/it/support/smtp_server.py"
        );
        let mut cmd = Command::new(python());
        cmd.arg(script);
        if let Some((u, p)) = auth {
            cmd.args(["--user", u, "--password", p]);
        }
        if let Some((c, k)) = tls {
            cmd.arg("--cert").arg(c).arg("--key").arg(k);
            if implicit {
                cmd.arg("--implicit-tls");
            }
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the SMTP server (python3 with aiosmtpd: scripts/ensure-smtp.sh)");
        let stdout = child.stdout.take().expect("stdout");
        let messages = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let sink = messages.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                match v["port"].as_u64() {
                    Some(p) => {
                        let _ = tx.send(p as u16);
                    }
                    None => sink.lock().expect("lock").push(v),
                }
            }
        });
        let port = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(p) => p,
            Err(_) => {
                let _ = child.kill();
                panic!("the SMTP server did not start (is python3-aiosmtpd installed?)");
            }
        };
        Smtp {
            child,
            port,
            messages,
        }
    }

    pub fn messages(&self) -> Vec<Value> {
        self.messages.lock().expect("lock").clone()
    }

    /// Polls until `n` messages arrived; panics after `limit`.
    pub async fn wait_for(&self, n: usize, limit: Duration) -> Vec<Value> {
        let what = format!("{n} emails");
        let every = Duration::from_millis(20);
        super::wait::eventually_every(&what, limit, every, async || {
            let got = self.messages();
            if got.len() >= n {
                Ok(got)
            } else {
                Err(got.len())
            }
        })
        .await
    }
}

impl Drop for Smtp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
