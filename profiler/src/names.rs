//! Kernel names as a person reads them.
//!
//! ncu and nsys report a kernel by its demangled C++ signature:
//! `void at::<unnamed>::cunn_SoftMaxForwardReg<float, float, float,
//! at::<unnamed>::SoftMaxForwardEpilogue, long, 8>(T3 *, const T1 *, T5)`. A table needs the
//! function and the shape of its template arguments, not the return type, the namespaces or the
//! parameter list: `cunn_SoftMaxForwardReg<float, float, float, SoftMaxForwardEpilogue, long,
//! 8>`. Names without C++ decoration (`reduce_v3_f32`, cuBLAS's `nvjet_sm90_tst_…`) pass
//! through unchanged. No name ever comes out blank: what cannot be parsed is shown whole.

/// Anonymous namespaces, as the demanglers spell them. Their angle brackets and parentheses
/// are not template arguments or parameters, so they are taken out before the name is parsed.
const ANONYMOUS: [&str; 2] = ["<unnamed>", "(anonymous namespace)"];

/// Longest short name before its template arguments are cut (with `…`).
pub const SHORT_MAX: usize = 80;

/// The bare function name: no return type, namespaces, template arguments or parameters
/// (`cunn_SoftMaxForwardReg`, `DeviceReduceKernel`, `reduce_v3_f32`).
pub fn function(name: &str) -> String {
    let qualified = qualified(name);
    let last = last_component(&qualified);
    let bare = match top_level_find(last, '<') {
        Some(i) => &last[..i],
        None => last,
    };
    non_blank(bare.trim(), name)
}

/// The name for tables: the function with its template arguments, each argument without its
/// namespaces, cut to [`SHORT_MAX`] characters at an argument boundary.
pub fn short(name: &str) -> String {
    let qualified = qualified(name);
    let last = last_component(&qualified);
    let shown = strip_namespaces(last);
    non_blank(&cut(&shown, SHORT_MAX), name)
}

/// The casts nsys's demangler writes before template values (`<(int)128, (int)2>`).
const CASTS: [&str; 6] = [
    "(int)",
    "(unsigned int)",
    "(long)",
    "(unsigned long)",
    "(bool)",
    "(char)",
];

/// `name` with the return type and the parameter list removed, anonymous namespaces and
/// casts on template values dropped.
fn qualified(name: &str) -> String {
    let mut s = name.trim().to_string();
    for anon in ANONYMOUS {
        s = s.replace(&format!("{anon}::"), "").replace(anon, "");
    }
    for cast in CASTS {
        s = s.replace(cast, "");
    }
    // The parameter list: the last top-level parenthesised group (`(T3 *, const T1 *, T5)`,
    // possibly followed by qualifiers such as `const`).
    if let Some(open) = last_top_level_open_paren(&s) {
        s.truncate(open);
    }
    // The return type: everything before the last top-level space (`void`, `unsigned int`).
    let cut_at = top_level_positions(&s, ' ').last().copied();
    match cut_at {
        Some(i) if !s[i + 1..].trim().is_empty() => s[i + 1..].trim().to_string(),
        _ => s.trim().to_string(),
    }
}

/// The last `::`-separated component outside template arguments.
fn last_component(q: &str) -> &str {
    let mut depth = 0i32;
    let bytes = q.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' | b'(' | b'{' => depth += 1,
            b'>' | b')' | b'}' => depth -= 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => {
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    &q[start..]
}

/// Every `ns::` prefix removed, inside template arguments too (`at::native::FillFunctor<float>`
/// → `FillFunctor<float>`; `Policy<float>::Inner` → `Inner`).
fn strip_namespaces(s: &str) -> String {
    let mut out: Vec<char> = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            // Drop the component just written: an identifier, with its template arguments.
            let mut end = out.len();
            if out.last() == Some(&'>') {
                let mut depth = 0;
                while end > 0 {
                    end -= 1;
                    match out[end] {
                        '>' => depth += 1,
                        '<' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                }
            }
            while end > 0 && is_ident(out[end - 1]) {
                end -= 1;
            }
            out.truncate(end);
            continue;
        }
        out.push(c);
    }
    out.into_iter().collect()
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '~'
}

/// `f<a, b, c>` cut to `max` characters at an argument boundary: `f<a, b, …>`.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let Some(open) = top_level_find(s, '<') else {
        return s.chars().take(max).collect::<String>() + "…";
    };
    let mut kept = s[..=open].to_string();
    let args = &s[open + 1..s.rfind('>').unwrap_or(s.len())];
    let mut first = true;
    for arg in split_top_level(args, ',') {
        let piece = if first {
            arg.trim().to_string()
        } else {
            format!(", {}", arg.trim())
        };
        if kept.chars().count() + piece.chars().count() + 4 > max {
            kept += if first { "…" } else { ", …" };
            return kept + ">";
        }
        kept += &piece;
        first = false;
    }
    kept + ">"
}

