//! Where a stored secret may be sent. A secret belongs to its destination: the scheme
//! (or TLS mode), host, port and user name it was given for. An edit that changes any
//! of them does not carry a stored secret over; the caller gives it again, or the edit
//! is refused (one 400 naming the secret). Otherwise an editor could point an admin's
//! SMTP channel, webhook or datasource at a server of their own and receive the
//! password, signing key or token they may not read.

use std::net::IpAddr;

/// One destination of a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// `https`, `http`, or an SMTP security mode (`starttls`, `tls`, `none`).
    pub scheme: String,
    /// Lowercase, without brackets.
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
}

impl Destination {
    /// The destination of an http(s) URL (its origin) for `user`; `None` when the URL
    /// does not parse or has no host.
    pub fn of_url(url: &str, user: Option<&str>) -> Option<Destination> {
        let u = reqwest::Url::parse(url).ok()?;
        Some(Destination {
            scheme: u.scheme().to_string(),
            host: host_of(&u)?,
            port: u.port_or_known_default()?,
            user: user.map(str::to_string),
        })
    }

    /// What differs from `before`, in words (`"host and port"`); `None` when nothing does.
    pub fn moved_from(&self, before: &Destination) -> Option<String> {
        let parts: Vec<&str> = [
            ("scheme", self.scheme != before.scheme),
            ("host", self.host != before.host),
            ("port", self.port != before.port),
            ("user name", self.user != before.user),
        ]
        .into_iter()
        .filter_map(|(what, differs)| differs.then_some(what))
        .collect();
        match parts.as_slice() {
            [] => None,
            [one] => Some((*one).to_string()),
            [init @ .., last] => Some(format!("{} and {last}", init.join(", "))),
        }
    }
}

/// The field error's message for a stored `secret` (`password`, `signing secret`) that
/// the edit moved away from: `moved` says what changed.
pub fn give_again(secret: &str, moved: &str) -> String {
    format!(
        "required: the {moved} changed, and a stored {secret} is never sent to a new \
         destination; give it again"
    )
}

fn host_of(u: &reqwest::Url) -> Option<String> {
    let host = u.host_str()?.trim_start_matches('[').trim_end_matches(']');
    Some(host.to_ascii_lowercase())
}

/// True for `localhost` and loopback addresses: the only hosts a password may be sent
/// to without TLS.
pub fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<IpAddr>().is_ok_and(|a| a.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dest(url: &str, user: Option<&str>) -> Destination {
        Destination::of_url(url, user).expect("a destination")
    }

    #[test]
    fn an_origin_is_scheme_host_and_port_with_the_user() {
        let a = dest("https://Prom.example:443/api", Some("kerf"));
        assert_eq!(a, dest("https://prom.example/other?x=1", Some("kerf")));
        assert_eq!(
            dest("http://prom.example/", Some("kerf")).moved_from(&a),
            Some("scheme and port".into())
        );
        assert_eq!(
            dest("https://127.0.0.1:9999/", Some("kerf")).moved_from(&a),
            Some("host and port".into())
        );
        assert_eq!(
            dest("https://prom.example/", None).moved_from(&a),
            Some("user name".into())
        );
        assert_eq!(a.moved_from(&a), None);
        assert!(Destination::of_url("not a url", None).is_none());
    }

    #[test]
    fn only_loopback_hosts_are_loopback() {
        for host in ["localhost", "127.0.0.1", "127.8.9.10", "::1", "[::1]"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "smtp.corp.example",
            "10.0.0.1",
            "0x7f000001",
            "localhost.evil",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }
}
