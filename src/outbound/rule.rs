//! One `[outbound] allow` entry: a host (`hooks.corp.example`), every host under a
//! domain (`*.corp.example`), an address (`10.0.0.7`, `fd00::7`) or a CIDR
//! (`10.0.0.0/8`).

use std::net::IpAddr;

use ipnet::IpNet;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    Host(String),
    /// `*.corp.example`: the suffix with its dot (`.corp.example`).
    Under(String),
    Net(IpNet),
}

impl Rule {
    /// Reads one entry; `None` when it is none of the four forms.
    pub fn parse(entry: &str) -> Option<Rule> {
        let e = entry.trim().to_ascii_lowercase();
        if let Ok(net) = e.parse::<IpNet>() {
            return Some(Rule::Net(net));
        }
        if let Ok(ip) = e.parse::<IpAddr>() {
            return Some(Rule::Net(IpNet::from(ip)));
        }
        let (under, name) = match e.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, e.as_str()),
        };
        let label = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        };
        if name.is_empty() || name.len() > 253 || !name.split('.').all(label) {
            return None;
        }
        Some(if under {
            Rule::Under(format!(".{name}"))
        } else {
            Rule::Host(name.to_string())
        })
    }

    /// A built-in host pattern (the vendors' hosts).
    pub(super) fn host(pattern: &str) -> Rule {
        Rule::parse(pattern).expect("a valid built-in pattern")
    }

    /// `host` (lowercase) is this host or under this domain.
    pub fn matches_host(&self, host: &str) -> bool {
        match self {
            Rule::Host(h) => h == host,
            Rule::Under(suffix) => host.ends_with(suffix.as_str()),
            Rule::Net(net) => host.parse::<IpAddr>().is_ok_and(|ip| net.contains(&ip)),
        }
    }

    pub fn matches_ip(&self, ip: IpAddr) -> bool {
        matches!(self, Rule::Net(net) if net.contains(&ip))
    }
}
