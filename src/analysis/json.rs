//! Go-compatible JSON encoding (contract, "JSON encoding notes"): struct-order keys (serde
//! already does that), shortest round-trip floats without `.0`, exponent form only at
//! ≥ 1e21 or < 1e-6 in Go's spelling, and Go's HTML-safe string escaping. One formatter
//! serves compact output, pretty output and the policy hash.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use super::error::Error;

/// Encodes `value` like Go's `json.Marshal`.
pub fn to_vec_compact<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    encode(
        value,
        GoFormatter {
            inner: CompactFormatter,
        },
    )
}

/// Encodes `value` like Go's `json.MarshalIndent(v, "", "  ")`.
pub fn to_vec_pretty<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    encode(
        value,
        GoFormatter {
            inner: PrettyFormatter::with_indent(b"  "),
        },
    )
}

fn encode<T: Serialize + ?Sized, F: Formatter>(value: &T, formatter: F) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(4096);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    value
        .serialize(&mut ser)
        .map_err(|e| Error::Encode(e.to_string()))?;
    Ok(out)
}

/// Formats a finite float as Go's `encoding/json` does.
pub fn format_go_float(value: f64) -> String {
    let abs = value.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let text = format!("{value:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((text.as_str(), "0"));
        match exponent.strip_prefix('-') {
            // Go prints e-07 and then strips the single leading zero: e-7.
            Some(negative) => format!("{mantissa}e-{negative}"),
            None => {
                let exp: i32 = exponent.parse().unwrap_or(0);
                format!("{mantissa}e+{exp:02}")
            }
        }
    } else {
        format!("{value}")
    }
}

/// Wraps serde_json's compact or pretty formatter, changing only numbers and strings.
struct GoFormatter<F> {
    inner: F,
}

impl<F: Formatter> Formatter for GoFormatter<F> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        let abs = value.abs();
        if abs == 0.0 || (1e-6..1e21).contains(&abs) {
            write!(w, "{value}")
        } else {
            w.write_all(format_go_float(value).as_bytes())
        }
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // 0xE2 leads the UTF-8 encodings of U+2028 and U+2029.
        if !fragment
            .bytes()
            .any(|b| matches!(b, b'<' | b'>' | b'&' | 0xE2))
        {
            return w.write_all(fragment.as_bytes());
        }
        for c in fragment.chars() {
            match c {
                '<' => w.write_all(b"\\u003c")?,
                '>' => w.write_all(b"\\u003e")?,
                '&' => w.write_all(b"\\u0026")?,
                '\u{2028}' => w.write_all(b"\\u2028")?,
                '\u{2029}' => w.write_all(b"\\u2029")?,
                c => {
                    let mut buf = [0u8; 4];
                    w.write_all(c.encode_utf8(&mut buf).as_bytes())?;
                }
            }
        }
        Ok(())
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.inner.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.inner.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_floats_have_no_fraction() {
        assert_eq!(format_go_float(3.0), "3");
        assert_eq!(format_go_float(1099511627776.0), "1099511627776");
        assert_eq!(format_go_float(-0.0), "-0");
    }

    #[test]
    fn fractions_use_the_shortest_round_trip_form() {
        assert_eq!(format_go_float(0.1), "0.1");
        assert_eq!(format_go_float(1.2), "1.2");
        assert_eq!(format_go_float(0.16666666666666666), "0.16666666666666666");
        assert_eq!(format_go_float(1.0000000000000004), "1.0000000000000004");
    }

    #[test]
    fn exponent_form_starts_at_1e21_and_below_1e_minus_6_as_in_go() {
        assert_eq!(format_go_float(1e20), "100000000000000000000");
        assert_eq!(format_go_float(1e21), "1e+21");
        assert_eq!(format_go_float(1.5e300), "1.5e+300");
        assert_eq!(format_go_float(0.000001), "0.000001");
        assert_eq!(format_go_float(1e-7), "1e-7");
        assert_eq!(format_go_float(-2.5e-10), "-2.5e-10");
        assert_eq!(format_go_float(f64::MAX), "1.7976931348623157e+308");
    }

    #[test]
    fn encoder_applies_go_numbers_and_html_escaping_inside_structures() {
        let value = serde_json::json!({"a": [3.0, 1e21, 0.5], "s": "<&>"});
        let bytes = to_vec_compact(&value).expect("encodes");
        assert_eq!(
            String::from_utf8(bytes).expect("utf8"),
            r#"{"a":[3,1e+21,0.5],"s":"\u003c\u0026\u003e"}"#
        );
    }

    #[test]
    fn pretty_output_uses_two_space_indent_and_empty_arrays() {
        let value = serde_json::json!({"a": [], "b": 1.0});
        let bytes = to_vec_pretty(&value).expect("encodes");
        assert_eq!(
            String::from_utf8(bytes).expect("utf8"),
            "{\n  \"a\": [],\n  \"b\": 1\n}"
        );
    }
}
