//! The repository's layers, read from its sources and held: which crate may import which (the
//! table in README.md's Layout section, [`allowed`]), and, inside every crate, no import circle
//! between modules ([`circles`]).
//!
//! A circle is looked for at every level of a crate's module tree: the children of one module
//! (and that module's own body, the items of its file) must reach each other one way only. A
//! file's imports are the paths it names through `crate::`, `super::`, `self::` or a child
//! module it declares, `use` groups included; a name a module re-exports (`pub use
//! child::Name`) counts as its child's. Comments and string literals are left out, so a doc
//! link may name any module.
//!
//! - [`crates`]: each crate's manifest read for the workspace crates it depends on.
//! - [`modules`]: a crate's module tree, from its root file through `mod` declarations.
//! - [`circles`]: the import circles among those modules, with the imports that make them.

mod lex;
mod manifest;
mod tree;

pub use manifest::{Crate, allowed, crates, forbidden};
pub use tree::{Circle, Edge, Module, circles, edges, modules, modules_from};
