//! The page as HTML: an askama template (`studies/templates/explore.html`) with the style and
//! the script inlined, so that the file opens anywhere with no network.

use super::page::Pane;
use crate::util;
use anyhow::Result;
use askama::Template;

/// The page's style and script, inlined into every page.
const STYLE: &str = include_str!("explore.css");
const SCRIPT: &str = include_str!("explore.js");

#[derive(Template)]
#[template(path = "explore.html")]
struct PageHtml<'a> {
    title: String,
    panes: &'a [Pane],
    heat: bool,
    generated: String,
    style: &'static str,
    script: &'static str,
}

/// `reduce_v3_f32 [llvm]`, `reduce_v3_f32 [llvm] vs reduce_v5_f32 [llvm]`, `k [llvm: old.ptx]
/// vs k [llvm: new.ptx]`.
fn title(panes: &[Pane]) -> String {
    panes
        .iter()
        .map(|p| crate::asm::report::label(&p.kernel, p.backend, p.file.as_deref()))
        .collect::<Vec<_>>()
        .join(" vs ")
}

pub fn render(panes: &[Pane]) -> Result<String> {
    let version = |tool| {
        util::cuda_tool(tool)
            .map(|p| util::tool_version(&p))
            .unwrap_or_else(|_| "not found".into())
    };
    let generated = format!(
        "cargo xtask explore · commit {} · {} · ptxas {} · nvdisasm {}",
        util::git_commit(&util::root()),
        util::now_utc(),
        version("ptxas"),
        version("nvdisasm"),
    );
    let page = PageHtml {
        title: title(panes),
        panes,
        heat: panes.iter().any(|p| p.heat),
        generated,
        style: STYLE,
        script: SCRIPT,
    };
    Ok(page.render()?)
}
