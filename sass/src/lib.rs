//! PTX and SASS read for any CUDA kernel, from any compiler (nvcc, rustc's NVPTX backend,
//! libnvvm, Triton): a PTX file parsed ([`ptx`]), assembled for sm_90 with ptxas and read back
//! with nvdisasm ([`disasm`], [`Sass`]), each instruction's control bits decoded ([`bits`]) and
//! followed through the control-flow graph ([`control`]), instructions counted by class
//! ([`counts`]), and mapped back to the source lines they came from, through the chain of calls
//! they were inlined through ([`source`]).
//!
//! Needs no GPU: only `ptxas` and `nvdisasm` ([`tools`]), from a CUDA toolkit (12 or later
//! reads sm_90).
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! let path = std::path::Path::new("kernels.ptx");
//! let module = sass::ptx::Module::parse(&std::fs::read_to_string(path)?);
//! let tools = sass::Tools::find()?;
//! let listing = sass::Sass::build(&tools, path, &module, std::path::Path::new("/tmp/k.cubin"))?;
//! for f in &listing.functions {
//!     let live = f.peak().map_or("?".into(), |p| p.gpr.to_string());
//!     println!("{}: {} instructions, peak {live} registers live", f.name, f.counts().total);
//! }
//! # Ok(())
//! # }
//! ```

pub mod assembled;
pub mod bits;
pub mod control;
pub mod counts;
pub mod disasm;
pub mod ptx;
pub mod source;
pub mod tools;

pub use assembled::Sass;
pub use tools::Tools;
