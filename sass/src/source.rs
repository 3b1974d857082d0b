//! Source lines behind an instruction: its inline chain (from `nvdisasm -gi`, or PTX `.loc …
//! inlined_at`), the line it is charged to, and the text of the lines.
//!
//! An instruction inlined from library code is charged to the kernel line that called it: a
//! barrier to `sync_threads();` in `reduce.rs`, not to `core::arch`'s `syncthreads(0)`. Library
//! code is Rust's `core` and `core::arch` and the CUDA headers, and whatever folders of the
//! source [`Tree`] hold its own thin wrappers over those; the inner lines are shown beneath.

use crate::ptx;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// One frame of an inline chain: a line of a source file. Written `["file", line]` (the
/// line maps a profile capture keeps, `profiler::source::lines`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(from = "(String, u32)", into = "(String, u32)")]
pub struct Frame {
    pub file: String,
    pub line: u32,
}

impl From<(String, u32)> for Frame {
    fn from((file, line): (String, u32)) -> Frame {
        Frame { file, line }
    }
}

impl From<Frame> for (String, u32) {
    fn from(f: Frame) -> (String, u32) {
        (f.file, f.line)
    }
}

/// Whether `path` is the toolchains' library code: Rust's library sources (`rust-src`, or the
/// `/rustc/<commit>/` paths rustc records without it) or a CUDA header.
pub fn is_toolchain(path: &str) -> bool {
    path.contains("/rustlib/src/rust/library/")
        || path.starts_with("/rustc/")
        || path.contains("/include/")
}

/// The source tree kernels were built from, as far as their lines go: paths are shown relative
/// to its root, its own library folders are library code beside the toolchains', and a path
/// recorded in another checkout of it (a capture made elsewhere) is found again under the root.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub root: PathBuf,
    /// Path fragments naming the tree's own library code, thin wrappers a kernel line calls
    /// (`gpu-kernels/src/device/`).
    pub libraries: Vec<String>,
    /// Folders at the root whose recorded paths (`/elsewhere/gpu-kernels/…`) are looked up
    /// under it.
    pub folders: Vec<String>,
}

impl Tree {
    /// The tree at `root`, with no library folders of its own.
    pub fn at(root: impl Into<PathBuf>) -> Tree {
        Tree {
            root: root.into(),
            ..Tree::default()
        }
    }

    /// Whether `path` is library code (see the module documentation).
    pub fn is_library(&self, path: &str) -> bool {
        is_toolchain(path) || self.libraries.iter().any(|l| path.contains(l.as_str()))
    }

    /// Index in `chain` (innermost frame first) of the frame the instruction is charged to: the
    /// innermost frame outside library code, or the outermost when every frame is library code.
    pub fn charged(&self, chain: &[Frame]) -> usize {
        chain
            .iter()
            .position(|f| !self.is_library(&f.file))
            .unwrap_or(chain.len().saturating_sub(1))
    }

    /// `/work/lab/gpu-kernels/src/reduce.rs` → `gpu-kernels/src/reduce.rs` (under the root); a
    /// path inside the Rust sources → from `core/` on (`core_arch/` for `core::arch`); a CUDA
    /// header → from `include/` on.
    pub fn short_path(&self, path: &str) -> String {
        if let Some(i) = path.find("/include/") {
            return path[i + 1..].to_string();
        }
        if let Ok(rel) = Path::new(path).strip_prefix(&self.root) {
            return rel.display().to_string();
        }
        match path.find("/library/") {
            Some(i) => path[i + "/library/".len()..].replace("core/src/../../stdarch/crates/", ""),
            None => path.to_string(),
        }
    }

    /// Where a recorded path is on this machine: the same file under the root (for a path
    /// through one of [`Tree::folders`]; a capture made from another checkout, or on another
    /// machine, names that one), else the path itself if it exists, else the same file under
    /// this user's rustup (`…/.rustup/…`).
    pub fn local_path(&self, recorded: &str) -> PathBuf {
        let p = Path::new(recorded);
        for folder in &self.folders {
            if let Some(i) = recorded.find(&format!("/{folder}/")) {
                let c = self.root.join(&recorded[i + 1..]);
                if c.exists() {
                    return c;
                }
            }
        }
        if p.exists() {
            return p.to_path_buf();
        }
        if let Some(i) = recorded.find("/.rustup/") {
            let home = std::env::var_os("RUSTUP_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")));
            if let Some(c) = home.map(|h| h.join(&recorded[i + "/.rustup/".len()..]))
                && c.exists()
            {
                return c;
            }
        }
        p.to_path_buf()
    }
}

/// The `.loc` records of one PTX function: for each line number, the files that hold it and,
/// for inlined code, the call site (file, line) it was inlined at.
#[derive(Debug, Default)]
pub struct CallSites(HashMap<u32, BTreeSet<Record>>);

