//! A random-legal Truco Arena bot in Rust, std only, speaking the stdio line protocol
//! (docs/stdio.md). Build: cargo build --offline --release   Check: arena check --stdio
//! target/release/rust_random
//!
//! Every line from the arena is `<kind> name=value name=value ...`. This bot answers each
//! `decision` line with `action <index>`, a random index into its `legal=` list, and ignores
//! every other line: a bot may ignore what it does not need.

use std::io::{self, BufRead, Write};

/// The value of field `name` in a line (fields are space-separated `name=value`).
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    line.split(' ').skip(1).find_map(|token| {
        let (key, value) = token.split_once('=')?;
        (key == name).then_some(value)
    })
}

/// A small xorshift generator: no crates needed for a random bot.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::env::var("ARENA_BOT_SEED")
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or_else(|| {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1);
                nanos ^ u64::from(std::process::id())
            });
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn main() -> io::Result<()> {
    let mut rng = Rng::new();
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line?;
        if !line.starts_with("decision ") {
            continue; // match, events, errors...: not needed to play at random
        }
        let legal = field(&line, "legal").unwrap_or("");
        let count = if legal.is_empty() { 1 } else { legal.split(',').count() };
        writeln!(out, "action {}", rng.below(count))?;
        out.flush()?; // answer now: the arena waits for the whole line
    }
    Ok(()) // stdin closed: the arena is done with us
}
