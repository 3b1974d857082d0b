//! One PTX file as SASS: assembled for sm_90 (sm_90a where its target says so), disassembled
//! with source lines, control bits and live registers, each instruction's inline chain checked
//! against the PTX's own records.

use crate::disasm::{self, Function, Resources};
use crate::ptx;
use crate::source::CallSites;
use crate::tools::Tools;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// Every function's SASS listing, and what `ptxas -v` reported per kernel.
pub struct Sass {
    pub functions: Vec<Function>,
    pub resources: BTreeMap<String, Resources>,
    /// Why the listings carry no live-register counts, where nvdisasm could not make them
    /// (it refuses a cubin with a kernel of 255 registers: "Invalid register count").
    pub live_missing: Option<String>,
}

impl Sass {
    /// Assembles `ptx` (the file `module` was read from) into `cubin` and disassembles it; the
    /// cubin is removed after. The listing carries nvdisasm's source lines (with their inline
    /// chains, each frame's file checked against the PTX's, see [`CallSites::repair`]) where
    /// the PTX had line info, and the registers live at each instruction.
    pub fn build(tools: &Tools, ptx: &Path, module: &ptx::Module, cubin: &Path) -> Result<Sass> {
        let arch = disasm::arch(&module.target);
        let (cubin, resources) = disasm::assemble(tools, ptx, arch, cubin)?;
        // Two nvdisasm runs on the same cubin (one for lines, one for life ranges).
        let (functions, live) = std::thread::scope(|s| {
            let live = s.spawn(|| disasm::life_ranges(tools, &cubin));
            let functions = disasm::disassemble(tools, &cubin);
            (functions, live.join().expect("life-range thread"))
        });
        let _ = std::fs::remove_file(&cubin);
        let mut functions = functions?;
        // The listing stands without the counts: said once, on one line.
        let (mut live, live_missing) = match live {
            Ok(live) => (live, None),
            Err(e) => {
                let why = format!("{e:#}");
                let why = why.lines().last().unwrap_or_default().trim().to_string();
                eprintln!("note: no live-register counts for {}: {why}", ptx.display());
                (BTreeMap::new(), Some(why))
            }
        };
        for f in &mut functions {
            f.live = live.remove(&f.name).unwrap_or_default();
            let Some(p) = module.functions.iter().find(|p| p.name == f.name) else {
                continue;
            };
            let records = CallSites::from_ptx(p, &module.files);
            for l in &mut f.lines {
                if let disasm::Line::Source(chain) = l {
                    *chain = records.repair(chain);
                }
            }
        }
        Ok(Sass {
            functions,
            resources,
            live_missing,
        })
    }

    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
}
