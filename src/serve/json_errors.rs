//! JSON bodies for the answers hyper gives by itself.
//!
//! A request hyper cannot parse (a URL longer than it takes: 414; headers too
//! large: 431; not HTTP: 400) is answered by hyper before any handler runs, with
//! an empty body. `docs/API.md` promises a JSON error for every failure, so the
//! connection's writes are watched: a response head that hyper wrote for such an
//! error (a 4xx status, no `content-type`, `content-length: 0`) is replaced by the
//! same status with a JSON body naming the problem. Every answer of the server's
//! own handlers has a `content-type` and passes through unchanged.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A stream whose hyper-made error answers get a JSON body.
pub(super) struct JsonErrors<S> {
    inner: S,
    /// A rewritten answer not yet written out.
    pending: Vec<u8>,
}

impl<S> JsonErrors<S> {
    pub(super) fn new(inner: S) -> JsonErrors<S> {
        JsonErrors {
            inner,
            pending: Vec::new(),
        }
    }
}

/// The JSON answer replacing `head`, if `head` is a bodiless error answer hyper
/// wrote by itself.
fn rewrite(head: &[u8]) -> Option<Vec<u8>> {
    let end = head.windows(4).position(|w| w == b"\r\n\r\n")?;
    let text = std::str::from_utf8(&head[..end]).ok()?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next()?;
    let status: u16 = status_line
        .strip_prefix("HTTP/1.1 ")?
        .get(..3)?
        .parse()
        .ok()?;
    if !(400..500).contains(&status) || end + 4 != head.len() {
        return None;
    }
    let mut empty = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-type" => return None,
            "content-length" => empty = value.trim() == "0",
            _ => {}
        }
    }
    if !empty {
        return None;
    }
    let why = match status {
        414 => "the URL is too long".to_string(),
        431 => "the request's headers are too large".to_string(),
        400 => "the request is not well-formed HTTP/1.1".to_string(),
        s => format!("the request was refused ({s})"),
    };
    let body = serde_json::json!({ "error": why }).to_string();
    Some(
        format!(
            "{status_line}\r\ncontent-type: application/json\r\naccess-control-allow-origin: *\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl<S: AsyncWrite + Unpin> JsonErrors<S> {
    /// Writes out a pending rewritten answer.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.pending.drain(..n);
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonErrors<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonErrors<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        if let Some(answer) = rewrite(buf) {
            this.pending = answer;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn hyper_error_heads_get_a_json_body_and_handler_answers_pass() {
        let head =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let out = String::from_utf8(rewrite(head).unwrap()).unwrap();
        let body = out.split("\r\n\r\n").nth(1).unwrap();
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(json["error"].as_str().unwrap().contains("headers"), "{out}");
        assert!(out.starts_with("HTTP/1.1 431 "));
        let ours = b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert!(rewrite(ours).is_none());
        assert!(rewrite(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(rewrite(b"garbage").is_none());
    }
}
