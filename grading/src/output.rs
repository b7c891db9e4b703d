//! What a case's child printed (the kernel's `printf`, the lab's messages), read while the child runs
//! and kept in a bounded amount: a child blocks once a pipe's 64 KiB are full, so the parent must
//! read everything, and a kernel printing from each of a million threads must not fill the parent's
//! memory either. The first [`HEAD`] lines and the last [`TAIL`] are kept, each cut at [`LINE`] bytes.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Lines kept from the start of a stream.
pub const HEAD: usize = 100;
/// Lines kept from the end.
pub const TAIL: usize = 20;
/// Bytes kept of one line; the rest of a longer line is counted, not kept.
pub const LINE: usize = 400;

/// One stream's kept lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Captured {
    head: Vec<String>,
    tail: VecDeque<String>,
    /// Lines between the head and the tail that were dropped.
    dropped: usize,
    /// The line being read, cut at [`LINE`] bytes.
    partial: Vec<u8>,
    /// Whether the line being read was longer than [`LINE`].
    partial_cut: bool,
    /// Every byte seen.
    pub bytes: u64,
}

impl Captured {
    /// Takes the next bytes of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len() as u64;
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            let (text, ends_line) = match piece.strip_suffix(b"\n") {
                Some(text) => (text, true),
                None => (piece, false),
            };
            let room = LINE.saturating_sub(self.partial.len());
            self.partial.extend_from_slice(&text[..text.len().min(room)]);
            self.partial_cut |= text.len() > room;
            if ends_line {
                self.end_line();
            }
        }
    }

    /// The stream ended: a last line without a newline still counts.
    pub fn finish(&mut self) {
        if !self.partial.is_empty() || self.partial_cut {
            self.end_line();
        }
    }

    fn end_line(&mut self) {
        let mut line = String::from_utf8_lossy(&std::mem::take(&mut self.partial)).into_owned();
        if std::mem::take(&mut self.partial_cut) {
            line.push_str(" [...]");
        }
        if self.head.len() < HEAD {
            self.head.push(line);
            return;
        }
        self.tail.push_back(line);
        if self.tail.len() > TAIL {
            self.tail.pop_front();
            self.dropped += 1;
        }
    }

    /// Every line seen.
    pub fn lines(&self) -> usize {
        self.head.len() + self.dropped + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines() == 0
    }

    /// The last line that is not blank: what a failing child said last.
    pub fn last_line(&self) -> Option<&str> {
        self.tail
            .iter()
            .rev()
            .chain(self.head.iter().rev())
            .map(|line| line.trim())
            .find(|line| !line.is_empty())
    }

    /// The kept lines, with one line saying how many were left out between head and tail.
    pub fn shown(&self) -> String {
        let mut out = String::new();
        for line in &self.head {
            out.push_str(line);
            out.push('\n');
        }
        if self.dropped > 0 {
            out.push_str(&format!("[... {} more lines ...]\n", self.dropped));
        }
        for line in &self.tail {
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// When a child's current case started and when the child last printed anything, on either stream:
/// how the parent tells a hang (silence) from a kernel that is busy printing, and a case that runs
/// too long from a child that runs many cases one after another.
#[derive(Debug)]
pub struct Activity {
    start: Instant,
    /// Milliseconds from `start` to the last read.
    last: AtomicU64,
    /// Milliseconds from `start` to the start of the case now running.
    case: AtomicU64,
}

impl Activity {
    /// Starts the clock: call it as the child is spawned.
    pub fn start() -> Activity {
        Activity {
            start: Instant::now(),
            last: AtomicU64::new(0),
            case: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        self.last
            .store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// The child went on to its next case: that case's clock starts, and the step counts as activity.
    pub fn next_case(&self) {
        self.case
            .store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
        self.touch();
    }

    /// How long the current case has run.
    pub fn running_for(&self) -> Duration {
        self.start
            .elapsed()
            .saturating_sub(Duration::from_millis(self.case.load(Ordering::Relaxed)))
    }

    pub fn silent_for(&self) -> Duration {
        self.start
            .elapsed()
            .saturating_sub(Duration::from_millis(self.last.load(Ordering::Relaxed)))
    }
}

/// A stream cut into one [`Captured`] per case where the child printed `boundary` after each case
/// (a token the parent made up for this child, which the student's device code never sees, so its
/// `printf` cannot move output from one case to another). The boundary may come in the middle of a
/// line (a kernel's last `printf` without a newline) and be split between two reads.
#[derive(Debug, Default)]
pub struct Segments {
    boundary: Vec<u8>,
    /// Bytes that may be the start of a boundary, held until the next read says.
    pending: Vec<u8>,
    done: Vec<Captured>,
    current: Captured,
}

impl Segments {
    /// A stream cut at `boundary`; an empty one cuts nothing (one segment).
    pub fn new(boundary: &str) -> Segments {
        Segments {
            boundary: boundary.as_bytes().to_vec(),
            ..Segments::default()
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.boundary.is_empty() {
            return self.current.push(bytes);
        }
        self.pending.extend_from_slice(bytes);
        let width = self.boundary.len();
        while let Some(at) = self.pending.windows(width).position(|window| window == self.boundary) {
            self.current.push(&self.pending[..at]);
            self.current.finish();
            self.done.push(std::mem::take(&mut self.current));
            self.pending.drain(..at + width);
        }
        // All but the last width - 1 bytes cannot begin a boundary that is still coming.
        let safe = self.pending.len().saturating_sub(width - 1);
        self.current.push(&self.pending[..safe]);
        self.pending.drain(..safe);
    }

    /// The stream ended: one [`Captured`] per case, the last one that of the case the child was in
    /// when it ended (empty where it ended right after a boundary).
    pub fn finish(mut self) -> Vec<Captured> {
        let pending = std::mem::take(&mut self.pending);
        self.current.push(&pending);
        self.current.finish();
        self.done.push(self.current);
        self.done
    }
}

/// Reads `stream` to its end on a thread of its own, so that stdout and stderr flow at once, cut at
/// `boundary` ([`Segments`]); every read counts as `activity`.
pub fn drain(
    mut stream: impl Read + Send + 'static,
    activity: Arc<Activity>,
    boundary: &str,
) -> JoinHandle<Vec<Captured>> {
    let mut segments = Segments::new(boundary);
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => {
                    activity.touch();
                    segments.push(&buffer[..read]);
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break, // the pipe broke: what was read is what there is
            }
        }
        segments.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(text: &str) -> Captured {
        let mut captured = Captured::default();
        // In uneven pieces, as pipes deliver them.
        for piece in text.as_bytes().chunks(7) {
            captured.push(piece);
        }
        captured.finish();
        captured
    }

    #[test]
    fn keeps_the_first_hundred_and_the_last_twenty_lines_and_counts_the_rest() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let kept = captured(&text);
        assert_eq!(kept.lines(), 1000);
        let shown = kept.shown();
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), HEAD + 1 + TAIL);
        assert_eq!(lines[0], "line 0");
        assert_eq!(lines[HEAD - 1], "line 99");
        assert_eq!(lines[HEAD], "[... 880 more lines ...]");
        assert_eq!(lines[HEAD + 1], "line 980");
        assert_eq!(*lines.last().unwrap(), "line 999");
        assert_eq!(kept.last_line(), Some("line 999"));
    }

    #[test]
    fn long_lines_are_cut_and_a_last_line_without_newline_counts() {
        let long = "x".repeat(10 * LINE);
        let kept = captured(&format!("{long}\nshort\n\nend"));
        let shown = kept.shown();
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[0], format!("{} [...]", "x".repeat(LINE)));
        assert_eq!(lines[1..], ["short", "", "end"]);
        assert_eq!(kept.bytes, (10 * LINE + 1 + 6 + 1 + 3) as u64);
        assert!(captured("").is_empty());
        assert_eq!(captured("error: the end\n\n  \n").last_line(), Some("error: the end"));
    }

    #[test]
    fn a_stream_is_cut_at_each_boundary_wherever_the_reads_split_it() {
        let text = "case 0 says\n<END>case 1 has no newline<END><END>case 3 died in the midd";
        for piece in 1..text.len() {
            let mut segments = Segments::new("<END>");
            text.as_bytes().chunks(piece).for_each(|chunk| segments.push(chunk));
            let cases = segments.finish();
            let shown: Vec<String> = cases.iter().map(Captured::shown).collect();
            assert_eq!(
                shown,
                [
                    "case 0 says\n",
                    "case 1 has no newline\n",
                    "",
                    "case 3 died in the midd\n"
                ],
                "pieces of {piece}"
            );
            assert_eq!(cases[0].bytes, 12);
        }
        // Almost a boundary is output; no boundary is one segment.
        let mut segments = Segments::new("<END>");
        segments.push(b"<EN");
        segments.push(b"D <END");
        assert_eq!(segments.finish()[0].shown(), "<END <END\n");
        let mut whole = Segments::new("");
        whole.push(b"a<END>b\n");
        assert_eq!(whole.finish().len(), 1);
    }
}
