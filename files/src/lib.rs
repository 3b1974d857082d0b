//! Files written whole or not at all. Each goes to a temporary sibling of its path (the same
//! folder, so the rename is atomic), then is renamed into place: a reader never sees half a
//! file, and a failure leaves no temporary behind. `lab` (its results and manifests), the
//! profiler crate (ncu and nsys captures) and `xtask` (tables, plots, logs) all write through
//! here; errors name the file.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A temporary sibling of `path`, unique to this process: `.NAME.tmpPID`.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp{}", std::process::id()))
}

/// Writes `bytes` to [`temp_path`]`(path)`, flushes it to disk, then renames it over `path`.
/// The error says `could not write 'PATH': …`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if path.file_name().is_none() {
        return Err(named(path, io::Error::other("not a file path")));
    }
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| named(path, e))
}

/// Moves a finished file into place (a rename within one folder). The error says
/// `renaming TMP to PATH: …`.
pub fn commit(tmp: &Path, path: &Path) -> io::Result<()> {
    std::fs::rename(tmp, path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("renaming {} to {}: {e}", tmp.display(), path.display()),
        )
    })
}

/// `e`, saying which file could not be written.
fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("could not write '{}': {e}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("files-test-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_file_is_written_whole_and_no_temporary_stays() {
        let d = dir("whole");
        let f = d.join("a.txt");
        write_atomic(&f, b"one").unwrap();
        write_atomic(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_failure_names_the_file_and_leaves_nothing() {
        let d = dir("fail");
        let f = d.join("missing/a.txt");
        let e = write_atomic(&f, b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(
            e.to_string()
                .starts_with(&format!("could not write '{}': ", f.display())),
            "{e}"
        );
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        let e = commit(&d.join("nope"), &d.join("there")).unwrap_err();
        assert!(e.to_string().starts_with("renaming "), "{e}");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn the_temporary_is_a_hidden_sibling() {
        let t = temp_path(Path::new("/r/p/x.csv"));
        assert_eq!(t.parent(), Some(Path::new("/r/p")));
        let name = t.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".x.csv.tmp"), "{name}");
    }
}
