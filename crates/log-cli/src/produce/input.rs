//! `produce`'s input (stdin or `--file`) cut into records at a delimiter (kcat's `-D`, a
//! newline by default), on a thread of its own, in runs of the records already buffered.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::{Receiver, sync_channel};

use seglog_log::File;

/// A run of whole records (delimiter removed), or the read error that ended the input.
pub(super) type Run = std::io::Result<Vec<Vec<u8>>>;

/// Starts reading `input`; the channel closes at its end. A run holds the records that could
/// be read without blocking, so that a partial batch goes as soon as no more input is waiting.
/// Asking the pipe itself (`fill_buf`) blocks until the next record arrives, which would
/// acknowledge an interactive line only when the one after it came. The thread is not joined:
/// when an append fails, the command ends without waiting for input that may never come.
pub(super) fn spawn(
    input: BufReader<impl Read + Send + 'static>,
    delimiter: Vec<u8>,
    crlf: bool,
) -> Receiver<Run> {
    let (tx, rx) = sync_channel::<Run>(64);
    std::thread::spawn(move || {
        let mut input = input;
        loop {
            let mut records = Vec::new();
            loop {
                match next_record(&mut input, &delimiter) {
                    Ok(None) => break,
                    Ok(Some(mut record)) => {
                        if crlf && record.last() == Some(&b'\r') {
                            record.pop();
                        }
                        records.push(record);
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
                // Go on only while the end of another record is already buffered: reading it
                // will not block.
                if delimiter.is_empty()
                    || !input
                        .buffer()
                        .windows(delimiter.len())
                        .any(|w| w == delimiter)
                {
                    break;
                }
            }
            if records.is_empty() || tx.send(Ok(records)).is_err() {
                return;
            }
        }
    });
    rx
}

/// A file of the seam read from its start to its end (`--file`; a regular file, since it is
/// read with positioned reads).
pub(super) struct FileInput<F> {
    file: F,
    position: u64,
}

impl<F: File> FileInput<F> {
    pub(super) fn new(file: F) -> Self {
        FileInput { file, position: 0 }
    }
}

impl<F: File> Read for FileInput<F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.position)?;
        self.position += n as u64;
        Ok(n)
    }
}

/// The next record: the bytes up to `delimiter` (removed), or up to the end of the input;
/// `None` at the end.
fn next_record(input: &mut impl BufRead, delimiter: &[u8]) -> std::io::Result<Option<Vec<u8>>> {
    let Some(&last) = delimiter.last() else {
        return Err(std::io::Error::other("the delimiter is empty"));
    };
    let mut record = Vec::new();
    loop {
        if input.read_until(last, &mut record)? == 0 {
            return Ok((!record.is_empty()).then_some(record));
        }
        if record.ends_with(delimiter) {
            record.truncate(record.len() - delimiter.len());
            return Ok(Some(record));
        }
        if record.last() != Some(&last) {
            // The input ended inside a record.
            return Ok(Some(record));
        }
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::next_record;

    fn all(input: &[u8], delimiter: &[u8]) -> Vec<Vec<u8>> {
        let mut reader = std::io::BufReader::with_capacity(3, input);
        std::iter::from_fn(|| next_record(&mut reader, delimiter).unwrap()).collect()
    }

    #[test]
    fn records_end_at_the_delimiter_or_the_input_s_end() {
        assert_eq!(all(b"a\nb\n", b"\n"), vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(
            all(b"a\n\nb", b"\n"),
            vec![b"a".to_vec(), vec![], b"b".to_vec()]
        );
        assert_eq!(
            all(b"x--y-z----", b"--"),
            vec![b"x".to_vec(), b"y-z".to_vec(), vec![]]
        );
        assert_eq!(all(b"\x00\xff\x00", b"\x00"), vec![vec![], vec![0xff]]);
        assert!(all(b"", b"\n").is_empty());
    }
}
