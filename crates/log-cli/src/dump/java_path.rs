//! Paths as Kafka's tool prints them, through `java.io.File`: `toString` is the path as given,
//! with runs of `/` collapsed and a trailing `/` dropped (`UnixFileSystem.normalize`);
//! `getAbsolutePath` puts the working directory (`user.dir`) before a relative one. Neither
//! resolves a symlink or collapses `.` or `..`, unlike `std::path::absolute` (which drops `.`).

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The path `java.io.File` holds for `path`: runs of `/` collapsed, a trailing `/` dropped.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let given = path.as_os_str().as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(given.len());
    for &b in given {
        if b == b'/' && out.last() == Some(&b'/') {
            continue;
        }
        out.push(b);
    }
    if out.len() > 1 && out.last() == Some(&b'/') {
        out.pop();
    }
    PathBuf::from(OsString::from_vec(out))
}

/// `new File(path).toString()`.
pub(crate) fn file_string(path: &Path) -> String {
    normalize(path).display().to_string()
}

/// `new File(path).getAbsolutePath()`, against the process's working directory.
pub(crate) fn absolute(path: &Path) -> String {
    let cwd = std::env::current_dir().map_or_else(|_| String::new(), |d| file_string(&d));
    absolute_in(&cwd, path)
}

/// `getAbsolutePath` with `user.dir` = `cwd` (Java's `UnixFileSystem.resolve`).
fn absolute_in(cwd: &str, path: &Path) -> String {
    let child = file_string(path);
    if child.starts_with('/') {
        child
    } else if child.is_empty() {
        cwd.to_owned()
    } else if cwd == "/" {
        format!("/{child}")
    } else {
        format!("{cwd}/{child}")
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{absolute_in, file_string};

    #[test]
    fn paths_print_as_java_io_file_prints_them() {
        assert_eq!(file_string(Path::new("logs//t-0/")), "logs/t-0");
        assert_eq!(file_string(Path::new("/")), "/");
        assert_eq!(
            file_string(Path::new("./a/../b/./c.log")),
            "./a/../b/./c.log"
        );
        assert_eq!(
            absolute_in("/w", Path::new("./a/../b.log")),
            "/w/./a/../b.log"
        );
        assert_eq!(absolute_in("/w", Path::new("/x//y.log")), "/x/y.log");
        assert_eq!(absolute_in("/", Path::new("y.log")), "/y.log");
    }
}
