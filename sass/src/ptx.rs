//! A PTX module read just far enough to count what each kernel does: the header (`.target`),
//! the `.file` table, and per entry its parameters and body lines (instructions, labels,
//! `.loc` line info).

use crate::counts::{Counts, Inst, InstClass, Item, Loops};
use std::collections::BTreeMap;

/// One PTX file, split into its functions.
#[derive(Debug, Default)]
pub struct Module {
    /// `.target sm_90` → `["sm_90"]`; `.target sm_90, debug` → `["sm_90", "debug"]`.
    pub target: Vec<String>,
    /// `.file N "path"` (or `.file N "dir" "name"`, joined).
    pub files: BTreeMap<u32, String>,
    /// Names of the `.shared` variables, module-level and inside functions.
    pub shared: Vec<String>,
    pub functions: Vec<Function>,
}

/// A `.entry` (kernel) or `.func`.
#[derive(Debug)]
pub struct Function {
    pub name: String,
    pub entry: bool,
    /// Parameter declarations, one per `.param`.
    pub params: Vec<String>,
    /// The function's text, from its `.entry`/`.func` line to its closing brace.
    pub text: Vec<String>,
    pub body: Vec<Line>,
}

/// One meaningful line of a function body.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Inst(Inst),
    Label(String),
    Loc(Loc),
}

/// `.loc 3 85 5, function_name $L__info_string1, inlined_at 1 20 14`: the source position of
/// the instructions that follow, and for inlined code the call site it was inlined at (whose
/// own `.loc`, emitted before it, says where that call was inlined in turn).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    pub inlined_at: Option<(u32, u32, u32)>,
}

impl Loc {
    /// Reads what follows `.loc`; `None` unless it has at least a file and a line.
    pub fn parse(rest: &str) -> Option<Loc> {
        let rest = strip_comment(rest);
        let mut clauses = rest.split(',');
        let nums = |s: &str| -> Vec<u32> {
            s.split_whitespace()
                .map_while(|n| n.parse::<u32>().ok())
                .collect()
        };
        let pos = nums(clauses.next()?);
        let (&file, &line) = (pos.first()?, pos.get(1)?);
        let inlined_at = clauses
            .find_map(|c| c.trim().strip_prefix("inlined_at"))
            .map(nums)
            .and_then(|n| Some((*n.first()?, *n.get(1)?, n.get(2).copied().unwrap_or(0))));
        Some(Loc {
            file,
            line,
            col: pos.get(2).copied().unwrap_or(0),
            inlined_at,
        })
    }
}

impl Module {
    pub fn parse(text: &str) -> Module {
        let mut m = Module::default();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let line = strip_comment(lines[i]).trim();
            if let Some(rest) = line.strip_prefix(".target") {
                m.target = rest.split(',').map(|s| s.trim().to_string()).collect();
            } else if let Some(rest) = line.strip_prefix(".file") {
                if let Some((n, path)) = parse_file(rest) {
                    m.files.insert(n, path);
                }
            } else if let Some(name) = shared_variable(line) {
                m.shared.push(name.to_string());
            } else if let Some(name) = function_name(line) {
                let (f, next) = parse_function(&lines, i, name, line.contains(".entry"));
                m.shared.extend(
                    f.text
                        .iter()
                        .filter_map(|l| shared_variable(strip_comment(l).trim()))
                        .map(str::to_string),
                );
                m.functions.push(f);
                i = next;
                continue;
            }
            i += 1;
        }
        m
    }

    pub fn entry(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.entry && f.name == name)
    }

    pub fn entries(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.entry)
    }

    /// Whether any function carries `.loc` line info.
    pub fn has_line_info(&self) -> bool {
        !self.files.is_empty()
            && self
                .functions
                .iter()
                .any(|f| f.body.iter().any(|l| matches!(l, Line::Loc(_))))
    }
}

impl Function {
    pub fn insts(&self) -> impl Iterator<Item = &Inst> {
        self.body.iter().filter_map(|l| match l {
            Line::Inst(i) => Some(i),
            _ => None,
        })
    }

