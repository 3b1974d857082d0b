//! `cargo xtask explore`'s pages in a real browser: headless Chromium (Debian's, which
//! `scripts/setup.sh` installs; never skipped) driven through the DevTools protocol
//! ([`cdp`]), with no network at any time.
//!
//! - `harness_*`: the driver sees console errors, exceptions and requests (a page made to
//!   have them), so that the checks below can fail;
//! - `page_*`: a kernel's page loads with no console error and no request beyond its own
//!   file, clicking a Rust line lights up its SASS (and PTX) rows and clicking a SASS row its
//!   line; a page built with the committed capture shows the warp-state samples as a heat
//!   column;
//! - `cli_*`: what the command refuses.
//!
//! Screenshots of each land in `target/xtask-tests/explore/`, and also in
//! `$EXPLORE_SCREENSHOTS` when set (`EXPLORE_SCREENSHOTS=docs/explore` refreshes the docs').

use crate::cdp;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// One browser at a time: the machines have two cores.
static BROWSER: Mutex<()> = Mutex::new(());

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn scratch() -> PathBuf {
    let d = root().join("target/xtask-tests/explore");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `xtask explore <args> --out <dir>`; returns the pages it wrote.
fn explore(args: &[&str], dir: &str) -> Vec<PathBuf> {
    let out_dir = scratch().join(dir);
    let _ = std::fs::remove_dir_all(&out_dir);
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(root())
        .arg("explore")
        .args(args)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("run the xtask binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "xtask explore {} failed:\n{stdout}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(PathBuf::from).collect()
}

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn save(name: &str, webp: &[u8]) {
    assert!(
        webp.starts_with(b"RIFF") && &webp[8..12] == b"WEBP",
        "{name}: not a WebP"
    );
    std::fs::write(scratch().join(name), webp).unwrap();
    if let Some(dir) = std::env::var_os("EXPLORE_SCREENSHOTS") {
        let dir = root().join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), webp).unwrap();
    }
}

fn count(b: &mut cdp::Browser, selector: &str) -> u64 {
    let v = b
        .eval(&format!(
            "document.querySelectorAll({}).length",
            Value::from(selector)
        ))
        .unwrap();
    v.as_u64().unwrap_or(0)
}

fn launch() -> cdp::Browser {
    cdp::Browser::launch(&scratch(), 1600, 1000).unwrap_or_else(|e| panic!("{e}"))
}

fn assert_clean(b: &cdp::Browser, what: &str) {
    assert!(b.errors().is_empty(), "{what}: {:?}", b.errors());
    assert!(
        b.network().is_empty(),
        "{what} made requests: {:?}",
        b.network()
    );
}

/// The driver itself: a page with a console error, an uncaught exception and a request to a
/// closed loopback port is reported as having all three.
#[test]
fn harness_sees_console_errors_exceptions_and_requests() {
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let page = scratch().join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><img src=\"http://127.0.0.1:9/none.png\">\
         <script>console.error('boom'); no_such_function();</script></body></html>",
    )
    .unwrap();
    let mut b = launch();
    b.navigate(&url(&page)).unwrap();
    let errors = b.errors();
    assert!(
        errors.iter().any(|e| e == "console.error: boom"),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("exception: ") && e.contains("no_such_function")),
        "{errors:?}"
    );
    assert!(
        b.network()
            .iter()
            .any(|u| u.starts_with("http://127.0.0.1:9/")),
        "{:?}",
        b.events
    );
}

/// Pages carry everything they show: no script, style, font or image from anywhere else.
#[test]
fn page_is_self_contained() {
    let pages = explore(&["--kernel", "reduce_v3_f32"], "static");
    assert_eq!(pages.len(), 1, "{pages:?}");
    let html = std::fs::read_to_string(&pages[0]).unwrap();
    for needle in [
        "<script src",
        "<link",
        "@import",
        "url(",
        "http://",
        "https://",
    ] {
        assert!(!html.contains(needle), "{needle} in {}", pages[0].display());
    }
    assert!(
        html.contains("<style>") && html.contains("<script>"),
        "inlined"
    );
}

