//! Reading LSP frames (`Content-Length: N\r\n\r\n` + N bytes of JSON) from a byte
//! stream that may be broken. A bad frame is reported and skipped; reading goes on at
//! the next `Content-Length` header, so one malformed message from an editor or a
//! plug-in does not end the session.

use std::borrow::Cow;
use std::io::{self, BufRead};

use lsp_server::Message;

const LENGTH: &[u8] = b"content-length:";

/// What the stream held next.
#[derive(Debug)]
pub enum Frame {
    Message(Message),
    /// A frame that could not be read, and why; the stream goes on after it.
    Malformed(String),
}

pub struct FrameReader<R> {
    input: R,
    line: Vec<u8>,
    /// A message read right after skipped garbage: delivered after the report.
    pending: Option<Message>,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(input: R) -> Self {
        FrameReader {
            input,
            line: Vec::new(),
            pending: None,
        }
    }

    /// The next frame; `None` at the end of the stream.
    pub fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        if let Some(msg) = self.pending.take() {
            return Ok(Some(Frame::Message(msg)));
        }
        let mut length: Option<usize> = None;
        let mut skipped = 0usize;
        let mut bad_length: Option<String> = None;
        loop {
            self.line.clear();
            if self.input.read_until(b'\n', &mut self.line)? == 0 {
                return Ok((skipped > 0 || length.is_some()).then(|| {
                    Frame::Malformed(format!(
                        "the stream ended inside a frame header ({skipped} stray bytes)"
                    ))
                }));
            }
            let line = trim_eol(&self.line);
            if line.is_empty() {
                if length.is_some() || bad_length.is_some() {
                    break;
                }
                // A blank line between frames: nothing to read yet.
                continue;
            }
            // A header may follow garbage on the same line (a frame without headers
            // runs into the next frame's header): resynchronise at the header.
            let lower = line.to_ascii_lowercase();
            match find(&lower, LENGTH) {
                Some(at) => {
                    skipped += at;
                    let value = String::from_utf8_lossy(&line[at + LENGTH.len()..]);
                    match value.trim().parse::<usize>() {
                        Ok(n) => length = Some(n),
                        Err(_) => bad_length = Some(value.trim().to_string()),
                    }
                }
                // Other headers (`Content-Type`) are allowed and ignored.
                None if line.contains(&b':') && skipped == 0 && !line.starts_with(b"{") => {}
                None => skipped += line.len(),
            }
        }
        let Some(length) = length else {
            return Ok(Some(Frame::Malformed(format!(
                "bad Content-Length `{}`",
                bad_length.unwrap_or_default()
            ))));
        };
        let mut body = vec![0; length];
        self.input.read_exact(&mut body)?;
        let note = if skipped > 0 {
            format!(" (after skipping {skipped} bytes that were not a frame)")
        } else {
            String::new()
        };
        let Ok(text) = String::from_utf8(body) else {
            return Ok(Some(Frame::Malformed(format!(
                "a frame of {length} bytes is not UTF-8{note}"
            ))));
        };
        match serde_json::from_str::<Message>(&repair_surrogates(&text)) {
            Ok(msg) if skipped == 0 => Ok(Some(Frame::Message(msg))),
            Ok(msg) => {
                // Report the garbage, then deliver the message that followed it.
                self.pending = Some(msg);
                Ok(Some(Frame::Malformed(format!(
                    "skipped {skipped} bytes that were not a frame"
                ))))
            }
            Err(e) => Ok(Some(Frame::Malformed(format!(
                "a frame of {length} bytes is not a JSON-RPC message: {e}{note}"
            )))),
        }
    }
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// JSON text with every `\u` escape of a lone UTF-16 surrogate replaced by `\uFFFD`.
/// JavaScript clients can send such strings (a half-typed emoji); serde_json rejects
/// them. The replacement is one UTF-16 unit too, so positions in the edit still hold.
pub fn repair_surrogates(text: &str) -> Cow<'_, str> {
    if !text.contains("\\u") {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        if bytes.get(at..at + 2)? != b"\\u" {
            return None;
        }
        u16::from_str_radix(text.get(at + 2..at + 6)?, 16).ok()
    };
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    let mut changed = false;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(u) = unit(i) else {
            // Any other escape: skip the escaped character, so `\\u` is not read as `\u`.
            i += 2;
            continue;
        };
        let high = (0xD800..0xDC00).contains(&u);
        let low = (0xDC00..0xE000).contains(&u);
        if high && unit(i + 6).is_some_and(|n| (0xDC00..0xE000).contains(&n)) {
            i += 12;
        } else if high || low {
            out.push_str(&text[copied..i]);
            out.push_str("\\uFFFD");
            i += 6;
            copied = i;
            changed = true;
        } else {
            i += 6;
        }
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    fn read_all(input: &str) -> Vec<String> {
        let mut r = FrameReader::new(input.as_bytes());
        let mut out = Vec::new();
        while let Some(f) = r.next_frame().expect("reads") {
            out.push(match f {
                Frame::Message(Message::Notification(n)) => n.method,
                Frame::Message(m) => format!("{m:?}"),
                Frame::Malformed(why) => format!("malformed: {why}"),
            });
        }
        out
    }

    const PING: &str = r#"{"jsonrpc":"2.0","method":"ping"}"#;

    #[test]
    fn bad_json_is_reported_and_the_next_frame_read() {
        let input = frame("{not json") + &frame(PING);
        let got = read_all(&input);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].starts_with("malformed: a frame of 9 bytes is not a JSON-RPC message"));
        assert_eq!(got[1], "ping");
    }

    #[test]
    fn a_frame_without_header_is_skipped_up_to_the_next_header() {
        let input = PING.to_string() + &frame(PING) + &frame(PING);
        let got = read_all(&input);
        assert_eq!(
            got,
            [
                format!(
                    "malformed: skipped {} bytes that were not a frame",
                    PING.len()
                ),
                "ping".to_string(),
                "ping".to_string()
            ]
        );
    }

    #[test]
    fn a_header_block_without_length_is_reported() {
        let input = "Content-Type: x\r\nContent-Length: abc\r\n\r\n".to_string() + &frame(PING);
        let got = read_all(&input);
        assert_eq!(got, ["malformed: bad Content-Length `abc`", "ping"]);
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(repair_surrogates(r#""a\ud800b""#), r#""a\uFFFDb""#);
        assert_eq!(repair_surrogates(r#""\udc00""#), r#""\uFFFD""#);
        // A pair, an escaped backslash and other escapes stay as they are.
        for ok in [r#""\ud83e\udd80""#, r#""\\ud800""#, r#""\n\u0041""#] {
            assert_eq!(repair_surrogates(ok), ok);
        }
        let body = r#"{"jsonrpc":"2.0","method":"x","params":{"t":"\ud800"}}"#;
        let input = frame(body);
        let mut r = FrameReader::new(input.as_bytes());
        match r.next_frame().expect("reads") {
            Some(Frame::Message(Message::Notification(n))) => {
                assert_eq!(n.params["t"], "\u{FFFD}")
            }
            other => panic!("{other:?}"),
        }
    }
}