    /// Instruction counts by class (see [`classify`]).
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for inst in self.insts() {
            c.add(inst, classify(&inst.opcode));
        }
        c.loops = Loops::find(&self.body_items(), branch_target, |op| {
            matches!(classify(op), InstClass::Barrier | InstClass::Shuffle)
        });
        c
    }

    fn body_items(&self) -> Vec<Item<'_>> {
        self.body
            .iter()
            .filter_map(|l| match l {
                Line::Inst(i) => Some(Item::Inst(i)),
                Line::Label(l) => Some(Item::Label(l)),
                Line::Loc(_) => None,
            })
            .collect()
    }
}

/// What a PTX opcode does, for the counts. `ld.global.nc.v4.f32` → global load of 128 bits;
/// `add.f32` → floating point, `add.s64` → integer.
pub fn classify(opcode: &str) -> InstClass {
    let parts: Vec<&str> = opcode.split('.').collect();
    let space = |s: &str| {
        parts
            .iter()
            .skip(1)
            .any(|p| *p == s || p.starts_with(&format!("{s}::")))
    };
    let typed = |t: &[&str]| parts.iter().skip(1).any(|p| t.contains(p));
    match parts[0] {
        "ld" | "st" | "ldu" => {
            let load = parts[0] != "st";
            if space("shared") {
                InstClass::Shared { load }
            } else if space("global") {
                InstClass::Global {
                    load,
                    bits: ptx_width(&parts),
                }
            } else if space("local") {
                InstClass::Local { load }
            } else if space("param") || space("const") {
                InstClass::Constant
            } else {
                InstClass::Generic { load }
            }
        }
        "bar" | "barrier" if space("warp") => InstClass::Warp,
        "bar" | "barrier" => InstClass::Barrier,
        "shfl" => InstClass::Shuffle,
        "atom" | "red" => InstClass::Atomic,
        "bra" | "brx" => InstClass::Branch,
        "vote" | "match" | "redux" | "activemask" | "elect" => InstClass::Warp,
        "membar" | "fence" => InstClass::Fence,
        "mma" => InstClass::Tensor,
        "wgmma" if parts.get(1) == Some(&"mma_async") => InstClass::Tensor,
        // A warpgroup's `wgmma.fence`, `commit_group` and `wait_group`.
        "wgmma" => InstClass::Control,
        "ret" | "exit" | "call" | "trap" | "brkpt" | "nanosleep" => InstClass::Control,
        "cvt" | "cvta" => InstClass::Convert,
        "mov" | "selp" => InstClass::Move,
        "and" | "or" | "xor" | "not" if typed(&["pred"]) => InstClass::Predicate,
        "fma" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" | "testp"
        | "copysign" => InstClass::Float,
        "add" | "sub" | "mul" | "mad" | "div" | "rem" | "abs" | "neg" | "min" | "max" | "setp"
        | "set" | "slct"
            if typed(&["f16", "f16x2", "bf16", "bf16x2", "f32", "f64"]) =>
        {
            InstClass::Float
        }
        "add" | "addc" | "sub" | "subc" | "mul" | "mad" | "madc" | "mul24" | "mad24" | "sad"
        | "div" | "rem" | "abs" | "neg" | "min" | "max" | "popc" | "clz" | "bfind" | "fns"
        | "brev" | "bfe" | "bfi" | "dp4a" | "dp2a" | "and" | "or" | "xor" | "not" | "cnot"
        | "lop3" | "shf" | "shl" | "shr" | "prmt" | "setp" | "set" | "slct" | "szext" | "bmsk" => {
            InstClass::Int
        }
        _ => InstClass::Other,
    }
}

/// Access width in bits: vector count × element size (`v4` × `f32` = 128).
fn ptx_width(parts: &[&str]) -> u32 {
    let vec = parts
        .iter()
        .find_map(|p| p.strip_prefix('v').and_then(|n| n.parse::<u32>().ok()))
        .unwrap_or(1);
    let elem = parts
        .last()
        .and_then(|t| t.get(1..).and_then(|n| n.parse::<u32>().ok()))
        .unwrap_or(32);
    vec * elem
}

/// The line up to a `//` comment; a `//` inside a string (nvcc's `.file 2 "…/bin/..//include/…"`)
/// is not one.
fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'/' if !quoted && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// `.file 3 "/a/b.rs"` or `.file 3 "/a" "b.rs"` (with optional md5/size fields after).
fn parse_file(rest: &str) -> Option<(u32, String)> {
    let rest = rest.trim();
    let (n, rest) = rest.split_once(char::is_whitespace)?;
    let quoted: Vec<&str> = rest.split('"').skip(1).step_by(2).collect();
    let path = match quoted.as_slice() {
        [path] => path.to_string(),
        [_, name, ..] if name.starts_with('/') => name.to_string(),
        [dir, name, ..] => format!("{dir}/{name}"),
        [] => return None,
    };
    Some((n.parse().ok()?, path))
}