#[test]
fn page_loads_clean_and_a_rust_line_lights_up_its_sass() {
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let pages = explore(&["--kernel", "reduce_v3"], "plain");
    let page = pages
        .iter()
        .find(|p| p.ends_with("reduce_v3_f32.llvm.html"))
        .unwrap_or_else(|| panic!("no reduce_v3_f32 page: {pages:?}"));
    let mut b = launch();
    b.navigate(&url(page)).unwrap();
    assert_clean(&b, "the loaded page");
    // The three columns, and every SASS row's control bits in the listing's notation.
    assert_eq!(count(&mut b, ".pane"), 1);
    assert!(count(&mut b, ".col.src tr.linked") > 10);
    assert!(count(&mut b, ".col.ptx tr.inst[data-loc]") > 50);
    let sass = count(&mut b, ".col.sass tr.inst");
    assert!(sass > 50, "{sass} SASS rows");
    let bad = b
        .eval(
            "[...document.querySelectorAll('.col.sass tr.inst td.ctl')]\
             .map(td => td.textContent)\
             .filter(t => !/^B[-0-5]{6} R[-0-5] W[-0-5] [-Y] S(0[1-9]|1[0-5]) [-a-d]{4}$/.test(t))",
        )
        .unwrap();
    assert_eq!(bad, Value::Array(vec![]), "control columns");
    assert!(
        count(&mut b, ".col.sass .wait") > 5,
        "scoreboard waits shown"
    );
    assert_eq!(count(&mut b, "tr.hl"), 0, "nothing lit before a click");
    save("explore-loaded.webp", &b.screenshot().unwrap());

    // Click the tree's line in reduce.rs.
    let key = b
        .eval(
            "(() => { const r = [...document.querySelectorAll('.col.src tr.linked')]\
             .find(r => r.textContent.includes('s.get(tid).plus(s.get(tid + stride))'));\
             return r ? r.dataset.loc : null; })()",
        )
        .unwrap();
    let key = key
        .as_str()
        .expect("the tree's line is on the page")
        .to_string();
    let line = format!(".col.src tr[data-loc=\"{key}\"]");
    b.click(&line).unwrap();
    let lit_sass = count(&mut b, ".col.sass tr.inst.hl");
    assert!(lit_sass >= 1, "clicking {key} lit no SASS row");
    assert_eq!(
        count(&mut b, &format!(".col.sass tr.inst.hl[data-loc=\"{key}\"]")),
        lit_sass,
        "only that line's rows"
    );
    assert!(count(&mut b, ".col.ptx tr.inst.hl") >= 1, "its PTX too");
    assert_eq!(
        count(&mut b, &format!("{line}.sel")),
        1,
        "the line is selected"
    );
    let status = b
        .eval("document.getElementById('status').textContent")
        .unwrap();
    assert!(
        status.as_str().unwrap_or("").contains("reduce.rs:"),
        "{status}"
    );
    assert_clean(&b, "after the click");
    save("explore-select.webp", &b.screenshot().unwrap());

    // And back: a barrier's SASS row lights up its Rust line.
    let bar = b
        .eval(
            "(() => { const r = [...document.querySelectorAll('.col.sass tr.inst[data-loc]')]\
             .find(r => r.textContent.includes('BAR.SYNC')); return r ? r.dataset.loc : null; })()",
        )
        .unwrap();
    let bar = bar.as_str().expect("a barrier with a line").to_string();
    b.click(&format!(".col.sass tr.inst[data-loc=\"{bar}\"]"))
        .unwrap();
    assert_eq!(
        count(&mut b, &format!(".col.src tr.hl[data-loc=\"{bar}\"]")),
        1,
        "the barrier's line"
    );
    assert_eq!(
        count(&mut b, &format!("{line}.hl")),
        0,
        "the first line is cleared"
    );
    assert_clean(&b, "after the second click");
}

#[test]
fn page_with_the_capture_shows_its_heat_column() {
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let pages = explore(&["reduce_v3", "reduce_v5", "--capture"], "capture");
    let page = pages
        .iter()
        .find(|p| p.ends_with("reduce_v3_f32-vs-reduce_v5_f32.llvm.html"))
        .unwrap_or_else(|| panic!("no v3-vs-v5 page: {pages:?}"));
    let mut b = launch();
    b.navigate(&url(page)).unwrap();
    assert_clean(&b, "the loaded page");
    assert_eq!(count(&mut b, ".pane"), 2);
    assert_eq!(
        count(&mut b, "#pane-a .col.sass th.heat"),
        1,
        "a samples column"
    );
    // v3's samples, by instruction: thousands in all, and the hottest row coloured.
    let heat = b
        .eval(
            "(() => { const cells = [...document.querySelectorAll('#pane-a .col.sass tr.inst td.heat')];\
             const n = cells.map(c => parseInt(c.textContent || '0', 10));\
             const max = Math.max(...n); const hot = cells[n.indexOf(max)];\
             return { rows: cells.length, total: n.reduce((a, b) => a + b, 0), max: max,\
                      colour: getComputedStyle(hot).backgroundColor,\
                      inst: hot.parentElement.querySelector('td.code').textContent }; })()",
        )
        .unwrap();
    assert!(heat["rows"].as_u64().unwrap_or(0) > 50, "{heat}");
    assert!(heat["total"].as_u64().unwrap_or(0) > 10_000, "{heat}");
    let colour = heat["colour"].as_str().unwrap_or("");
    assert!(
        colour.starts_with("rgba(220, 60, 0") || colour.starts_with("rgb(220, 60, 0"),
        "{heat}"
    );
    // The first load's wait, as the capture's profile found it (docs/asm-walkthrough.md).
    assert!(
        heat["inst"].as_str().unwrap_or("").starts_with("STS "),
        "{heat}"
    );
    assert!(
        count(&mut b, "#pane-a .col.src td.heat:not(:empty)") >= 3,
        "lines heated"
    );
    // v5 is not in the capture: its pane says so.
    let notes = b
        .eval("document.querySelector('#pane-b .notes').textContent")
        .unwrap();
    assert!(
        notes
            .as_str()
            .unwrap_or("")
            .contains("no kernel reduce_v5_f32"),
        "{notes}"
    );
    // Select the hottest line, for the picture.
    let hottest = b
        .eval(
            "(() => { const rows = [...document.querySelectorAll('#pane-a .col.src tr.linked')];\
             let best = null, most = -1; for (const r of rows) { const n = parseInt(r.querySelector('td.heat').textContent || '0', 10);\
             if (n > most) { most = n; best = r; } } return best.dataset.loc; })()",
        )
        .unwrap();
    let hottest = hottest.as_str().unwrap().to_string();
    b.click(&format!("#pane-a .col.src tr[data-loc=\"{hottest}\"]"))
        .unwrap();
    assert!(count(&mut b, "#pane-a .col.sass tr.inst.hl") >= 1);
    assert_clean(&b, "after the click");
    save("explore-heat.webp", &b.screenshot().unwrap());
}

