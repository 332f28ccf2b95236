//! Every answer the kube client reads, bounded, whoever reads it: a tower layer around kube's
//! HTTP stack wraps each response body so that it fails, having read at most a chunk more
//! than its bound, once
//!
//! - a watch stream (`watch=true`) sends one line (one event, or an `ERROR` Status) longer
//!   than the event bound: kube's `request_events` splits lines with tokio-util's
//!   `LinesCodec::new()`, which buffers a line however long it is;
//! - any other answer is longer than the answer bound: kube's `request_text` (the watcher's
//!   own lists) reads a body whole.
//!
//! An error answer (4xx/5xx) is cut instead, at [`MAX_ERROR_BODY_BYTES`], with a note that
//! says so: kube's `handle_api_errors` reads it whole into the error's message, and a failure
//! there must stay the answer's own failure (its status code), never become a read error
//! that a caller could take for an unreadable success.
//!
//! [`crate::cluster::live::request_text_bounded`] still reads vmctl's own requests, with the
//! same bound: the layer is what bounds the answers vmctl does not read itself.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body::{Body as HttpBody, Frame, SizeHint};
use kube::client::{Body, DynBody};
use tower::{BoxError, Layer, Service};

/// The most one watch event may take: etcd keeps objects of at most 1.5 MiB by default
/// (`--max-request-bytes`, raised by some to 10 MiB); an event is one object in a line.
pub const MAX_EVENT_BYTES: u64 = 64 << 20;

/// The most of an error answer's body that is kept: a `Status` is a few hundred bytes, with
/// every cause of a refused object a few KiB.
pub const MAX_ERROR_BODY_BYTES: u64 = 64 << 10;

/// What an error answer cut short at `limit` ends with (its text becomes the error's message).
fn cut_note(limit: u64) -> String {
    format!(
        " [... cut: the error answer is longer than {}]",
        crate::text::bytes(limit)
    )
}

/// An answer (or, on a watch, one line of it) longer than its bound: the body stops there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    pub limit: u64,
    /// A line of a watch stream (one event), not a whole answer.
    pub event: bool,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.event {
            "a watch event"
        } else {
            "the answer"
        };
        if self.limit >= 1 << 20 {
            write!(
                f,
                "{what} is larger than {} MiB: not read",
                self.limit >> 20
            )
        } else {
            write!(f, "{what} is larger than {} bytes: not read", self.limit)
        }
    }
}

impl std::error::Error for TooLarge {}

/// The [`TooLarge`] somewhere in `err`'s chain, looking inside `io::Error`s too (their
/// `source()` skips the error they wrap).
pub fn too_large_in(err: &(dyn std::error::Error + 'static)) -> Option<TooLarge> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(t) = e.downcast_ref::<TooLarge>() {
            return Some(*t);
        }
        if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            && let Some(t) = too_large_in(inner)
        {
            return Some(t);
        }
        current = e.source();
    }
    None
}

/// The hint for an answer or an event refused as [`TooLarge`].
pub fn raise_bound_hint() -> String {
    format!(
        "--max-input-size raises the bound (at most 1Gi per answer, {} MiB per watch event)",
        MAX_EVENT_BYTES >> 20
    )
}

/// The layer: `answer` bounds a whole answer, `event` one line of a watch stream.
#[derive(Debug, Clone, Copy)]
pub struct BoundLayer {
    answer: u64,
    event: u64,
}

impl BoundLayer {
    pub fn new(answer: u64) -> Self {
        BoundLayer {
            answer,
            event: answer.min(MAX_EVENT_BYTES),
        }
    }
}

impl<S> Layer<S> for BoundLayer {
    type Service = Bound<S>;

    fn layer(&self, inner: S) -> Bound<S> {
        Bound {
            inner,
            bounds: *self,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Bound<S> {
    inner: S,
    bounds: BoundLayer,
}

impl<S> Service<http::Request<Body>> for Bound<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Box<DynBody>>, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Box<DynBody>>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let watch = is_watch(request.uri().query());
        let bounds = self.bounds;
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            let limit =
                if response.status().is_client_error() || response.status().is_server_error() {
                    Limit::Cut(bounds.answer.min(MAX_ERROR_BODY_BYTES))
                } else if watch {
                    Limit::Line(bounds.event)
                } else {
                    Limit::Total(bounds.answer)
                };
            Ok(response.map(|body| {
                Box::new(Bounded {
                    inner: body,
                    limit,
                    seen: 0,
                    cut: false,
                }) as Box<DynBody>
            }))
        })
    }
}

/// `watch=true` (or `1`) in a query string.
fn is_watch(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        q.split('&')
            .any(|pair| matches!(pair, "watch=true" | "watch=1"))
    })
}

#[derive(Debug, Clone, Copy)]
enum Limit {
    Total(u64),
    Line(u64),
    /// Keep this much, then end the body with [`cut_note`].
    Cut(u64),
}

/// What to do with a chunk.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Pass,
    Fail(TooLarge),
    /// Keep this many bytes of it, add the note for the limit, and end.
    Cut {
        keep: usize,
        limit: u64,
    },
}

/// A body that fails once it passed its [`Limit`].
struct Bounded {
    inner: Box<DynBody>,
    limit: Limit,
    /// Bytes of the whole answer, or of the line not ended yet.
    seen: u64,
    /// An error answer was cut: the body has ended.
    cut: bool,
}

