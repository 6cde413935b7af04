use std::net::SocketAddr;

use super::*;

fn policy(allow: &[&str], allow_only: bool) -> Policy {
    Policy {
        allow: allow
            .iter()
            .map(|a| Rule::parse(a).expect("a rule"))
            .collect(),
        allow_only,
        hub: Some("0.0.0.0:8080".parse().expect("addr")),
    }
}

fn addr(s: &str) -> SocketAddr {
    s.parse().expect("a socket address")
}

#[test]
fn metadata_link_local_unspecified_and_the_hub_itself_are_refused_by_default() {
    let p = policy(&[], false);
    for (url, why) in [
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://[fd00:ec2::254]/", "metadata"),
        ("http://100.100.100.200/", "metadata"),
        ("http://169.254.10.1:9000/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[::ffff:169.254.169.254]/", "metadata"),
        ("http://0.0.0.0:9000/", "unspecified"),
        ("http://127.0.0.1:8080/v1/clusters", "hub's own"),
        ("http://0x7f000001:8080/", "hub's own"),
    ] {
        let refused = p.check_url(url, Purpose::Any).expect_err(url);
        assert!(refused.0.contains(why), "{url}: {refused}");
    }
    for url in [
        "http://127.0.0.1:9000/hook",
        "https://hooks.corp.example/x",
        "http://10.0.0.7:8080/",
    ] {
        p.check_url(url, Purpose::Any).expect(url);
    }
    // After resolution, the port is the URL's (checked before): addresses alone.
    assert!(p
        .check_addr("evil.example", addr("169.254.169.254:0"))
        .is_err());
    assert!(p.check_addr("ok.example", addr("93.184.215.14:0")).is_ok());
}

#[test]
fn slack_and_teams_go_only_to_their_vendors_unless_allowed() {
    let p = policy(&[], false);
    p.check_url("https://hooks.slack.com/services/T/B/X", Purpose::Slack)
        .expect("slack");
    p.check_url(
        "https://corp.webhook.office.com/webhookb2/x",
        Purpose::Teams,
    )
    .expect("teams");
    p.check_url(
        "https://prod-12.westeurope.logic.azure.com/workflows/x",
        Purpose::Teams,
    )
    .expect("teams workflows");
    let refused = p
        .check_url("http://127.0.0.1:9000/services/x", Purpose::Slack)
        .expect_err("not slack");
    assert!(refused.0.contains("not a Slack host"), "{refused}");
    assert!(p
        .check_url("https://hooks.slack.com.evil.example/x", Purpose::Slack)
        .is_err());
    assert!(p
        .check_url("https://evilwebhook.office.com/x", Purpose::Teams)
        .is_err());
    let allowed = policy(&["127.0.0.1"], false);
    allowed
        .check_url("http://127.0.0.1:9000/services/x", Purpose::Slack)
        .expect("allowed");
}

#[test]
fn allow_lifts_a_refusal_and_allow_only_refuses_the_rest() {
    let p = policy(&["169.254.0.0/16", "*.corp.example"], false);
    p.check_url("http://169.254.169.254/", Purpose::Any)
        .expect("allowed CIDR");
    let only = policy(&["*.corp.example", "10.0.0.0/8"], true);
    only.check_url("https://hooks.corp.example/", Purpose::Any)
        .expect("under the domain");
    only.check_url("http://10.1.2.3:9000/", Purpose::Any)
        .expect("in the CIDR");
    assert!(only
        .check_url("https://example.com/", Purpose::Any)
        .is_err());
    assert!(only
        .check_addr("hooks.corp.example", addr("8.8.8.8:0"))
        .is_ok());
    assert!(only.check_addr("other.example", addr("8.8.8.8:0")).is_err());
    // Vendors stay reachable under allow_only.
    only.check_url("https://hooks.slack.com/services/x", Purpose::Slack)
        .expect("slack");
}

#[test]
fn rules_read_hosts_domains_addresses_and_cidrs() {
    assert_eq!(
        Rule::parse("Hooks.Corp.Example"),
        Some(Rule::Host("hooks.corp.example".into()))
    );
    assert_eq!(
        Rule::parse("*.corp.example"),
        Some(Rule::Under(".corp.example".into()))
    );
    assert!(matches!(Rule::parse("10.0.0.0/8"), Some(Rule::Net(_))));
    assert!(matches!(Rule::parse("fd00::7"), Some(Rule::Net(_))));
    for bad in ["", "http://x", "a b", "*.", "x/33"] {
        assert_eq!(Rule::parse(bad), None, "{bad}");
    }
}

#[tokio::test]
async fn a_name_that_resolves_to_a_refused_address_is_refused_at_resolution() {
    let p = policy(&[], false);
    let refused = resolver::resolve(&p, "localhost", 8080)
        .await
        .expect_err("the hub's own port on loopback");
    assert!(refused.0.contains("hub's own"), "{refused}");
    let fine = resolver::resolve(&p, "localhost", 9000)
        .await
        .expect("fine");
    assert!(fine.iter().all(|a| a.ip().is_loopback()), "{fine:?}");
}
