//! The channel checks: fields, secrets kept or not, masks.

use super::*;

fn input(kind: ChannelKind) -> ChannelInput {
    ChannelInput {
        name: "ops".into(),
        kind,
        team_id: None,
        enabled: true,
        url: None,
        signing_secret: None,
        email: None,
        default_rules: None,
        reason: None,
    }
}

#[test]
fn a_webhook_needs_a_url_and_a_long_enough_signing_secret() {
    let errors = validate(input(ChannelKind::Webhook), None).unwrap_err();
    let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["url", "signingSecret"]);
    let mut ok = input(ChannelKind::Webhook);
    ok.url = Some("https://hooks.example.com/kerf/abcdefghijklmnop".into());
    ok.signing_secret = Some("short".into());
    assert_eq!(
        validate(ok.clone(), None).unwrap_err()[0].field,
        "signingSecret"
    );
    ok.signing_secret = Some("0123456789abcdef".into());
    let v = validate(ok, None).expect("valid");
    assert_eq!(v.target_masked(), "https://hooks.example.com/…mnop");
}

#[test]
fn replace_keeps_secrets_of_the_same_kind_only() {
    let mut first = input(ChannelKind::Slack);
    first.url = Some("https://hooks.slack.com/services/T1/B2/SECRETSECRETSECRET".into());
    let stored = validate(first, None).expect("valid");
    let previous = Stored {
        kind: stored.kind,
        secrets: &stored.secrets,
        email: None,
    };
    let again = validate(input(ChannelKind::Slack), Some(previous)).expect("kept");
    assert_eq!(again.secrets.url, stored.secrets.url);
    let other = validate(input(ChannelKind::Teams), Some(previous));
    assert_eq!(other.unwrap_err()[0].field, "url");
}

#[test]
fn masks_and_scrubbing_never_show_the_secret_path() {
    let url = "https://hooks.slack.com/services/T1/B2/SECRETSECRETSECRET?x=1";
    let masked = mask_url(url);
    assert!(!masked.contains("SECRETSECRET"), "{masked}");
    assert!(masked.starts_with("https://hooks.slack.com/"), "{masked}");
    let s = ChannelSecrets {
        url: Some(url.into()),
        signing_secret: Some("sig-sig-sig-sig-sig".into()),
        smtp_password: None,
    };
    let text = format!(
        "POST {url} failed; key sig-sig-sig-sig-sig; path /services/T1/B2/SECRETSECRETSECRET?x=1"
    );
    let clean = s.scrub(&text);
    assert!(
        !clean.contains("SECRET") && !clean.contains("sig-sig"),
        "{clean}"
    );
    assert!(!format!("{s:?}").contains("SECRET"));
}

#[test]
fn email_settings_are_checked_field_by_field() {
    let mut i = input(ChannelKind::Email);
    i.email = Some(EmailInput {
        host: "smtp.example.com".into(),
        port: None,
        security: None,
        username: Some("kerf".into()),
        password: None,
        from: "not an address".into(),
        to: vec!["ops@example.com".into(), "nope".into()],
        ca_pem: Some("garbage".into()),
    });
    let fields: Vec<_> = validate(i, None)
        .unwrap_err()
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(
        fields,
        ["email.from", "email.to[1]", "email.password", "email.caPem"]
    );
    let mut ok = input(ChannelKind::Email);
    ok.email = Some(EmailInput {
        host: "smtp.example.com".into(),
        port: None,
        security: Some(SmtpSecurity::Tls),
        username: None,
        password: None,
        from: "kerf <kerf@example.com>".into(),
        to: vec!["ops@example.com".into()],
        ca_pem: None,
    });
    let v = validate(ok, None).expect("valid");
    assert_eq!(v.email.as_ref().map(|e| e.port), Some(465));
    assert_eq!(
        v.target_masked(),
        "smtp://smtp.example.com:465 → ops@example.com"
    );
}

fn smtp(host: &str, port: u16, security: SmtpSecurity, password: Option<&str>) -> EmailInput {
    EmailInput {
        host: host.into(),
        port: Some(port),
        security: Some(security),
        username: Some("kerf".into()),
        password: password.map(str::to_string),
        from: "kerf@example.com".into(),
        to: vec!["ops@example.com".into()],
        ca_pem: None,
    }
}

fn fields(r: Result<ValidChannel, Vec<FieldError>>) -> Vec<String> {
    r.unwrap_err().into_iter().map(|e| e.field).collect()
}

#[test]
fn a_stored_smtp_password_goes_only_where_it_went_before() {
    let mut first = input(ChannelKind::Email);
    first.email = Some(smtp(
        "smtp.corp.example",
        587,
        SmtpSecurity::Starttls,
        Some("pw"),
    ));
    let stored = validate(first, None).expect("valid");
    let previous = Stored {
        kind: stored.kind,
        secrets: &stored.secrets,
        email: stored.email.as_ref(),
    };
    // The same server: the password is kept.
    let mut same = input(ChannelKind::Email);
    same.email = Some(smtp("SMTP.corp.example", 587, SmtpSecurity::Starttls, None));
    let kept = validate(same, Some(previous)).expect("kept");
    assert_eq!(kept.secrets.smtp_password, stored.secrets.smtp_password);
    // Another host and port without a password: refused, naming the password.
    let mut moved = input(ChannelKind::Email);
    moved.email = Some(smtp("127.0.0.1", 2525, SmtpSecurity::None, None));
    let errors = validate(moved.clone(), Some(previous)).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field, "email.password");
    assert!(
        errors[0].message.contains("host, port and scheme")
            || errors[0].message.contains("scheme, host and port"),
        "{}",
        errors[0].message
    );
    // With a password of its own, the move is the caller's to make.
    moved.email.as_mut().expect("email").password = Some("their own".into());
    let v = validate(moved, Some(previous)).expect("a new secret");
    assert_eq!(v.secrets.smtp_password, Some(Secret::from("their own")));
}

#[test]
fn a_password_is_never_sent_in_clear_to_a_host_that_is_not_loopback() {
    let mut i = input(ChannelKind::Email);
    i.email = Some(smtp(
        "smtp.corp.example",
        25,
        SmtpSecurity::None,
        Some("pw"),
    ));
    assert_eq!(fields(validate(i.clone(), None)), ["email.security"]);
    i.email = Some(smtp("localhost", 25, SmtpSecurity::None, Some("pw")));
    validate(i, None).expect("loopback may go without TLS");
}

#[test]
fn a_signing_secret_stays_with_its_receivers_origin() {
    let mut first = input(ChannelKind::Webhook);
    first.url = Some("https://hooks.example.com/kerf/abcdefghijklmnop".into());
    first.signing_secret = Some("0123456789abcdef".into());
    let stored = validate(first, None).expect("valid");
    let previous = Stored {
        kind: stored.kind,
        secrets: &stored.secrets,
        email: None,
    };
    let mut path = input(ChannelKind::Webhook);
    path.url = Some("https://hooks.example.com/kerf/other-path-0000".into());
    let v = validate(path, Some(previous)).expect("same origin keeps it");
    assert_eq!(v.secrets.signing_secret, stored.secrets.signing_secret);
    let mut away = input(ChannelKind::Webhook);
    away.url = Some("http://127.0.0.1:8099/steal".into());
    let errors = validate(away.clone(), Some(previous)).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field, "signingSecret");
    assert!(
        errors[0].message.contains("never sent"),
        "{}",
        errors[0].message
    );
    away.signing_secret = Some("fedcba9876543210".into());
    validate(away, Some(previous)).expect("a new signing secret");
}
