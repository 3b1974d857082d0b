//! The check that no kernel reaches shared memory through generic addressing, in the PTX and
//! in the SASS.

use super::super::ptxcheck::Check;
use catalog::Backend;
use regex::Regex;
use sass::counts::{Inst, InstClass};
use sass::{Sass, disasm, ptx};
use std::collections::HashSet;
use std::sync::LazyLock;

/// Shared memory reached through generic addressing, a known rust-cuda miscompile pattern:
/// a shared array's address in a generic `ld`/`st` costs an address-space check per access
/// when it was converted (`cvta.shared`), and reads the wrong memory when it was not. PTX:
/// [`generic_shared_accesses`]; SASS: generic `LD`/`ST`/`ATOM`/`RED` in a kernel that uses
/// shared memory (where the PTX hid the address, the SASS still shows the access).
pub fn shared_through_generic(backend: Backend, module: &ptx::Module, sass: &Sass) -> Check {
    let mut failures = Vec::new();
    let mut users = 0;
    for f in module.entries() {
        for i in generic_shared_accesses(f, &module.shared) {
            failures.push(format!(
                "{}: PTX `{i}` reaches shared memory through a generic address",
                f.name
            ));
        }
        let sf = sass.function(&f.name);
        let uses_shared = uses_shared(f, &module.shared)
            || sass.resources.get(&f.name).is_some_and(|r| r.smem > 0)
            || sf.is_some_and(|sf| {
                sf.insts().any(|i| {
                    matches!(disasm::classify(&i.opcode), InstClass::Shared { .. })
                        || i.opcode.starts_with("ATOMS")
                })
            });
        if !uses_shared {
            continue;
        }
        users += 1;
        let generic: Vec<String> = sf
            .map(|sf| {
                sf.insts()
                    .filter(|i| {
                        matches!(
                            i.opcode.split('.').next(),
                            Some("LD" | "ST" | "ATOM" | "RED")
                        )
                    })
                    .map(ToString::to_string)
                    .collect()
            })
            .unwrap_or_default();
        // Distributed shared memory (sm_90) has no shared-space SASS instruction: ptxas lowers
        // each access to another block's shared memory to a generic LD/ST.
        if generic.len() > distributed_accesses(f) {
            failures.push(format!(
                "{}: uses shared memory and has {} generic SASS access(es): {}",
                f.name,
                generic.len(),
                generic.join("; ")
            ));
        }
    }
    let detail = format!(
        "{users} kernels use shared memory: no generic ld/st/atom from a shared address in the \
         PTX, no LD/ST/ATOM/RED in their SASS but one per distributed shared memory access"
    );
    Check::new(backend, "no generic shared access", failures, detail)
}

/// Whether `f`'s PTX touches shared memory: a shared-space instruction, a `cvta.shared`, or a
/// `.shared` variable named.
fn uses_shared(f: &ptx::Function, shared: &[String]) -> bool {
    f.insts().any(|i| {
        matches!(ptx::classify(&i.opcode), InstClass::Shared { .. })
            || in_space(&i.opcode, "shared")
            || tokens(&i.operands).any(|t| shared.iter().any(|s| s == t))
    })
}

/// The generic loads, stores and atomics of `f` whose address is shared memory's: it names a
/// `.shared` variable, or a register computed from one or from a `cvta.shared` result
/// (followed through moves and address arithmetic to a fixed point; a value loaded from
/// memory is data, not followed; an address `mapa` maps to another block is
/// [`distributed_accesses`]').
pub fn generic_shared_accesses(f: &ptx::Function, shared: &[String]) -> Vec<String> {
    let insts: Vec<&Inst> = f.insts().collect();
    let is_shared =
        |tainted: &HashSet<&str>, t: &str| tainted.contains(t) || shared.iter().any(|s| s == t);
    let tainted = addresses_from(&insts, |i, tainted| {
        !i.opcode.starts_with("mapa")
            && (i.opcode.starts_with("cvta.shared")
                || tokens(sources(&i.operands)).any(|t| is_shared(tainted, t)))
    });
    insts
        .iter()
        .filter(|i| generic_access(&i.opcode))
        .filter(|i| address(&i.operands).is_some_and(|a| tokens(a).any(|t| is_shared(&tainted, t))))
        .map(ToString::to_string)
        .collect()
}

