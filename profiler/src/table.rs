//! Fixed-width text tables, as every report here prints them.

/// Fixed-width text: first column left-aligned, the others right-aligned.
pub fn render(headers: &[String], rows: &[Vec<String>]) -> String {
    render_aligned(headers, rows, &[])
}

/// [`render`], with the columns `left` names left-aligned too (text, not numbers).
pub fn render_aligned(headers: &[String], rows: &[Vec<String>], left: &[usize]) -> String {
    let cols = headers.len();
    let width = |c: usize| {
        rows.iter()
            .filter_map(|r| r.get(c))
            .chain(std::iter::once(&headers[c]))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..cols).map(width).collect();
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (c, w) in widths.iter().enumerate() {
            let cell = cells.get(c).map(String::as_str).unwrap_or("");
            let pad = w.saturating_sub(cell.chars().count());
            if c > 0 {
                s += "  ";
            }
            if c == 0 || left.contains(&c) {
                s += cell;
                s += &" ".repeat(pad);
            } else {
                s += &" ".repeat(pad);
                s += cell;
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(headers);
    out += &line(
        &widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<String>>(),
    );
    for r in rows {
        out += &line(r);
    }
    out
}