/// `.extern .shared .align 16 .b8 smem[];` / `.shared .align 4 .b8 tile[4224];` → the name.
fn shared_variable(line: &str) -> Option<&str> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if !words.contains(&".shared") || !line.ends_with(';') {
        return None;
    }
    let last = words.last()?.trim_end_matches(';');
    let name = last.split('[').next().unwrap_or(last);
    (!name.is_empty() && !name.starts_with('.')).then_some(name)
}

/// `.visible .entry reduce_v1_f32(` → `reduce_v1_f32`.
fn function_name(line: &str) -> Option<&str> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == ".entry" || *w == ".func")?;
    // `.func (.param .b32 ret) name(` puts the return value first.
    let rest = line[line.find(words[at])? + words[at].len()..].trim_start();
    let rest = if rest.starts_with('(') {
        rest[rest.find(')')? + 1..].trim_start()
    } else {
        rest
    };
    let end = rest
        .find(|c: char| c == '(' || c == ';' || c.is_whitespace())
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Reads one function starting at `lines[start]`; returns it and the index after its end.
fn parse_function(lines: &[&str], start: usize, name: &str, entry: bool) -> (Function, usize) {
    let mut f = Function {
        name: name.to_string(),
        entry,
        params: Vec::new(),
        text: Vec::new(),
        body: Vec::new(),
    };
    let mut depth = 0usize;
    let mut in_body = false;
    let mut i = start;
    while i < lines.len() {
        let raw = lines[i];
        f.text.push(raw.to_string());
        let line = strip_comment(raw).trim();
        i += 1;
        if !in_body {
            // One `.param` per line in what LLVM and NVVM print; count them all the same.
            for p in line.split(".param").skip(1) {
                f.params.push(format!(
                    ".param{}",
                    p.trim_end_matches([',', ')', ';', ' '])
                ));
            }
            if line.ends_with(';') {
                break; // a declaration (`.func foo();`) without a body
            }
            if line == "{" {
                in_body = true;
                depth = 1;
            }
            continue;
        }
        // Braces alone on a line open and close scopes; braces inside an instruction are
        // vector operands (`ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];`).
        match line {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            "" => {}
            _ => f.body.extend(parse_body_line(line)),
        }
    }
    (f, i)
}

/// One body line: a `.loc`, a label, or instructions. Inline assembly can put a whole scope
/// on one line: `{ .reg .u64 g; cvta.to.global.u64 g, %rd37; ld.global.nc.v4.b32 {...}, [g]; }`.
fn parse_body_line(line: &str) -> Vec<Line> {
    if let Some(rest) = line.strip_prefix(".loc") {
        return Loc::parse(rest).map(Line::Loc).into_iter().collect();
    }
    if let Some(label) = line.strip_suffix(':') {
        return vec![Line::Label(label.to_string())];
    }
    line.split(';')
        .filter_map(parse_statement)
        .map(Line::Inst)
        .collect()
}

fn parse_statement(s: &str) -> Option<Inst> {
    let mut s = s.trim();
    // A scope opened on this line (`{ .reg ...`); vector operands never start a statement.
    while let Some(rest) = s.strip_prefix('{') {
        s = rest.trim_start();
    }
    if s.is_empty() || s.starts_with('}') || s.starts_with('.') {
        return None; // end of scope, or a directive (.reg, .shared, .pragma ...)
    }
    let (guard, rest) = match s.strip_prefix('@') {
        Some(r) => {
            let (g, rest) = r.split_once(char::is_whitespace)?;
            (Some(g.to_string()), rest.trim_start())
        }
        None => (None, s),
    };
    let (opcode, operands) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    Some(Inst {
        guard,
        opcode: opcode.to_string(),
        operands: operands.trim().to_string(),
    })
}