/// A file holding a line, and the (file, line) it was inlined at, if it was.
type Record = (String, Option<(String, u32)>);

impl CallSites {
    pub fn from_ptx(f: &ptx::Function, files: &BTreeMap<u32, String>) -> CallSites {
        let mut map: HashMap<u32, BTreeSet<Record>> = HashMap::new();
        for l in &f.body {
            let ptx::Line::Loc(loc) = l else { continue };
            let Some(file) = files.get(&loc.file) else {
                continue;
            };
            let at = match loc.inlined_at {
                Some((at_file, at_line, _)) => match files.get(&at_file) {
                    Some(at) => Some((at.clone(), at_line)),
                    None => continue,
                },
                None => None,
            };
            map.entry(loc.line).or_default().insert((file.clone(), at));
        }
        CallSites(map)
    }

    /// nvdisasm's inline chain with each frame's file taken from the PTX. nvdisasm (CUDA
    /// 13.2, `-gi`) gives the right lines but at times the wrong files ("llvm.rs, line 71
    /// inlined at llvm.rs, line 292" where the PTX has reduce.rs:71 inlined at reduce.rs:292).
    /// From the outermost frame in: a frame's file is the one whose records hold its line with
    /// the (already settled) next frame as call site, or no call site for the outermost;
    /// nvdisasm's file stays where the records allow it or do not settle on one.
    pub fn repair(&self, chain: &[Frame]) -> Vec<Frame> {
        let mut out = chain.to_vec();
        for i in (0..out.len()).rev() {
            let at = out.get(i + 1).map(|f| (f.file.clone(), f.line));
            let files: BTreeSet<&String> = self
                .0
                .get(&out[i].line)
                .into_iter()
                .flatten()
                .filter(|(_, site)| *site == at)
                .map(|(file, _)| file)
                .collect();
            if files.len() == 1 && !files.contains(&out[i].file) {
                out[i].file = files.into_iter().next().expect("one").clone();
            }
        }
        out
    }
}

/// Source files of a [`Tree`], read once each.
pub struct Sources {
    pub tree: Tree,
    read: HashMap<String, Option<Vec<String>>>,
}

impl Sources {
    pub fn new(tree: Tree) -> Sources {
        Sources {
            tree,
            read: HashMap::new(),
        }
    }

    /// The text of `path`'s line `line`, trimmed; empty when the file cannot be read.
    pub fn text(&mut self, path: &str, line: u32) -> &str {
        let lines = self.read.entry(path.to_string()).or_insert_with(|| {
            std::fs::read_to_string(path)
                .ok()
                .map(|t| t.lines().map(str::to_string).collect())
        });
        lines
            .as_ref()
            .and_then(|l| (line as usize).checked_sub(1).and_then(|i| l.get(i)))
            .map_or("", |t| t.trim())
    }

    /// `//> gpu-kernels/src/reduce.rs:116  if tid % (2 * stride) == 0 {`
    pub fn annotate(&mut self, path: &str, line: u32) -> String {
        format!(
            "\t//> {}:{line}  {}",
            self.tree.short_path(path),
            self.text(path, line)
        )
    }