/// The accesses of `f` to another block's shared memory (sm_90 clusters): `ld`/`st` in the
/// `shared::cluster` space, and generic ones through an address `mapa` gave.
fn distributed_accesses(f: &ptx::Function) -> usize {
    let insts: Vec<&Inst> = f.insts().collect();
    let mapped = addresses_from(&insts, |i, tainted| {
        i.opcode.starts_with("mapa") || tokens(sources(&i.operands)).any(|t| tainted.contains(t))
    });
    let explicit = insts
        .iter()
        .filter(|i| is_memory(&i.opcode) && i.opcode.contains(".shared::cluster"))
        .count();
    let generic = insts
        .iter()
        .filter(|i| generic_access(&i.opcode))
        .filter(|i| address(&i.operands).is_some_and(|a| tokens(a).any(|t| mapped.contains(t))))
        .count();
    explicit + generic
}

/// The registers whose value derives from an instruction `from` accepts (given those found
/// so far), followed through moves and address arithmetic to a fixed point; a value loaded
/// from memory is data, not followed.
fn addresses_from<'a>(
    insts: &[&'a Inst],
    from: impl Fn(&Inst, &HashSet<&'a str>) -> bool,
) -> HashSet<&'a str> {
    let mut tainted: HashSet<&str> = HashSet::new();
    loop {
        let before = tainted.len();
        for i in insts {
            if is_memory(&i.opcode) {
                continue;
            }
            let Some(dst) = i
                .operands
                .split_once(',')
                .and_then(|(d, _)| tokens(d).next())
            else {
                continue;
            };
            if !tainted.contains(dst) && from(i, &tainted) {
                tainted.insert(dst);
            }
        }
        if tainted.len() == before {
            break;
        }
    }
    tainted
}

/// The source operands: all but the first (the destination).
fn sources(operands: &str) -> &str {
    operands.split_once(',').map_or("", |(_, s)| s)
}

/// `ld`, `st`, `atom`, `red` and their relatives: instructions whose result is memory's, not
/// an address computed from the operands.
fn is_memory(opcode: &str) -> bool {
    matches!(
        opcode.split('.').next(),
        Some("ld" | "ldu" | "st" | "atom" | "red" | "prefetch" | "cp" | "tex" | "suld" | "sust")
    )
}

/// A load, store or atomic without a state space (the hardware resolves the space per access).
fn generic_access(opcode: &str) -> bool {
    match ptx::classify(opcode) {
        InstClass::Generic { .. } => true,
        InstClass::Atomic => !in_space(opcode, "shared") && !in_space(opcode, "global"),
        _ => false,
    }
}

/// `atom.shared::cta.add.u32` is in space `shared`; `cvta.shared.u64` too.
fn in_space(opcode: &str, space: &str) -> bool {
    opcode
        .split('.')
        .skip(1)
        .any(|p| p == space || p.strip_prefix(space).is_some_and(|r| r.starts_with("::")))
}

/// The memory operand: `%rd3+4` in `ld.f32 %f1, [%rd3+4]`.
fn address(operands: &str) -> Option<&str> {
    let start = operands.find('[')? + 1;
    let end = start + operands[start..].find(']')?;
    Some(&operands[start..end])
}

/// Registers and symbols in an operand list: `%rd3`, `smem`, `anon_$_0`.
fn tokens(s: &str) -> impl Iterator<Item = &str> {
    static TOKEN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[%A-Za-z_$][A-Za-z0-9_$]*").unwrap());
    TOKEN.find_iter(s).map(|m| m.as_str())
}
