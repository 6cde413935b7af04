//! The command line's flags, black-box: each command lists only the flags it takes
//! (`version` none), a flag written before a command that does not take it is refused
//! with exit 2 and one line, the old spelling `kerf --data-dir DIR COMMAND` still works,
//! and `kerf config check` names the mode as the config file writes it.

use std::process::{Command, Output, Stdio};

use crate::support::{bin, DataDir};

fn kerf(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env_remove("KERF_CONFIG")
        .env("KERF_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("run kerf")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn each_command_lists_only_the_flags_it_takes() {
    let takes = [
        (&["version", "--help"][..], &[][..]),
        (&["analyze", "--help"][..], &[][..]),
        (&["--help"][..], &[][..]),
        (
            &["serve", "--help"][..],
            &["--config", "--data-dir", "--listen"][..],
        ),
        (
            &["demo", "--help"][..],
            &["--config", "--data-dir", "--listen"][..],
        ),
        (
            &["config", "check", "--help"][..],
            &["--config", "--data-dir", "--listen"][..],
        ),
        (
            &["healthcheck", "--help"][..],
            &["--config", "--listen"][..],
        ),
        (&["migrate", "--help"][..], &["--config", "--data-dir"][..]),
        (
            &["users", "create", "--help"][..],
            &["--config", "--data-dir"][..],
        ),
        (&["restore", "--help"][..], &["--config", "--data-dir"][..]),
    ];
    for (args, flags) in takes {
        let out = kerf(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        let all = text(&out);
        let help = all.split("Options:").nth(1).unwrap_or("");
        for flag in ["--config", "--data-dir", "--listen"] {
            assert_eq!(
                help.contains(flag),
                flags.contains(&flag),
                "{args:?} and {flag}:\n{all}"
            );
        }
    }
}

#[test]
fn a_flag_before_a_command_that_does_not_take_it_is_refused_in_one_line() {
    for (args, line) in [
        (
            &["--listen", "127.0.0.1:1", "version"][..],
            "kerf: --listen does not apply to `kerf version`",
        ),
        (
            &["--data-dir", "/tmp", "healthcheck"][..],
            "kerf: --data-dir does not apply to `kerf healthcheck`",
        ),
        (
            &["--listen", "127.0.0.1:1", "migrate", "--status"][..],
            "kerf: --listen does not apply to `kerf migrate`",
        ),
    ] {
        let out = kerf(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), line);
    }
    let out = kerf(&["version", "--listen", "127.0.0.1:1"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap refuses it: {}",
        text(&out)
    );
}

#[test]
fn the_flags_work_before_and_after_the_command_and_check_names_the_mode() {
    let data = DataDir::new();
    let dir = data.path().display().to_string();
    let before = kerf(&["--data-dir", &dir, "clusters", "create", "east"]);
    assert!(before.status.success(), "{}", text(&before));
    for args in [
        &["clusters", "list", "--data-dir", &dir][..],
        &["clusters", "--data-dir", &dir, "list"][..],
    ] {
        let out = kerf(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("east\tactive\t"));
    }
    let out = kerf(&[
        "config",
        "check",
        "--data-dir",
        &dir,
        "--listen",
        "127.0.0.1:0",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "configuration is valid (mode hub, listen 127.0.0.1:0)"
    );
    let out = Command::new(bin())
        .args(["config", "check", "--data-dir", &dir])
        .env("KERF_MODE", "all-in-one")
        .env("KERF_AGENT__CLUSTER", "east")
        .env_remove("KERF_CONFIG")
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("(mode all-in-one, listen 127.0.0.1:8080)"),
        "{}",
        text(&out)
    );
}
