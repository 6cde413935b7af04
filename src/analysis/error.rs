//! The one error type of the analysis engine. Every message is a single line that names
//! what is wrong; where the contract fixes a text, that text is included verbatim.

/// Why an analysis could not be produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The input document is malformed or violates the input contract.
    #[error("invalid input: {0}")]
    Input(String),
    /// The policy document is malformed or violates the policy contract.
    #[error("invalid policy: {0}")]
    Policy(String),
    /// The result could not be encoded as JSON (a bug: all numbers are finite by construction).
    #[error("cannot encode analysis output: {0}")]
    Encode(String),
}

impl Error {
    /// An input error with every line break folded, so the message stays on one line.
    pub(crate) fn input(message: impl Into<String>) -> Error {
        Error::Input(one_line(message.into()))
    }

    /// A policy error with every line break folded.
    pub(crate) fn policy(message: impl Into<String>) -> Error {
        Error::Policy(one_line(message.into()))
    }
}

fn one_line(message: String) -> String {
    if message.contains(['\n', '\r']) {
        message.replace(['\n', '\r'], " ")
    } else {
        message
    }
}

/// Quotes a string the way Go's `%q` does for the ASCII range, so messages match the
/// reference engine's (`"a\x00b"`).
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_quote_escapes_nul_as_hex_like_go() {
        assert_eq!(go_quote("a\0b"), "\"a\\x00b\"");
        assert_eq!(go_quote("x\"y\n"), "\"x\\\"y\\n\"");
    }

    #[test]
    fn error_messages_never_span_lines() {
        let e = Error::input("bad\nthing\r");
        assert_eq!(e.to_string(), "invalid input: bad thing ");
    }
}
