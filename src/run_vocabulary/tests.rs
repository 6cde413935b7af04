use super::*;

#[test]
fn every_spelling_reads_back_as_its_value() {
    for s in RunStatus::ALL {
        assert_eq!(RunStatus::parse(s.as_str()), Ok(*s));
    }
    for p in Phase::ALL {
        assert_eq!(p.as_str().parse::<Phase>(), Ok(*p));
    }
    for t in Trigger::ALL {
        assert_eq!(Trigger::parse(&t.to_string()), Ok(*t));
    }
    assert_eq!(
        serde_json::to_string(&RunStatus::Partial).expect("json"),
        "\"partial\""
    );
}

#[test]
fn an_unknown_spelling_is_an_error_naming_it() {
    let e = RunStatus::parse("exploded").expect_err("not a status");
    assert_eq!(
        e.to_string(),
        "\"exploded\" is not a run status (one of running, succeeded, partial, failed)"
    );
    let e = serde_json::from_str::<Phase>("\"Collect\"").expect_err("case matters");
    assert!(
        e.to_string().contains("\"Collect\" is not a run phase"),
        "{e}"
    );
    let e = from_column::<PhaseMs>("phase_ms", r#"{"collect":1,"wait":2}"#).expect_err("wait");
    assert!(e.to_string().contains("\"wait\" is not a run phase"), "{e}");
    assert!(e.to_string().contains("phase_ms"), "{e}");
}

#[test]
fn columns_are_written_as_earlier_versions_wrote_them() {
    // The texts `serde_json::json!` wrote before the record was typed.
    assert_eq!(
        to_column(&PhaseMs::ended(3, 2, 1)),
        r#"{"analyze":2,"collect":3,"store":1}"#
    );
    assert_eq!(to_column(&PhaseMs::default()), "{}");
    let collect = CollectSummary {
        queries: 4,
        series: 6,
        samples: 100,
        bytes: 2048,
        samples_decoded: 120,
        protocol: "remote-read".into(),
        phase_ms: BTreeMap::from([("usage".to_string(), 7), ("inventory".to_string(), 5)]),
        groups: 2,
        groups_failed: 1,
        excluded: Excluded {
            namespaces: vec!["kube-system".into()],
            workloads: 3,
        },
    };
    let old = serde_json::json!({
        "queries": 4, "series": 6, "samples": 100,
        "bytes": 2048, "samplesDecoded": 120,
        "protocol": "remote-read",
        "phaseMs": {"usage": 7, "inventory": 5}, "groups": 2, "groupsFailed": 1,
        "excluded": { "namespaces": ["kube-system"], "workloads": 3 },
    })
    .to_string();
    assert_eq!(collect_column(Some(&collect)), old);
    assert_eq!(collect_from_column(&old).expect("reads"), Some(collect));
    assert_eq!(collect_column(None), "{}");
    assert_eq!(collect_from_column("{}").expect("reads"), None);

    let errors = RunErrors::from(vec![
        RunErrorEntry::Group {
            group: "payments".into(),
            message: "collect: boom".into(),
        },
        RunErrorEntry::Workload {
            workload: "shop/Deployment/api".into(),
            message: "no container of this workload was observed".into(),
        },
        RunErrorEntry::Run {
            message: "store: disk full".into(),
        },
    ]);
    let old = serde_json::Value::Array(vec![
        serde_json::json!({ "group": "payments", "message": "collect: boom" }),
        serde_json::json!({ "workload": "shop/Deployment/api", "message": "no container of this workload was observed" }),
        serde_json::json!({ "message": "store: disk full" }),
    ])
    .to_string();
    assert_eq!(errors.to_string(), old);
    assert_eq!(
        from_column::<RunErrors>("errors", &old).expect("reads"),
        errors
    );
}

#[test]
fn rows_of_earlier_versions_still_read() {
    // Before groups, exclusions and byte counts were recorded.
    let old = r#"{"queries":2,"series":4,"samples":10,"phaseMs":{"usage":1}}"#;
    let read = collect_from_column(old).expect("reads").expect("some");
    assert_eq!((read.queries, read.groups, read.bytes), (2, 0, 0));
    // What `fail_interrupted_runs` writes in SQL.
    let interrupted = r#"[{"message":"interrupted: kerf stopped while this run was in progress"}]"#;
    let errors: RunErrors = from_column("errors", interrupted).expect("reads");
    assert_eq!(
        errors.iter().next().map(RunErrorEntry::message),
        Some("interrupted: kerf stopped while this run was in progress")
    );
    assert!(collect_from_column(r#"{"queries":"many"}"#).is_err());
    assert!(
        collect_from_column(r#"{"rows":1}"#).is_err(),
        "unknown figure"
    );
}
