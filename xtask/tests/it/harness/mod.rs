//! The command-line tests' sandbox: a fresh folder of stand-in tools (small shell scripts that
//! answer as the real lab, ncu, nsys or compute-sanitizer did), removed when the test ends,
//! and the readings of a finished command. Each test module adds its own commands to
//! [`Sandbox`], named for it (`profile_xtask`, `sanitize_command`).

// Each test file uses the part it needs.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output};

pub struct Sandbox {
    pub dir: PathBuf,
}

impl Sandbox {
    /// `xtask-<name>-<pid>` in the temporary folder, emptied, with each `(path, script)` of
    /// `tools` written into it as an executable (its folders made as needed).
    pub fn new(name: &str, tools: &[(&str, &str)]) -> Sandbox {
        let dir = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, script) in tools {
            let p = dir.join(file);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, script).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Sandbox {
            dir: dir.canonicalize().unwrap(),
        }
    }

    /// `<dir>/<rel>`.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// `<dir>/<rel>` as a string, for an argument.
    pub fn arg(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }

    /// The output folder the commands are pointed at.
    pub fn out(&self) -> PathBuf {
        self.dir.join("out")
    }

    /// Hidden files in the output folder: what a run left half-done.
    pub fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.out())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The xtask binary under test, outside cargo (so it finds no workspace tools by `CARGO`).
pub fn xtask() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
    c.env_remove("CARGO");
    c
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The last line of stderr: the error a failed command ends with.
pub fn last_line(o: &Output) -> String {
    stderr(o).lines().last().unwrap_or("").to_string()
}
