//! The load generator of `bench/mcp_serve.sh`: `tools/call` throughput of one MCP endpoint over
//! loopback, with `concurrency` keep-alive connections each sending one request at a time (unique
//! JSON-RPC ids), for a warm-up and then a measured period. Prints `<calls per second>`.
//!
//! Usage: `cargo bench -p katari-runtime --bench mcp_serve -- URL CONCURRENCY SECONDS`.
//! Plain std (threads and `TcpStream`), so the client costs the same for every server measured.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Reads one HTTP/1.1 response (Content-Length or chunked); returns its status and body.
fn read_response(reader: &mut BufReader<TcpStream>) -> std::io::Result<(u16, Vec<u8>)> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut length = None;
    let mut chunked = false;
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let lower = header.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse::<usize>().ok();
        } else if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(n) = length {
        body.resize(n, 0);
        reader.read_exact(&mut body)?;
    }
    Ok((status, body))
}

fn worker(
    authority: String,
    path: String,
    worker: u64,
    stop: Arc<AtomicBool>,
    measuring: Arc<AtomicBool>,
    done: Arc<AtomicU64>,
) -> Result<(), String> {
    let stream = TcpStream::connect(&authority).map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut id = worker << 40;
    while !stop.load(Ordering::Relaxed) {
        id += 1;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{id},"b":1}}}}}}"#
        );
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        writer
            .write_all(request.as_bytes())
            .map_err(|e| format!("send: {e}"))?;
        let (status, reply) = read_response(&mut reader).map_err(|e| format!("receive: {e}"))?;
        let expected = (id + 1).to_string();
        if status != 200 || !String::from_utf8_lossy(&reply).contains(&expected) {
            return Err(format!(
                "unexpected reply {status}: {}",
                String::from_utf8_lossy(&reply)
            ));
        }
        if measuring.load(Ordering::Relaxed) {
            done.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [url, concurrency, seconds] = args.as_slice() else {
        eprintln!("usage: mcp_serve URL CONCURRENCY SECONDS");
        std::process::exit(2);
    };
    let concurrency: u64 = concurrency.parse().expect("CONCURRENCY is a number");
    let seconds: f64 = seconds.parse().expect("SECONDS is a number");
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let stop = Arc::new(AtomicBool::new(false));
    let measuring = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..concurrency)
        .map(|w| {
            let (a, p) = (authority.to_string(), path.to_string());
            let (s, m, d) = (stop.clone(), measuring.clone(), done.clone());
            std::thread::spawn(move || worker(a, p, w, s, m, d))
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    measuring.store(true, Ordering::Relaxed);
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    measuring.store(false, Ordering::Relaxed);
    let elapsed = start.elapsed().as_secs_f64();
    let calls = done.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        if let Ok(Err(e)) = w.join() {
            eprintln!("mcp_serve bench: {e}");
            std::process::exit(1);
        }
    }
    println!("{:.0}", calls as f64 / elapsed);
}
