//! Logging setup: `tracing` to stderr as text or JSON, filtered by `KERF_LOG` or
//! `log.level`. Secrets never reach a log line: they are never put in a field. No value
//! forges one either: JSON escapes control characters, and the text format writes each
//! event on one line with every control character a value carries escaped.

use std::fmt;

use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{Format, Full, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};

/// Installs the global subscriber once. Later calls are ignored.
pub fn init(cfg: &LogConfig) {
    let filter = std::env::var("KERF_LOG")
        .ok()
        .and_then(|f| EnvFilter::try_new(f).ok())
        .or_else(|| EnvFilter::try_new(&cfg.level).ok())
        .unwrap_or_else(|| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(true);
    let _ = match cfg.format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder
            .with_ansi(false)
            .event_format(text_format())
            .try_init(),
    };
}

/// The text format: tracing's full format, without colours, one line per event.
fn text_format() -> OneLine<Format<Full>> {
    OneLine(Format::default().with_target(true).with_ansi(false))
}

/// An event format whose events stay on one line: the inner format's text with every
/// control character (CR, LF, NUL, ESC, C1, …) written escaped (`\n`, `\u{1b}`), so a
/// name, an upstream's answer or a header cannot start a forged line or steer a
/// terminal. tracing escapes only some escape characters, and no line breaks.
struct OneLine<F>(F);

impl<S, N, F> FormatEvent<S, N> for OneLine<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        let text = line.strip_suffix('\n').unwrap_or(&line);
        for c in text.chars() {
            if c.is_control() {
                write!(writer, "{}", c.escape_default())?;
            } else {
                writer.write_char(c)?;
            }
        }
        writer.write_char('\n')
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A log sink the test reads back.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("sink").extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn text_log_lines_escape_control_characters_so_no_value_forges_a_line() {
        let sink = Sink::default();
        let writer = sink.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .event_format(text_format())
            .finish();
        let forged = "ops\r\n2031-01-01T00:00:00Z  INFO kerf: forged\u{0}\u{1b}[31m\u{85}";
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("request", path = %forged);
            let _in = span.enter();
            tracing::info!(name = %forged, "channel created\nsecond {}", "line");
            tracing::info!("plain");
        });
        let text = String::from_utf8(sink.0.lock().expect("sink").clone()).expect("UTF-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(!lines[0].chars().any(char::is_control), "{text:?}");
        assert!(
            lines[0]
                .contains(r"ops\r\n2031-01-01T00:00:00Z  INFO kerf: forged\u{0}\u{1b}[31m\u{85}"),
            "{text}"
        );
        assert!(lines[0].contains(r"channel created\nsecond line"), "{text}");
        assert!(lines[1].ends_with("plain"), "{text}");
    }
}