/// Byte positions of `c` at nesting depth 0 (outside `<…>` and `(…)`).
fn top_level_positions(s: &str, c: char) -> Vec<usize> {
    let mut depth = 0i32;
    let mut out = Vec::new();
    for (i, ch) in s.char_indices() {
        match ch {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' | ')' | ']' | '}' => depth -= 1,
            _ if ch == c && depth == 0 => out.push(i),
            _ => {}
        }
    }
    out
}

fn top_level_find(s: &str, c: char) -> Option<usize> {
    let mut depth = 0i32;
    for (i, ch) in s.char_indices() {
        if ch == c && depth == 0 {
            return Some(i);
        }
        match ch {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' | ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Where the trailing top-level parameter list opens, if the name ends in one.
fn last_top_level_open_paren(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut open = None;
    for (i, ch) in s.char_indices() {
        match ch {
            '(' if depth == 0 => {
                open = Some(i);
                depth += 1;
            }
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    // Only a group at the top level that is not the whole name.
    open.filter(|&i| i > 0)
}

fn split_top_level(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for i in top_level_positions(s, sep) {
        parts.push(&s[start..i]);
        start = i + sep.len_utf8();
    }
    parts.push(&s[start..]);
    parts
}

fn non_blank(s: &str, original: &str) -> String {
    if s.trim().is_empty() {
        original.trim().to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOFTMAX: &str = "void at::<unnamed>::cunn_SoftMaxForwardReg<float, float, float, \
                           at::<unnamed>::SoftMaxForwardEpilogue, long, 8>(T3 *, const T1 *, T5)";

    #[test]
    fn anonymous_namespaces_do_not_blank_the_name() {
        assert_eq!(function(SOFTMAX), "cunn_SoftMaxForwardReg");
        assert_eq!(
            short(SOFTMAX),
            "cunn_SoftMaxForwardReg<float, float, float, SoftMaxForwardEpilogue, long, 8>"
        );
        let anon = "void (anonymous namespace)::softmax_warp_forward<float, 10>(float *, int)";
        assert_eq!(function(anon), "softmax_warp_forward");
        assert_eq!(short(anon), "softmax_warp_forward<float, 10>");
    }

    #[test]
    fn templates_lose_their_namespaces_and_long_ones_are_cut() {
        let fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, \
                    std::array<char *, 1>>(int, T2, T3)";
        assert_eq!(function(fill), "vectorized_elementwise_kernel");
        assert_eq!(
            short(fill),
            "vectorized_elementwise_kernel<4, FillFunctor<float>, array<char *, 1>>"
        );
        let long = "void cub::CUB_300000_SM_900::DeviceReduceKernel<cub::CUB_300000_SM_900::\
                    DeviceReducePolicy<float, unsigned int, cuda::std::__4::plus<void>>::Policy1000, \
                    const float *, unsigned int, cuda::std::__4::plus<void>, float, float, \
                    cuda::std::__4::identity>(T2, T5 *, T3, cub::CUB_300000_SM_900::GridEvenShare<T3>, T4, T6)";
        assert_eq!(function(long), "DeviceReduceKernel");
        let s = short(long);
        assert!(s.chars().count() <= SHORT_MAX, "{s}");
        assert!(
            s.starts_with("DeviceReduceKernel<Policy1000, const float *"),
            "{s}"
        );
        assert!(s.ends_with(", …>"), "{s}");
    }

    #[test]
    fn nsys_casts_on_template_values_go() {
        let n = "void at::native::<unnamed>::cunn_SoftMaxForwardReg<float, float, float, \
                 at::native::<unnamed>::SoftMaxForwardEpilogue, long, (int)4>(T3 *, const T1 *, T5)";
        assert_eq!(
            short(n),
            "cunn_SoftMaxForwardReg<float, float, float, SoftMaxForwardEpilogue, long, 4>"
        );
    }

    #[test]
    fn plain_names_pass_through() {
        for n in [
            "reduce_v3_f32",
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
            "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel_trt",
        ] {
            assert_eq!(function(n), n);
        }
        assert_eq!(short("reduce_v3_f32"), "reduce_v3_f32");
        assert_eq!(function("void bump(float *, int)"), "bump");
        assert_eq!(function("  "), "");
    }
}
