//! The weekly digest, driven by the hub's one clock: an in-process hub (real router on a
//! bound port, real SQLite, the real job runner) on a manual clock in Europe/Berlin.
//! Moved to Monday 09:00 CEST right after the spring DST change, the digest arrives once
//! at a real SMTP server (STARTTLS + AUTH) and at a signed webhook, with figures that
//! match `GET /v1/savings`, `GET /v1/audit` (counts, top reasons, the workloads needing
//! attention) and `GET /v1/workloads` for the same week. Past the slot and after a
//! restart of the hub's jobs it is not sent again; next week's comes once.

use std::time::{Duration, Instant};

use chrono::TimeZone;
use kerf::runs::Trigger;
use serde_json::{json, Value};

use crate::support::hub::hub_at;
use crate::support::receiver::{Receiver, Shape};
use crate::support::smtp::Smtp;
use crate::support::{eventually, secs, uuid, Api};

const CLUSTER: &str = "demo-east";
const SMTP_USER: &str = "kerf-digest";
const SMTP_PASSWORD: &str = "smtp-password-do-not-leak-42";
const SECRET: &str = "digest-signing-secret-0123456789";

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
    chrono::Utc
        .with_ymd_and_hms(y, mo, d, h, mi, 0)
        .single()
        .expect("valid time")
        .timestamp_millis()
}

