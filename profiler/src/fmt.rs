//! Numbers as the reports print them.

/// `16252928` → `16,252,928`; `12.345` → `12.3`; `0.1234` → `0.12`.
pub fn value(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        thousands(x as i64)
    } else if x.abs() >= 1000.0 {
        thousands(x.round() as i64)
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// `16252928` → `16,252,928`.
pub fn thousands(v: i64) -> String {
    let s = v.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0 { format!("-{out}") } else { out }
}

/// `87.5 %`.
pub fn pct(x: f64) -> String {
    format!("{x:.1} %")
}

/// A share (0–1) as a whole percentage: `0.873` → `87 %`.
pub fn share(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_and_thousands() {
        assert_eq!(super::value(16252928.0), "16,252,928");
        assert_eq!(super::value(-1234.6), "-1,235");
        assert_eq!(super::value(12.345), "12.3");
        assert_eq!(super::value(0.1234), "0.12");
        assert_eq!(super::share(0.873), "87 %");
    }
}
