//! Files the lab writes (results, manifests) go in whole or not at all (the `files` crate's
//! [`write_atomic`]), each announced on stderr.

pub use ::files::write_atomic;
use std::path::Path;

/// Says on stderr that `path` was written, as `wrote PATH`: one line per file `lab` writes, the
/// line `xtask` reads to find what a run left behind.
pub fn report_written(path: &Path) {
    eprintln!("wrote {}", path.display());
}

/// Makes sure files can be written into `dir` (creating it if missing) by creating and
/// removing a file there: a run that will write its results checks this before measuring,
/// not after.
pub fn check_writable_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".write-check.tmp{}", std::process::id()));
    std::fs::File::create_new(&probe)?;
    std::fs::remove_file(&probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writable_dir_is_created_and_left_empty() {
        let dir = std::env::temp_dir()
            .join(format!("lab-files-test-{}", std::process::id()))
            .join("nested");
        check_writable_dir(&dir).unwrap();
        assert!(dir.is_dir());
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "probe left behind"
        );
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn an_unwritable_dir_is_an_error() {
        // procfs refuses new entries, even to root.
        assert!(check_writable_dir(Path::new("/proc/nope")).is_err());
        let file = std::env::temp_dir().join(format!("lab-files-test-file-{}", std::process::id()));
        std::fs::write(&file, b"x").unwrap();
        assert!(check_writable_dir(&file).is_err(), "a file is not a folder");
        std::fs::remove_file(&file).unwrap();
    }
}
