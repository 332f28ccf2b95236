//! A tiny blocking HTTP/1.1 client over `std::net::TcpStream`, to talk to the fake API
//! server without any client library in between.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("response is not JSON ({e}): {}", self.text()))
    }
}

fn host_port(base_url: &str) -> &str {
    base_url
        .strip_prefix("http://")
        .unwrap_or(base_url)
        .trim_end_matches('/')
}

fn connect(base_url: &str) -> TcpStream {
    let stream = TcpStream::connect(host_port(base_url)).expect("connect to the fake API server");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("set read timeout");
    stream
}

fn send(
    stream: &mut TcpStream,
    base_url: &str,
    method: &str,
    path_and_query: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) {
    let mut head = format!(
        "{method} {path_and_query} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        host_port(base_url)
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("send request");
    if let Some(body) = body {
        stream.write_all(body).expect("send body");
    }
}

fn read_head(reader: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    reader.read_line(&mut line).expect("read status line");
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("read header");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    (status, headers)
}

/// Reads one chunk of a chunked body; `None` at the terminating chunk or end of stream.
fn read_chunk(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut size_line = String::new();
    if reader.read_line(&mut size_line).ok()? == 0 {
        return None;
    }
    let size = usize::from_str_radix(size_line.trim().split(';').next()?.trim(), 16).ok()?;
    if size == 0 {
        return None;
    }
    let mut chunk = vec![0; size];
    reader.read_exact(&mut chunk).ok()?;
    let mut crlf = [0u8; 2];
    reader.read_exact(&mut crlf).ok()?;
    Some(chunk)
}

fn is_chunked(headers: &[(String, String)]) -> bool {
    headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked"))
}

/// Sends one request and reads the whole answer (`Connection: close`).
pub fn request(
    base_url: &str,
    method: &str,
    path_and_query: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> HttpResponse {
    let mut stream = connect(base_url);
    send(&mut stream, base_url, method, path_and_query, headers, body);
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader);
    let mut body = Vec::new();
    if is_chunked(&headers) {
        while let Some(chunk) = read_chunk(&mut reader) {
            body.extend(chunk);
        }
    } else if let Some(len) = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
    {
        body.resize(len, 0);
        reader.read_exact(&mut body).expect("read body");
    } else {
        reader.read_to_end(&mut body).expect("read body");
    }
    HttpResponse {
        status,
        headers,
        body,
    }
}

pub fn get(base_url: &str, path_and_query: &str) -> HttpResponse {
    request(base_url, "GET", path_and_query, &[], None)
}

/// Sends a JSON (or patch) body with the given content type.
pub fn send_json(
    base_url: &str,
    method: &str,
    path: &str,
    content_type: &str,
    body: &Value,
) -> HttpResponse {
    let bytes = serde_json::to_vec(body).expect("serialise body");
    request(
        base_url,
        method,
        path,
        &[("Content-Type", content_type)],
        Some(&bytes),
    )
}

/// A watch read event by event from the chunked stream.
pub struct RawWatch {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    pending: Vec<u8>,
    ended: bool,
}

impl RawWatch {
    pub fn open(base_url: &str, path_and_query: &str) -> RawWatch {
        let mut stream = connect(base_url);
        send(&mut stream, base_url, "GET", path_and_query, &[], None);
        let mut reader = BufReader::new(stream);
        let (status, headers) = read_head(&mut reader);
        RawWatch {
            status,
            headers,
            reader,
            pending: Vec::new(),
            ended: false,
        }
    }

    /// The next event (`{"type":..,"object":..}`), or `None` when the stream ended (or
    /// nothing came within the read timeout).
    pub fn next_event(&mut self) -> Option<Value> {
        loop {
            if let Some(pos) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=pos).collect();
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return Some(serde_json::from_slice(&line).unwrap_or_else(|e| {
                    panic!(
                        "watch line is not JSON ({e}): {}",
                        String::from_utf8_lossy(&line)
                    )
                }));
            }
            if self.ended {
                return None;
            }
            match read_chunk(&mut self.reader) {
                Some(chunk) => self.pending.extend(chunk),
                None => self.ended = true,
            }
        }
    }

    /// Reads every remaining event until the stream ends.
    pub fn collect_until_end(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.next_event()).collect()
    }

    pub fn set_timeout(&mut self, timeout: Duration) {
        self.reader
            .get_ref()
            .set_read_timeout(Some(timeout))
            .expect("set read timeout");
    }
}
