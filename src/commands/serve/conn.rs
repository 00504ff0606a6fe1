//! The server's connections, bounded in size and time so that no client
//! holds one open and every refusal is the API's JSON error.
//!
//! Each connection carries one request (no keep-alive: a page's calls are
//! few and local).  Its head is read here, before hyper sees it, within
//! [`Limits::read_timeout`] and [`Limits::head_bytes`]: a URI or a head too
//! long is answered 414 or 431 and a head that does not arrive 408, in
//! JSON, where hyper would answer such requests with bare status lines.  The
//! body is read by [`bounded_body`], a layer of the router, within the same
//! time and [`Limits::body_bytes`] (413 at once for a `Content-Length` over
//! it), and [`json_errors`] turns the plain-text refusals of the router
//! itself (405 for a wrong method, ...) into JSON.

use super::error::ApiError;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How much of a request the server reads, and for how long.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The request line and headers together.
    pub head_bytes: usize,
    /// The request target (path and query).
    pub uri_bytes: usize,
    /// The body (games, PDN text).
    pub body_bytes: usize,
    /// For the head, and again for the body.
    pub read_timeout: Duration,
    /// For the whole connection, answer included.
    pub connection_timeout: Duration,
}

impl Limits {
    /// The server's limits with the given read timeout.
    pub fn with_read_timeout(read_timeout: Duration) -> Limits {
        Limits {
            head_bytes: 16 * 1024,
            uri_bytes: 8 * 1024,
            body_bytes: 1024 * 1024,
            read_timeout,
            connection_timeout: Duration::from_secs(600),
        }
    }
}

/// Accepts connections for ever, each served on its own task.
pub async fn serve(listener: TcpListener, app: Router, limits: Limits) -> std::io::Result<()> {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors and the like: wait, then go on.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let app = app.clone();
        tokio::spawn(async move {
            let _ =
                tokio::time::timeout(limits.connection_timeout, connection(stream, app, limits))
                    .await;
        });
    }
}

/// Why a request's head was not taken.
enum HeadRefusal {
    /// The client closed the connection (or it failed) first.
    Closed,
    Refused(ApiError),
}

async fn connection(mut stream: TcpStream, app: Router, limits: Limits) {
    let head =
        match tokio::time::timeout(limits.read_timeout, read_head(&mut stream, &limits)).await {
            Ok(Ok(head)) => head,
            Ok(Err(HeadRefusal::Closed)) => return,
            Ok(Err(HeadRefusal::Refused(e))) => return refuse(stream, e).await,
            Err(_) => {
                let e = ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the request's head did not arrive within {:?}",
                        limits.read_timeout
                    ),
                );
                return refuse(stream, e).await;
            }
        };
    // hyper reads the head again from the bytes already read, then the rest.
    let (reader, writer) = stream.into_split();
    let io = tokio::io::join(std::io::Cursor::new(head).chain(reader), writer);
    let _ = hyper::server::conn::http1::Builder::new()
        .keep_alive(false)
        .serve_connection(TokioIo::new(io), TowerToHyperService::new(app))
        .await;
}

/// Reads until the end of the head (a blank line), which it returns with
/// any body bytes read after it.
async fn read_head(stream: &mut TcpStream, limits: &Limits) -> Result<Vec<u8>, HeadRefusal> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| HeadRefusal::Closed)?;
        if n == 0 {
            return Err(HeadRefusal::Closed);
        }
        let searched_from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        let end = find(&buf[searched_from..], b"\r\n\r\n").map(|i| searched_from + i + 4);
        let head = &buf[..end.unwrap_or(buf.len()).min(buf.len())];
        // The request target: between the first two spaces of the first line.
        let line_end = find(head, b"\r\n").unwrap_or(head.len());
        let target = head[..line_end]
            .split(|b| *b == b' ')
            .nth(1)
            .map_or(0, <[u8]>::len);
        if target > limits.uri_bytes {
            return Err(HeadRefusal::Refused(ApiError::new(
                StatusCode::URI_TOO_LONG,
                format!(
                    "the request's target is longer than {} bytes",
                    limits.uri_bytes
                ),
            )));
        }
        if end.unwrap_or(buf.len()) > limits.head_bytes {
            return Err(HeadRefusal::Refused(ApiError::new(
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                format!(
                    "the request's line and headers are longer than {} bytes",
                    limits.head_bytes
                ),
            )));
        }
        if let Some(end) = end {
            check_head(&buf[..end])?;
            return Ok(buf);
        }
    }
}

/// Refuses a head that is not HTTP/1 (hyper would answer a bare 400).
fn check_head(head: &[u8]) -> Result<(), HeadRefusal> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    match httparse::Request::new(&mut headers).parse(head) {
        Ok(httparse::Status::Complete(_)) => Ok(()),
        Err(httparse::Error::TooManyHeaders) => Err(HeadRefusal::Refused(ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            format!("the request has more than {MAX_HEADERS} headers"),
        ))),
        Ok(httparse::Status::Partial) | Err(_) => Err(HeadRefusal::Refused(ApiError::bad(
            "the request is not HTTP/1.1: a request line (METHOD /path HTTP/1.1) and headers",
        ))),
    }
}

/// Headers a request may have (hyper's own limit is 100).
const MAX_HEADERS: usize = 64;

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Writes a JSON refusal on a connection hyper never saw, then closes it.
async fn refuse(mut stream: TcpStream, error: ApiError) {
    let body = serde_json::json!({ "error": error.message }).to_string();
    let reply = format!(
        "HTTP/1.1 {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        error.status,
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Router layer: reads the whole body within the limits before any handler
/// runs (413 at once for a declared length over the limit, 408 for a body
/// that stops arriving).
pub async fn bounded_body(State(limits): State<Limits>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request's body is larger than {} bytes",
                limits.body_bytes
            ),
        )
        .into_response()
    };
    if declared.is_some_and(|n| n > limits.body_bytes as u64) {
        return too_large();
    }
    match tokio::time::timeout(
        limits.read_timeout,
        axum::body::to_bytes(body, limits.body_bytes),
    )
    .await
    {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Ok(Err(_)) if declared.is_none() => too_large(),
        Ok(Err(e)) => {
            ApiError::bad(format!("the request's body could not be read: {e}")).into_response()
        }
        Err(_) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request's body did not arrive within {:?}",
                limits.read_timeout
            ),
        )
        .into_response(),
    }
}

/// Router layer: an error reply that is not JSON (the router's own 405,
/// a 413 or 400 of an extractor) becomes `{"error": …}` with its status.
pub async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let reason = status.canonical_reason().unwrap_or("error").to_lowercase();
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .ok()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .filter(|t| !t.is_empty());
    let message = match text {
        Some(t) => format!("{reason}: {t}"),
        None => reason,
    };
    let mut error = ApiError::new(status, message).into_response();
    // Headers the status needs (`allow` on a 405) are kept.
    for (name, value) in parts.headers.iter() {
        if name != CONTENT_TYPE && name != CONTENT_LENGTH {
            error.headers_mut().insert(name.clone(), value.clone());
        }
    }
    error
}