impl Bounded {
    fn count(&mut self, data: &[u8]) -> Verdict {
        match self.limit {
            Limit::Total(limit) => {
                self.seen = self.seen.saturating_add(data.len() as u64);
                if self.seen > limit {
                    return Verdict::Fail(TooLarge {
                        limit,
                        event: false,
                    });
                }
            }
            Limit::Line(limit) => {
                for (i, part) in data.split(|&b| b == b'\n').enumerate() {
                    // The first part goes on the line before; every other starts a line.
                    if i > 0 {
                        self.seen = 0;
                    }
                    self.seen = self.seen.saturating_add(part.len() as u64);
                    if self.seen > limit {
                        return Verdict::Fail(TooLarge { limit, event: true });
                    }
                }
            }
            Limit::Cut(limit) => {
                let room = limit.saturating_sub(self.seen);
                self.seen = self.seen.saturating_add(data.len() as u64);
                if data.len() as u64 > room {
                    return Verdict::Cut {
                        keep: usize::try_from(room).unwrap_or(usize::MAX),
                        limit,
                    };
                }
            }
        }
        Verdict::Pass
    }
}

impl HttpBody for Bounded {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if this.cut {
            return Poll::Ready(None);
        }
        let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => frame,
            Poll::Pending => return Poll::Pending,
        };
        if let Some(Ok(f)) = &frame
            && let Some(data) = f.data_ref()
        {
            match this.count(data) {
                Verdict::Pass => {}
                Verdict::Fail(too_large) => return Poll::Ready(Some(Err(Box::new(too_large)))),
                Verdict::Cut { keep, limit } => {
                    this.cut = true;
                    let note = cut_note(limit);
                    let mut kept = Vec::with_capacity(keep.saturating_add(note.len()));
                    kept.extend_from_slice(data.get(..keep).unwrap_or(data));
                    kept.extend_from_slice(note.as_bytes());
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(kept)))));
                }
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.cut || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    fn bounded(limit: Limit) -> Bounded {
        let empty: Box<DynBody> = Box::new(
            http_body_util::Empty::<Bytes>::new()
                .map_err(|never: std::convert::Infallible| -> BoxError { match never {} }),
        );
        Bounded {
            inner: empty,
            limit,
            seen: 0,
            cut: false,
        }
    }

    #[test]
    fn a_watch_line_is_bounded_across_chunks_and_resets_at_each_newline() {
        let mut b = bounded(Limit::Line(10));
        // Lines of 10 bytes, split anywhere, pass however many there are.
        for _ in 0..100 {
            assert_eq!(b.count(b"01234"), Verdict::Pass);
            assert_eq!(b.count(b"56789\n"), Verdict::Pass);
        }
        assert_eq!(b.count(b"0123456789\n0123456789\n0"), Verdict::Pass);
        // The 11th byte of one line, in the next chunk.
        assert_eq!(b.count(b"123456789"), Verdict::Pass);
        assert_eq!(
            b.count(b"x"),
            Verdict::Fail(TooLarge {
                limit: 10,
                event: true
            })
        );
        // Within one chunk, after a newline.
        let mut b = bounded(Limit::Line(10));
        assert!(matches!(
            b.count(b"short\n0123456789x\nshort"),
            Verdict::Fail(_)
        ));
    }

    #[test]
    fn an_answer_is_bounded_in_total_newlines_or_not() {
        let mut b = bounded(Limit::Total(10));
        assert_eq!(b.count(b"01234\n"), Verdict::Pass);
        assert_eq!(b.count(b"5678"), Verdict::Pass);
        assert_eq!(
            b.count(b"\n"),
            Verdict::Fail(TooLarge {
                limit: 10,
                event: false
            })
        );
    }

    #[test]
    fn an_error_answer_is_cut_where_its_bound_falls() {
        let mut b = bounded(Limit::Cut(10));
        assert_eq!(b.count(b"0123"), Verdict::Pass);
        assert_eq!(b.count(b"456789"), Verdict::Pass);
        assert_eq!(b.count(b"x"), Verdict::Cut { keep: 0, limit: 10 });
        let mut b = bounded(Limit::Cut(10));
        assert_eq!(b.count(b"01234567"), Verdict::Pass);
        assert_eq!(b.count(b"89abc"), Verdict::Cut { keep: 2, limit: 10 });
        assert_eq!(
            cut_note(MAX_ERROR_BODY_BYTES),
            " [... cut: the error answer is longer than 64.0 KiB]"
        );
        assert_eq!(
            cut_note(4096),
            " [... cut: the error answer is longer than 4.0 KiB]"
        );
    }

    #[test]
    fn watches_are_told_by_their_query() {
        assert!(is_watch(Some("watch=true")));
        assert!(is_watch(Some(
            "labelSelector=a%3Db&watch=true&resourceVersion=5"
        )));
        assert!(is_watch(Some("watch=1")));
        assert!(!is_watch(Some("watch=false")));
        assert!(!is_watch(Some("labelSelector=watch%3Dtrue")));
        assert!(!is_watch(Some("limit=500")));
        assert!(!is_watch(None));
    }

    #[test]
    fn too_large_is_found_through_io_and_kube_errors() {
        let t = TooLarge {
            limit: 64 << 20,
            event: true,
        };
        assert_eq!(
            t.to_string(),
            "a watch event is larger than 64 MiB: not read"
        );
        // As kube's `request_events` and `request_stream` wrap a body error.
        let kube_error = kube::Error::Service(Box::new(t));
        let io = std::io::Error::other(kube_error);
        let outer = kube::Error::ReadEvents(io);
        assert_eq!(too_large_in(&outer), Some(t));
        let plain = std::io::Error::other("connection reset");
        assert_eq!(too_large_in(&plain), None);
    }
}