/// A PTX file written elsewhere (`--ptx`; here one whose line table points at a Python file of
/// the tree, as Triton's do): its kernel's page, its source lines beside its SASS.
#[test]
fn a_ptx_file_written_elsewhere_gets_its_page() {
    // Line 67 of it: `row = tl.program_id(0).to(tl.int64)`.
    let source = root().join("gpu/rows/triton_rows.py");
    let ptx = format!(
        "//\n// Generated by LLVM NVPTX Back-End\n//\n.version 8.0\n.target sm_90a\n\
         .address_size 64\n.visible .entry elsewhere(\n\t.param .u64 elsewhere_param_0\n)\n{{\n\
         \t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\t.loc 1 67 0\n\
         \tld.param.u64 %rd1, [elsewhere_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
         \tmov.u32 %r1, 7;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}}\n.file 1 \"{}\"\n",
        source.display()
    );
    let path = scratch().join("elsewhere.ptx");
    std::fs::write(&path, ptx).unwrap();
    let pages = explore(&["--ptx", path.to_str().unwrap(), "elsewhere"], "elsewhere");
    assert_eq!(pages.len(), 1, "{pages:?}");
    assert!(pages[0].ends_with("elsewhere.llvm.html"), "{pages:?}");
    let html = std::fs::read_to_string(&pages[0]).unwrap();
    assert!(html.contains("STG.E"), "no SASS in {}", pages[0].display());
    assert!(
        html.contains("row = tl.program_id(0).to(tl.int64)"),
        "no line 67 of triton_rows.py in {}",
        pages[0].display()
    );
    assert!(
        html.contains("<h3>Python source</h3>"),
        "{}",
        pages[0].display()
    );
    assert!(
        html.contains("<h3>SASS sm_90a</h3>"),
        "{}",
        pages[0].display()
    );
    // Two files side by side: one kernel before and after a change, each pane its file's.
    let after = scratch().join("elsewhere-after.ptx");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&after, text.replace("mov.u32 %r1, 7;", "mov.u32 %r1, 8;")).unwrap();
    let pages = explore(
        &[
            "--ptx",
            path.to_str().unwrap(),
            "--ptx",
            after.to_str().unwrap(),
            "elsewhere",
        ],
        "elsewhere-two",
    );
    assert_eq!(pages.len(), 1, "{pages:?}");
    assert!(
        pages[0].ends_with("elsewhere.elsewhere-vs-elsewhere-after.html"),
        "{pages:?}"
    );
    let html = std::fs::read_to_string(&pages[0]).unwrap();
    assert!(
        html.contains("llvm: elsewhere-after.ptx"),
        "{}",
        pages[0].display()
    );
}

#[test]
fn cli_two_kernels_on_two_backends_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(root())
        .args([
            "explore",
            "reduce_v3",
            "reduce_v5",
            "--backend",
            "llvm,nvvm",
        ])
        .output()
        .expect("run the xtask binary");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("two kernels on one backend, or one kernel on two"),
        "{stderr}"
    );
}

#[test]
fn cli_a_missing_capture_is_a_note_not_a_failure() {
    let pages = explore(
        &[
            "--kernel",
            "reduce_v6_f32",
            "--capture",
            "target/no-such-capture",
        ],
        "nocapture",
    );
    let html = std::fs::read_to_string(&pages[0]).unwrap();
    assert!(
        html.contains("no warp-state samples"),
        "{}",
        pages[0].display()
    );
    assert!(
        !html.contains("class=\"heat\""),
        "no heat column without samples"
    );
}