fn at(ms: i64) -> String {
    kerf::timestamp::format_ms(ms)
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn event(kind: &str, reason: &str, w: &Value, time: i64) -> Value {
    let mut e = json!({
        "id": uuid(), "type": kind, "reason": reason, "time": at(time),
        "workload": {"namespace": w["namespace"], "kind": w["kind"], "name": w["name"]},
        "recommendationID": w["latestRecommendationId"],
    });
    if kind != "blocked" {
        // Applied: the CPU request halved; rolled back: restored.
        let (from, to) = match kind {
            "applied" => ("1", "500m"),
            _ => ("500m", "1"),
        };
        e["strategy"] = json!("in-place");
        e["containers"] = json!([{"name": "app", "from": {"requests": {"cpu": from}}, "to": {"requests": {"cpu": to}}}]);
    }
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_weekly_digest_arrives_once_at_monday_nine_berlin_across_dst_with_matching_figures() {
    // Monday 22 March 2027, 10:00 CET: just after that week's slot (08:00 UTC).
    let t0 = utc(2027, 3, 22, 9, 0);
    let h = hub_at(CLUSTER, true, t0, |config| {
        config.notifications.time_zone = "Europe/Berlin".into();
        config.notifications.public_url = "https://kerf.example".into();
    })
    .await;
    let (dir, clock, runs) = (&h.dir, &h.clock, &h.runs);
    let (base, admin, agent) = (h.base.clone(), h.admin.clone(), h.agent.clone());
    let jobs = kerf::server::hub_jobs(&h.state);
    let run = runs
        .run_to_end(CLUSTER, Trigger::Manual)
        .await
        .expect("run");
    assert_eq!(run.status.as_str(), "succeeded", "{:?}", run.errors);

    // Receivers: a real SMTP server (STARTTLS with its own CA, AUTH) and a webhook.
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).expect("cert");
    let (cert_path, key_path) = (dir.path().join("smtp.crt"), dir.path().join("smtp.key"));
    std::fs::write(&cert_path, cert.cert.pem()).expect("write cert");
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).expect("write key");
    let smtp = Smtp::start(
        Some((SMTP_USER, SMTP_PASSWORD)),
        Some((&cert_path, &key_path)),
    );
    let hook = Receiver::start(Shape::Webhook, "hooks/digestpathsecret", Some(SECRET)).await;
    // The receiver judges the signature's freshness by the hub's (manual) clock.
    let hub_clock = h.clock.clone();
    hook.use_clock(move || kerf::clock::Clock::now_ms(hub_clock.as_ref()) / 1000);
    let mail = json!({"name": "ops-mail", "type": "email", "defaultRules": false, "email": {
        "host": "127.0.0.1", "port": smtp.port, "security": "starttls", "username": SMTP_USER,
        "password": SMTP_PASSWORD, "from": "kerf <kerf@example.com>", "to": ["ops@example.com"],
        "caPem": cert.cert.pem()}});
    let web = json!({"name": "ops-hook", "type": "webhook", "url": hook.url, "signingSecret": SECRET, "defaultRules": false});
    for body in [mail, web] {
        let (s, v) = Api::new(&base, &admin)
            .call("POST", "/v1/notifications/channels", Some(body))
            .await;
        assert_eq!(s, 201, "{v}");
    }
    let (_, digests) = Api::new(&base, &admin)
        .call("GET", "/v1/notifications/digest", None)
        .await;
    assert_eq!(digests["defaultTimeZone"], "Europe/Berlin");
    for d in digests["items"].as_array().expect("items") {
        assert_eq!(
            (d["schedule"].as_str(), d["timeZone"].as_str()),
            (Some("0 9 * * 1"), Some("Europe/Berlin"))
        );
        // 09:00 CEST = 07:00 UTC: the spring change happened on Sunday 28 March.
        assert_eq!(d["nextAt"], at(utc(2027, 3, 29, 7, 0)), "{d}");
    }

    // The week's events: three changes applied (one of them rolled back later), two
    // blocked; one applied change from the week before, outside the digest.
    let (_, list) = Api::new(&base, &admin)
        .call("GET", "/v1/workloads?limit=500", None)
        .await;
    let mut saving: Vec<Value> = list["items"]
        .as_array()
        .expect("workloads")
        .iter()
        .filter(|w| {
            w["estimatedMonthlyCostDelta"]
                .as_f64()
                .is_some_and(|d| d < -0.01)
        })
        .cloned()
        .collect();
    saving.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    assert!(saving.len() >= 4, "the demo fleet has savings to apply");
    let day = |d: u32, h: u32| utc(2027, 3, d, h, 0);
    let events = json!([
        event("applied", "RecommendationApplied", &saving[0], day(21, 12)),
        event("applied", "RecommendationApplied", &saving[1], day(23, 10)),
        event("applied", "RecommendationApplied", &saving[2], day(24, 10)),
        event("applied", "RecommendationApplied", &saving[3], day(25, 10)),
        event("rolled_back", "OOMKills", &saving[3], day(26, 10)),
        event("blocked", "Cooldown", &saving[1], day(26, 11)),
        event("blocked", "Cooldown", &saving[2], day(27, 11)),
    ]);
    let (s, v) = Api::new(&base, &agent)
        .call(
            "POST",
            &format!("/v1/clusters/{CLUSTER}/events"),
            Some(events),
        )
        .await;
    assert_eq!(s, 200, "{v}");

    // The hub's clock reaches the slot (the schedule math around it, one second before
    // and the fixed-offset hour after, is unit-tested in notify::digest::schedule).
    clock.set(utc(2027, 3, 29, 7, 0));
    let started = Instant::now();
    let emails = smtp.wait_for(1, Duration::from_secs(20)).await;
    hook.wait_until(Duration::from_secs(20), "the digest at the webhook", |g| {
        !g.is_empty()
    })
    .await;
    assert!(started.elapsed() < Duration::from_secs(20));

    // The expected figures, from the API for the same week.
    let (start, end) = (utc(2027, 3, 22, 8, 0), utc(2027, 3, 29, 7, 0));
    let count = |kind: &'static str| {
        let (base, admin) = (base.clone(), admin.clone());
        async move {
            let q = format!(
                "/v1/audit?type={kind}&since={}&until={}&limit=500",
                at(start),
                at(end)
            );
            Api::new(&base, &admin).call("GET", &q, None).await.1["items"]
                .as_array()
                .map_or(0, Vec::len)
        }
    };
    let (applied, rolled_back, blocked) = (
        count("applied").await,
        count("rolled_back").await,
        count("blocked").await,
    );
    assert_eq!((applied, rolled_back, blocked), (3, 1, 2));
    let (_, savings) = Api::new(&base, &admin)
        .call("GET", "/v1/savings", None)
        .await;
    let available = savings["fleet"]["monthlySavings"]
        .as_f64()
        .expect("savings");
    // The changes applied in the week and still live: half a core off each replica's
    // request, at the default price of a vCPU-hour (the one rolled back saves nothing).
    let realized = round2(
        saving[1..3]
            .iter()
            .map(|w| 0.5 * 0.0316 * 730.0 * w["replicas"].as_f64().expect("replicas"))
            .sum(),
    );
    let currency = savings["currency"].as_str().expect("currency").to_string();

    let digest = &hook.accepted()[0];
    assert_eq!(digest.kind, "digest");
    let d = &digest.body["data"]["digest"];
    assert_eq!(d["scope"], "fleet");
    assert_eq!(
        (d["periodStart"].as_str(), d["periodEnd"].as_str()),
        (Some(at(start).as_str()), Some(at(end).as_str()))
    );
    assert_eq!(
        d["savings"]["availableMonthly"].as_f64(),
        Some(available),
        "{d}"
    );
    assert_eq!(
        d["savings"]["realizedMonthly"].as_f64(),
        Some(realized),
        "{d}"
    );
    assert_eq!(d["changes"]["applied"], applied);
    assert_eq!(d["changes"]["rolledBack"], rolled_back);
    assert_eq!(d["changes"]["blocked"], blocked);
    // The top reasons and the workloads needing attention, from the API for the week.
    let week = |q: String| {
        let (base, admin) = (base.clone(), admin.clone());
        async move {
            let q = format!(
                "/v1/audit?{q}&since={}&until={}&limit=500",
                at(start),
                at(end)
            );
            Api::new(&base, &admin).call("GET", &q, None).await.1["items"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        }
    };
    let key = |e: &Value| {
        format!(
            "{}/{}/{}/{}",
            e["cluster"].as_str().unwrap_or(CLUSTER),
            e["namespace"]
                .as_str()
                .or(e["workload"]["namespace"].as_str())
                .unwrap_or(""),
            e["kind"]
                .as_str()
                .or(e["workload"]["kind"].as_str())
                .unwrap_or(""),
            e["name"]
                .as_str()
                .or(e["workload"]["name"].as_str())
                .unwrap_or("")
        )
    };
    for (kind, field) in [
        ("rolled_back", "topRollbackReasons"),
        ("blocked", "topBlockedReasons"),
    ] {
        let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
        for e in week(format!("type={kind}")).await {
            *counts
                .entry(e["reason"].as_str().expect("reason").into())
                .or_default() += 1;
        }
        let mut top: Vec<(String, usize)> = counts.into_iter().collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        top.truncate(3);
        let want: Vec<Value> = top
            .iter()
            .map(|(r, n)| json!({"reason": r, "count": n}))
            .collect();
        assert!(!want.is_empty(), "the week has {kind} events");
        assert_eq!(d["changes"][field], json!(want), "{field}");
    }
    let workloads = |q: &'static str| {
        let (base, admin) = (base.clone(), admin.clone());
        async move {
            let path = format!("/v1/workloads?{q}&limit=500");
            let items = Api::new(&base, &admin).call("GET", &path, None).await.1["items"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            items.iter().map(key).collect::<Vec<String>>()
        }
    };
    let mut oom = workloads("notice=oom-kill-detected").await;
    for reason in ["OOMKills", "OOMKilled"] {
        oom.extend(week(format!("reason={reason}")).await.iter().map(key));
    }
    let mut throttled: Vec<String> = Vec::new();
    for reason in ["Throttled", "Throttling"] {
        throttled.extend(week(format!("reason={reason}")).await.iter().map(key));
    }
    let listed = |mut names: Vec<String>| {
        names.sort();
        names.dedup();
        let count = names.len();
        names.truncate(10);
        json!({"count": count, "workloads": names})
    };
    assert!(
        oom.contains(&key(&saving[3])),
        "the rolled-back OOMKills workload needs attention"
    );
    assert_eq!(
        d["attention"],
        json!({
            "oomKilled": listed(oom),
            "leaking": listed(workloads("notice=potential-memory-leak").await),
            "throttled": listed(throttled),
            "stale": listed(workloads("stale=true").await),
        }),
        "{d}"
    );
    assert_eq!(
        d["clustersNotReady"][0]["cluster"], CLUSTER,
        "no agent has reported: {d}"
    );
    assert_eq!(digest.body["link"], "https://kerf.example/");

    let email = &emails[0];
    assert_eq!(
        email["subject"],
        "[kerf] Weekly digest for the fleet — Mon 29 Mar 2027 09:00 CEST"
    );
    assert_eq!(email["rcptTos"], json!(["ops@example.com"]));
    assert_eq!(
        (email["login"].as_str(), email["tls"].as_bool()),
        (Some(SMTP_USER), Some(true))
    );
    let text = email["text"].as_str().expect("plain text part");
    for line in [
        format!("Realized {realized:.2} {currency}/month from changes applied this week; {available:.2} {currency}/month still available."),
        format!("- Changes: {applied} applied, {rolled_back} rolled back, {blocked} blocked"),
        "- Blocked by reason: Cooldown ×2".to_string(),
        "Open in kerf: https://kerf.example/".to_string(),
    ] {
        assert!(text.contains(&line), "{line:?} in\n{text}");
    }
    assert!(
        email["html"]
            .as_str()
            .is_some_and(|h| h.contains("<li>Changes: 3 applied")),
        "{email}"
    );

    // Once: each channel's log holds one digest, delivered, and the next slot is a week on.
    let (_, log) = Api::new(&base, &admin)
        .call("GET", "/v1/notifications/deliveries?kind=digest", None)
        .await;
    let items = log["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{log}");
    eventually(
        "both digests delivered at the first attempt",
        secs(10),
        async || {
            let (_, log) = Api::new(&base, &admin)
                .call("GET", "/v1/notifications/deliveries?kind=digest", None)
                .await;
            if log["items"]
                .as_array()
                .expect("items")
                .iter()
                .all(|d| d["status"] == "delivered" && d["attempts"] == 1)
            {
                Ok(())
            } else {
                Err(log)
            }
        },
    )
    .await;
    let (_, digests) = Api::new(&base, &admin)
        .call("GET", "/v1/notifications/digest", None)
        .await;
    for d in digests["items"].as_array().expect("items") {
        assert_eq!(d["nextAt"], at(utc(2027, 4, 5, 7, 0)), "{d}");
    }
    assert_eq!((smtp.messages().len(), hook.accepted().len()), (1, 1));
    // The SMTP password and signing secret are in no answer, message or database page.
    let mut seen = text.to_string() + &digest.body.to_string();
    for path in [
        "/v1/notifications/channels",
        "/v1/audit/config?targetType=notification",
        "/v1/notifications/deliveries",
    ] {
        seen.push_str(
            &Api::new(&base, &admin)
                .call("GET", path, None)
                .await
                .1
                .to_string(),
        );
    }
    assert!(
        seen.contains("passwordSet"),
        "the channel view says a password is set"
    );
    let db: Vec<u8> = ["kerf.db", "kerf.db-wal"]
        .iter()
        .filter_map(|f| std::fs::read(dir.path().join(f)).ok())
        .flatten()
        .collect();
    seen.push_str(&String::from_utf8_lossy(&db));
    for secret in [SMTP_PASSWORD, SECRET, "digestpathsecret"] {
        assert!(!seen.contains(secret), "{secret} leaked");
    }
    let failures = jobs.stop(Duration::from_secs(10)).await;
    assert!(failures.is_empty(), "{failures:?}");

    // Past the slot (the hour a fixed offset would have picked) and a restart of the
    // hub's jobs: the slot is not sent again. The next week's slot is the barrier: each
    // channel's sender keeps order, so a repeat would have arrived before it.
    clock.set(utc(2027, 3, 29, 8, 0));
    let jobs = kerf::server::hub_jobs(&h.state);
    clock.set(utc(2027, 4, 5, 7, 0));
    let emails = smtp.wait_for(2, Duration::from_secs(20)).await;
    hook.wait_until(Duration::from_secs(20), "next week's digest", |g| {
        g.len() >= 2
    })
    .await;
    let subjects: Vec<&str> = emails
        .iter()
        .filter_map(|e| e["subject"].as_str())
        .collect();
    assert_eq!(
        subjects,
        [
            "[kerf] Weekly digest for the fleet — Mon 29 Mar 2027 09:00 CEST",
            "[kerf] Weekly digest for the fleet — Mon 05 Apr 2027 09:00 CEST"
        ]
    );
    let periods: Vec<String> = hook
        .accepted()
        .iter()
        .map(|r| {
            r.body["data"]["digest"]["periodEnd"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(
        periods,
        [at(utc(2027, 3, 29, 7, 0)), at(utc(2027, 4, 5, 7, 0))]
    );
    let failures = jobs.stop(Duration::from_secs(10)).await;
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!((smtp.messages().len(), hook.accepted().len()), (2, 2));
}