/// The label a branch jumps to: `bra.uni $L__BB0_2` → `$L__BB0_2`.
pub fn branch_target(inst: &Inst) -> Option<&str> {
    matches!(classify(&inst.opcode), InstClass::Branch)
        .then(|| inst.operands.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
.version 7.8
.target sm_90, debug
.address_size 64
.extern .shared .align 4 .b8 smem[];
.visible .entry k(
	.param .u64 .ptr .align 1 k_param_0,
	.param .u64 k_param_1,
	.param .u64 .ptr .align 1 k_param_2
)
{
	.reg .pred 	%p<2>;
	.loc	4 116 12
	ld.param.b64 	%rd1, [k_param_0];
$L__BB0_1:
	ld.global.v4.b32 	{%r1, %r2, %r3, %r4}, [%rd1];
	{
	@%p1 bra 	$L__BB0_1;
	}
	@!%p1 st.shared.b32 	[smem+4], %r1;
	shfl.sync.down.b32 %r5, %r1, 16, 31, -1;
	bar.sync 	0;
	ld.u32 	%r6, [%rd1];
	red.global.add.f32 	[%rd1], %r1;
	{ .reg .u64 g; cvta.to.global.u64 g, %rd37; ld.global.nc.L1::no_allocate.v4.b32 {%r6, %r7, %r8, %r9}, [g]; }
	ret;
}
.func (.param .b32 r) helper(.param .b32 a);
	.file	4 "/src" "reduce.rs"
	.file	5 "/abs/llvm.rs"
	.file	6 "/cuda/bin/..//include/sm_30_intrinsics.hpp" // a comment
"#;

    #[test]
    fn parses_header_entries_params_and_files() {
        let m = Module::parse(SAMPLE);
        assert_eq!(m.target, ["sm_90", "debug"]);
        assert_eq!(m.files[&4], "/src/reduce.rs");
        assert_eq!(m.files[&5], "/abs/llvm.rs");
        assert_eq!(m.files[&6], "/cuda/bin/..//include/sm_30_intrinsics.hpp");
        let k = m.entry("k").expect("entry k");
        assert_eq!(k.params.len(), 3);
        assert!(m.functions.iter().any(|f| f.name == "helper" && !f.entry));
        assert!(m.has_line_info());
    }

    #[test]
    fn vector_braces_do_not_end_the_body() {
        let m = Module::parse(SAMPLE);
        let ops: Vec<&str> = m
            .entry("k")
            .unwrap()
            .insts()
            .map(|i| i.opcode.as_str())
            .collect();
        assert_eq!(
            ops,
            [
                "ld.param.b64",
                "ld.global.v4.b32",
                "bra",
                "st.shared.b32",
                "shfl.sync.down.b32",
                "bar.sync",
                "ld.u32",
                "red.global.add.f32",
                "cvta.to.global.u64",
                "ld.global.nc.L1::no_allocate.v4.b32",
                "ret"
            ]
        );
    }

    #[test]
    fn counts_by_class() {
        let c = Module::parse(SAMPLE).entry("k").unwrap().counts();
        assert_eq!(c.total, 11);
        assert_eq!(c.global_ld.get(&128), Some(&2));
        assert_eq!((c.shared_ld, c.shared_st), (0, 1));
        assert_eq!((c.generic_ld, c.generic_st), (1, 0));
        assert_eq!(
            (c.barriers, c.shuffles, c.atomics, c.branches),
            (1, 1, 1, 1)
        );
        assert_eq!(c.predicated, 2);
        assert_eq!(c.loops.count, 1);
        assert_eq!(c.loops.with_sync, 0);
    }

    #[test]
    fn widths() {
        let w = |op| match classify(op) {
            InstClass::Global { bits, .. } => bits,
            _ => 0,
        };
        assert_eq!(w("ld.global.nc.v4.f32"), 128);
        assert_eq!(w("ld.global.v2.b64"), 128);
        assert_eq!(w("st.global.b32"), 32);
        assert_eq!(w("ld.global.u8"), 8);
        assert!(matches!(
            classify("ld.shared::cta.b32"),
            InstClass::Shared { load: true }
        ));
        assert!(matches!(classify("bar.warp.sync"), InstClass::Warp));
    }

    #[test]
    fn tensor_core_instructions() {
        let tensor = |op| matches!(classify(op), InstClass::Tensor);
        assert!(tensor(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
        ));
        assert!(tensor(
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"
        ));
        assert!(!tensor("wgmma.fence.sync.aligned"));
        assert!(matches!(
            classify("wgmma.wait_group.sync.aligned"),
            InstClass::Control
        ));
    }
}
