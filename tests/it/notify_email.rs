//! Email channels against the real binary and a real SMTP server (aiosmtpd): implicit
//! TLS (`security: "tls"`, SMTPS) with AUTH and the channel's CA, sent by the test
//! button; a wrong password and a server that does not speak TLS are reported by the
//! test answer, not hung on. The SMTP password (also base64-encoded as AUTH sends it)
//! is in no answer, including the answers to the changes and the tests, in no log line
//! at debug level, and nowhere in the database.

use base64::Engine;
use serde_json::{json, Value};

use crate::support::smtp::Smtp;
use crate::support::{Api, DataDir, Kerf};

const USER: &str = "kerf-mailer";
const PASSWORD: &str = "smtp-tls-password-do-not-leak-77";
const WRONG: &str = "wrong-smtp-password-do-not-leak-78";

fn email(name: &str, port: u16, security: &str, password: &str, ca: &str) -> Value {
    json!({"name": name, "type": "email", "defaultRules": false, "email": {
        "host": "127.0.0.1", "port": port, "security": security, "username": USER,
        "password": password, "from": "kerf <kerf@example.com>", "to": ["ops@example.com"],
        "caPem": ca}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn implicit_tls_email_is_sent_by_the_test_button_and_the_password_shows_nowhere() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = Kerf::builder(data.path())
        .envs(&[("KERF_LOG", "debug")])
        .start();
    let base = kerf.url("");
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).expect("cert");
    let (crt, key) = (data.path().join("smtp.crt"), data.path().join("smtp.key"));
    std::fs::write(&crt, cert.cert.pem()).expect("cert");
    std::fs::write(&key, cert.signing_key.serialize_pem()).expect("key");
    let ca = cert.cert.pem();
    let smtps = Smtp::start_with(Some((USER, PASSWORD)), Some((&crt, &key)), true);
    let plain = Smtp::start(None, None);

    let mut answers = String::new();
    let create = |body: Value| {
        let (base, admin) = (base.clone(), admin.clone());
        async move {
            let (s, v) = Api::new(&base, &admin)
                .call("POST", "/v1/notifications/channels", Some(body))
                .await;
            assert_eq!(s, 201, "{v}");
            v
        }
    };
    let good = create(email("smtps", smtps.port, "tls", PASSWORD, &ca)).await;
    let wrong = create(email("smtps-wrong", smtps.port, "tls", WRONG, &ca)).await;
    let no_tls = create(email("not-tls", plain.port, "tls", PASSWORD, &ca)).await;
    for v in [&good, &wrong, &no_tls] {
        answers.push_str(&v.to_string());
        assert_eq!(v["email"]["passwordSet"], true, "{v}");
    }
    let test = |id: &Value| {
        let (base, admin) = (base.clone(), admin.clone());
        let path = format!("/v1/notifications/channels/{id}/test");
        async move {
            let (s, v) = Api::new(&base, &admin).call("POST", &path, None).await;
            assert_eq!(s, 200, "{v}");
            v
        }
    };

    // Implicit TLS with AUTH: the test message arrives encrypted, as that login.
    let sent = test(&good["id"]).await;
    answers.push_str(&sent.to_string());
    assert_eq!(sent["delivered"], true, "{sent}");
    let mails = smtps.wait_for(1, std::time::Duration::from_secs(20)).await;
    assert_eq!(
        (mails[0]["tls"].as_bool(), mails[0]["login"].as_str()),
        (Some(true), Some(USER)),
        "{}",
        mails[0]
    );
    assert_eq!(mails[0]["rcptTos"], json!(["ops@example.com"]));

    // A refused login and a server without TLS: reported, not hung on, nothing sent.
    for id in [&wrong["id"], &no_tls["id"]] {
        let v = test(id).await;
        answers.push_str(&v.to_string());
        assert_eq!(v["delivered"], false, "{v}");
        assert!(
            v["answer"]
                .as_str()
                .is_some_and(|a| !a.is_empty() && a != "delivered"),
            "{v}"
        );
    }
    assert_eq!(smtps.messages().len(), 1);
    assert!(plain.messages().is_empty());

    // A change answers without the password, and keeps it (the test still signs in).
    let mut replace = email("smtps", smtps.port, "tls", PASSWORD, &ca);
    replace["email"]
        .as_object_mut()
        .expect("email")
        .remove("password");
    let path = format!("/v1/notifications/channels/{}", good["id"]);
    let (s, v) = Api::new(&base, &admin)
        .call("PUT", &path, Some(replace))
        .await;
    assert_eq!(s, 200, "{v}");
    answers.push_str(&v.to_string());
    let again = test(&good["id"]).await;
    assert_eq!(again["delivered"], true, "{again}");
    answers.push_str(&again.to_string());
    for path in [
        "/v1/notifications/channels".to_string(),
        format!("/v1/notifications/channels/{}", good["id"]),
        "/v1/notifications/deliveries?limit=500".into(),
        "/v1/audit/config?targetType=notification&limit=500".into(),
    ] {
        answers.push_str(
            &Api::new(&base, &admin)
                .call("GET", &path, None)
                .await
                .1
                .to_string(),
        );
    }
    assert!(
        answers.contains("NotificationChannelUpdated"),
        "the audit was read"
    );

    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let logs = kerf.log_text();
    assert!(logs.contains("DEBUG"), "the hub logged at debug level");
    let db: Vec<u8> = ["kerf.db", "kerf.db-wal"]
        .iter()
        .filter_map(|f| std::fs::read(data.path().join(f)).ok())
        .flatten()
        .collect();
    let db = String::from_utf8_lossy(&db);
    for secret in [PASSWORD, WRONG] {
        let forms = [
            secret.to_string(),
            b64(secret),
            b64(&format!("\0{USER}\0{secret}")),
        ];
        for form in &forms {
            assert!(!answers.contains(form.as_str()), "an answer holds {form}");
            assert!(!logs.contains(form.as_str()), "the logs hold {form}");
            assert!(!db.contains(form.as_str()), "the database holds {form}");
        }
    }
    assert_eq!(kerf.stop(), Some(0));
}