    /// The line an inline chain is charged to, then each frame inlined into it, innermost
    /// last:
    ///
    /// ```text
    ///     //> gpu-kernels/src/reduce.rs:171  sync_threads();
    ///     //    ↳ gpu-kernels/src/device/llvm.rs:49  nvptx::_syncthreads()
    ///     //    ↳ core_arch/src/nvptx/mod.rs:57  syncthreads(0)
    /// ```
    pub fn annotate_chain(&mut self, chain: &[Frame]) -> Vec<String> {
        let charged = self.tree.charged(chain);
        let Some(at) = chain.get(charged) else {
            return Vec::new();
        };
        let mut out = vec![self.annotate(&at.file, at.line)];
        for f in chain[..charged].iter().rev() {
            out.push(format!(
                "\t//    ↳ {}:{}  {}",
                self.tree.short_path(&f.file),
                f.line,
                self.text(&f.file, f.line)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(file: &str, line: u32) -> Frame {
        Frame {
            file: file.into(),
            line,
        }
    }

    /// A tree like the lab's: its device layer is library code.
    fn lab() -> Tree {
        Tree {
            root: "/lab".into(),
            libraries: vec!["gpu-kernels/src/device/".into()],
            folders: vec!["gpu-kernels".into()],
        }
    }

    #[test]
    fn library_frames_are_charged_to_the_kernel_line_that_inlined_them() {
        let tree = lab();
        let lab = |p: &str| tree.root.join(p).display().to_string();
        let charged = |chain: &[Frame]| tree.charged(chain);
        let core = "/root/.rustup/toolchains/x/lib/rustlib/src/rust/library/core/src/../../stdarch/crates/core_arch/src/nvptx/mod.rs";
        let chain = [
            frame(core, 57),
            frame(&lab("gpu-kernels/src/device/llvm.rs"), 49),
            frame(&lab("gpu-kernels/src/reduce.rs"), 171),
            frame(&lab("gpu-kernels/src/reduce.rs"), 156),
            frame(&lab("gpu-kernels/src/device/llvm.rs"), 341),
        ];
        assert_eq!(charged(&chain), 2);
        // All library: the outermost frame.
        assert_eq!(charged(&chain[..2]), 1);
        assert_eq!(charged(&[]), 0);
        let cuda = lab(".tools/cuda13/bin/..//include/sm_30_intrinsics.hpp");
        let cu = lab("gpu-kernels/cuda/kernels.cu");
        assert_eq!(
            charged(&[frame(&cuda, 100), frame(&cu, 53), frame(&cu, 98)]),
            1
        );
        assert_eq!(tree.short_path(&cuda), "include/sm_30_intrinsics.hpp");
        // Without the tree's own library folder, the device layer is the kernel's line.
        assert_eq!(Tree::at("/lab").charged(&chain), 1);
        let lines = Sources::new(tree.clone()).annotate_chain(&chain);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines[0].starts_with("\t//> gpu-kernels/src/reduce.rs:171"),
            "{lines:?}"
        );
        assert!(
            lines[1].starts_with("\t//    ↳ gpu-kernels/src/device/llvm.rs:49"),
            "{lines:?}"
        );
        assert!(
            lines[2].starts_with("\t//    ↳ core_arch/src/nvptx/mod.rs:57"),
            "{lines:?}"
        );
    }

    /// Chains nvdisasm gives for reduce_v6's first instructions, and the PTX records that say
    /// where each line really is.
    #[test]
    fn frame_files_come_from_the_ptx() {
        let ptx = r#"
.visible .entry k()
{
	.loc	1 105 0
	.loc	8 341 17
	.loc	8 297 20, function_name $L__info_string56, inlined_at 8 341 17
	.loc	8 292 16, function_name $L__info_string56, inlined_at 8 341 17
	.loc	8 71 5, function_name $L__info_string19, inlined_at 8 292 16
	.loc	1 20 14, function_name $L__info_string6, inlined_at 8 71 5
	.loc	3 85 5, function_name $L__info_string7, inlined_at 1 20 14
	ret;
}
	.file	1 "/lab/gpu-kernels/src/device/llvm.rs"
	.file	3 "/root/.rustup/toolchains/n/lib/rustlib/src/rust/library/core/src/../../stdarch/crates/core_arch/src/nvptx/mod.rs"
	.file	8 "/lab/gpu-kernels/src/reduce.rs"
"#;
        let m = ptx::Module::parse(ptx);
        let records = CallSites::from_ptx(m.entry("k").unwrap(), &m.files);
        let (core, llvm, reduce) = (&m.files[&3], &m.files[&1], &m.files[&8]);
        let nvdisasm = [
            frame(core, 85),
            frame(llvm, 20),
            frame(llvm, 71),
            frame(llvm, 292),
            frame(llvm, 341),
        ];
        let want = [
            frame(core, 85),
            frame(llvm, 20),
            frame(reduce, 71),
            frame(reduce, 292),
            frame(reduce, 341),
        ];
        assert_eq!(records.repair(&nvdisasm), want);
        assert_eq!(records.repair(&want), want, "a right chain stays");
        assert_eq!(lab().charged(&want), 2);
        // The innermost frame's file can be wrong too.
        assert_eq!(
            records.repair(&[frame(llvm, 297), frame(llvm, 341)]),
            [frame(reduce, 297), frame(reduce, 341)]
        );
        // The kernel macro's own line, not inlined, stays in its file.
        assert_eq!(records.repair(&[frame(llvm, 105)]), [frame(llvm, 105)]);
    }

    #[test]
    fn recorded_paths_map_into_the_tree() {
        let root = std::env::temp_dir().join(format!("sass-tree-{}", std::process::id()));
        std::fs::create_dir_all(root.join("gpu-kernels/src")).unwrap();
        std::fs::write(root.join("gpu-kernels/src/reduce.rs"), "").unwrap();
        let tree = Tree {
            root: root.clone(),
            ..lab()
        };
        assert_eq!(
            tree.local_path("/elsewhere/lab/gpu-kernels/src/reduce.rs"),
            root.join("gpu-kernels/src/reduce.rs")
        );
        assert_eq!(
            tree.local_path("/nowhere/x.rs"),
            PathBuf::from("/nowhere/x.rs")
        );
        // Without the folder named, the recorded path stays.
        assert_eq!(
            Tree::at(&root).local_path("/elsewhere/lab/gpu-kernels/src/reduce.rs"),
            PathBuf::from("/elsewhere/lab/gpu-kernels/src/reduce.rs")
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
