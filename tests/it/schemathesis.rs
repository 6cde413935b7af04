//! schemathesis (PyPI, installed by `scripts/ensure-python-tools.sh`) against the
//! document a `kerf demo` hub serves, once the demo has data (a finished run, agents'
//! events): every check, the response-schema check included, on every operation with a
//! bounded number of examples each (coverage and fuzzing), then the stateful phase,
//! which follows the document's links. `tests/it/schemathesis.toml` gives the tokens and
//! cursors and names the rules the document cannot state. Zero failures.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::tools::python_tools;
use crate::support::{eventually, within, DataDir, Demo};

/// Examples per operation in the coverage and fuzzing phases.
const EXAMPLES_PER_OPERATION: &str = "15";
/// The whole run's bound (it takes about two minutes on an idle machine).
const RUN_LIMIT: Duration = Duration::from_secs(20 * 60);

#[tokio::test(flavor = "multi_thread")]
async fn schemathesis_finds_nothing_wrong_with_a_demo_hub_and_its_document() {
    let tools = python_tools();
    let data = DataDir::new();
    let demo = Demo::start(Some(data.path()));
    let admin = demo.token.clone();
    let api = demo.api();
    let get = |path: String| {
        let api = api.clone();
        async move { api.get(&path).await }
    };
    // Data first: a finished run (recommendations) and events the demo's agents sent.
    eventually("a finished run", Duration::from_secs(180), || async {
        let (_, runs) = get("/v1/runs?status=succeeded&limit=1".into()).await;
        (runs["items"].as_array()?.len() == 1).then_some(())
    })
    .await;
    eventually("agent events", Duration::from_secs(180), || async {
        let (_, audit) = get("/v1/audit?limit=1".into()).await;
        (audit["items"].as_array()?.len() == 1).then_some(())
    })
    .await;

    // An agent of its own for the agent routes, and a spare token to revoke.
    let (status, agent) = api
        .call("POST", "/v1/clusters", Some(json!({"name": "st-agent"})))
        .await;
    assert_eq!(status, 201, "{agent}");
    let (status, spare) = api
        .call(
            "POST",
            "/v1/admin/tokens",
            Some(json!({"name": "spare", "role": "viewer"})),
        )
        .await;
    assert_eq!(status, 201, "{spare}");
    let (_, workloads) = get("/v1/workloads?limit=1".into()).await;
    let cursor = |v: Value| kerf::api::query::encode_cursor(&v);
    let env = [
        ("KERF_ST_ADMIN", admin.clone()),
        (
            "KERF_ST_AGENT",
            agent["token"].as_str().expect("token").into(),
        ),
        ("KERF_ST_AGENT_CLUSTER", "st-agent".into()),
        (
            "KERF_ST_SPARE_TOKEN",
            spare["token"]["id"].as_str().expect("id").into(),
        ),
        ("KERF_ST_CURSOR_SEQ", kerf::api::query::encode_seq(i64::MAX)),
        ("KERF_ST_CURSOR_NUMBER", cursor(json!(i64::MAX))),
        (
            "KERF_ST_CURSOR_HISTORY",
            cursor(json!([i64::MAX, 0, i64::MAX])),
        ),
        ("KERF_ST_CURSOR_FEED", cursor(json!(""))),
        (
            "KERF_ST_CURSOR_WORKLOADS",
            workloads["next"].as_str().expect("a second page").into(),
        ),
    ];

    let config =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/schemathesis.toml");
    let mut child = Command::new(tools.join("schemathesis"))
        .arg("--config-file")
        .arg(&config)
        .args(["--no-color", "run"])
        .arg(demo.kerf.url("/v1/openapi.yaml"))
        // One worker: Python 3.11's ast.parse is not thread-safe ("AST constructor
        // recursion depth mismatch" when hypothesis describes filters in two threads).
        // Every check is on in the config file ([checks] enabled), not by `--checks all`:
        // the command line overrides every operation's entry, so the one check a
        // documented rule turns off for an operation would run there anyway.
        .args(["--seed", "1", "--workers", "1"])
        .args(["--max-examples", EXAMPLES_PER_OPERATION])
        .arg("--report-dir")
        .arg(data.path().join("schemathesis-report"))
        .envs(env)
        .current_dir(data.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run schemathesis");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let ran = within("schemathesis to finish", RUN_LIMIT, async || {
        child.try_wait().expect("wait").ok_or("running")
    })
    .await;
    let status = ran.unwrap_or_else(|_| {
        let _ = child.kill();
        panic!("schemathesis ran past {RUN_LIMIT:?}");
    });
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let out = reader.join().expect("reader");
    let summary = out.split("SUMMARY").last().unwrap_or_default().to_string();
    assert!(
        status.success(),
        "schemathesis found problems ({status}):\n{out}\n{stderr}"
    );
    for phase in ["Coverage", "Fuzzing", "Stateful"] {
        assert!(
            summary
                .lines()
                .any(|l| l.contains('✅') && l.contains(phase)),
            "the {phase} phase did not run and pass:\n{summary}"
        );
    }
    // Operations sit at paths.<path>.<method> (links name operations deeper down).
    let operations = kerf::api::document::yaml()
        .lines()
        .filter(|l| l.starts_with("      operationId:"))
        .count();
    let tested = summary
        .lines()
        .find_map(|l| l.trim().strip_prefix("Tested: "))
        .and_then(|n| n.trim().parse::<usize>().ok());
    // It leaves out the operation that serves the document it reads, and remote write
    // (disabled in schemathesis.toml: it cannot make protobuf bodies).
    assert_eq!(
        tested,
        Some(operations - 2),
        "schemathesis did not test every operation:\n{summary}"
    );
    eprintln!("{summary}");
}
