//! Parser for `ncu --import REPORT --page raw --csv`, the page every reader here starts from.
//!
//! The raw page is one CSV table: a header row of identifier columns (`"ID"`, `"Process ID"`,
//! `"Process Name"`, `"Host Name"`, `"Kernel Name"`, `"Context"`, `"Stream"`, `"Block Size"`,
//! `"Grid Size"`, `"Device"`, `"CC"`, …) followed by one column per metric, named by its full
//! metric name (`dram__throughput.avg.pct_of_peak_sustained_elapsed`); then a units row (empty
//! identifier cells, a unit per metric: `%`, `nsecond`, `byte`, …); then one row per profiled
//! kernel launch. Numbers may carry thousands separators (`"1,638,400"`); absent values read
//! `n/a`. Lines ncu prints around the table (`==PROF==`, `==WARNING==`) are skipped.
//!
//! Units are normalised as the values are read: times to nanoseconds (`ns`), byte counts to
//! bytes, so the rest of the code never sees `usecond` or `Kbyte`.

use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;

/// One metric value: a number (units normalised) or text (`CachePreferNone`, `n/a`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Value {
    Num(f64),
    Text(String),
}

/// One profiled kernel launch: its identifiers and every metric ncu reported for it.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Launch {
    /// ncu's result ID within the report (0, 1, …: launch order).
    pub id: u64,
    /// `Kernel Name` as imported (`--print-kernel-base function`: `reduce_v3_f32`).
    pub kernel: String,
    /// `(256, 1, 1)`.
    pub block: String,
    /// `(65536, 1, 1)`.
    pub grid: String,
    /// `Device` and `CC` columns, as ncu wrote them.
    pub device: String,
    pub cc: String,
    pub metrics: BTreeMap<String, Value>,
    /// The unit of each metric after normalisation (`ns`, `byte`, `%`, `inst`, …).
    pub units: BTreeMap<String, String>,
}

impl Launch {
    /// A numeric metric, if ncu reported it as a number.
    pub fn num(&self, name: &str) -> Option<f64> {
        match self.metrics.get(name)? {
            Value::Num(x) => Some(*x),
            Value::Text(_) => None,
        }
    }
}

/// The diagnosis's metrics that plain `--set full` does not collect by these names, each
/// with the equivalent it does collect and how to get one from the other: a report made by
/// plain ncu (another machine, the GUI) still gets every rule its sections can feed.
const EQUIVALENTS: [(&str, &str, f64); 9] = [
    (
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        1.0,
    ),
    (
        "smsp__average_thread_inst_executed_pred_on_per_inst_executed.ratio",
        "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
        1.0,
    ),
    (
        "smsp__inst_executed_op_shared_ld.sum",
        "smsp__sass_inst_executed_op_shared_ld.sum",
        1.0,
    ),
    (
        "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
        32.0,
    ),
    (
        "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
        32.0,
    ),
    ("sm__ctas_launched.sum", "launch__grid_size", 1.0),
    (
        "smsp__inst_executed_op_shared_ld_pred_on_any.sum",
        "smsp__sass_inst_executed_op_shared_ld.sum",
        1.0,
    ),
    (
        "smsp__inst_executed_op_shared_st_pred_on_any.sum",
        "smsp__sass_inst_executed_op_shared_st.sum",
        1.0,
    ),
    (
        "lts__t_requests_op_red.sum",
        "lts__t_requests_srcunit_tex_op_red.sum",
        1.0,
    ),
];

/// The diagnosis's metrics that plain `--set full` records only as parts: each name with the
/// product of two metrics it does record (a rate times the cycles it is a rate over, a ratio
/// times its denominator).
const PRODUCTS: [(&str, &str, &str); 4] = [
    (
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed",
        "smsp__cycles_elapsed.avg",
    ),
    (
        "smsp__thread_inst_executed_pred_on.sum",
        "smsp__inst_executed.sum",
        "smsp__average_thread_inst_executed_pred_on_per_inst_executed.ratio",
    ),
    (
        "sm__sass_data_bytes_mem_global_op_ld.sum",
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    ),
    (
        "sm__sass_data_bytes_mem_global_op_st.sum",
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    ),
];

/// And those it records only as a sum of parts: the atomics that return a value, ALU
/// operations and compare-and-swap, as the L2 counts the SMs' requests.
const SUMS: [(&str, [&str; 2]); 1] = [(
    "lts__t_requests_op_atom.sum",
    [
        "lts__t_requests_srcunit_tex_op_atom_dot_alu.sum",
        "lts__t_requests_srcunit_tex_op_atom_dot_cas.sum",
    ],
)];

/// Fills in [`EQUIVALENTS`], [`PRODUCTS`] and [`SUMS`] where the page has the parts but not
/// the name.
fn complete(p: &mut Launch) {
    let add = |p: &mut Launch, name: &str, value: Option<f64>, unit: String| {
        if p.metrics.contains_key(name) {
            return;
        }
        if let Some(x) = value {
            p.metrics.insert(name.to_string(), Value::Num(x));
            p.units.insert(name.to_string(), unit);
        }
    };
    for (name, from, scale) in EQUIVALENTS {
        let unit = p.units.get(from).cloned().unwrap_or_default();
        add(p, name, p.num(from).map(|x| x * scale), unit);
    }
    for (name, a, b) in PRODUCTS {
        let unit = p.units.get(b).cloned().unwrap_or_default();
        add(p, name, p.num(a).zip(p.num(b)).map(|(a, b)| a * b), unit);
    }
    for (name, parts) in SUMS {
        let unit = p.units.get(parts[0]).cloned().unwrap_or_default();
        let total = parts.iter().map(|q| p.num(q)).sum::<Option<f64>>();
        add(p, name, total, unit);
    }
}

/// A column is a metric when its name has ncu's `unit__counter` shape; the others identify
/// the launch.
fn is_metric(header: &str) -> bool {
    header.contains("__")
}

/// Parses a raw page. An empty table (ncu profiled nothing) is an empty list; text that is
/// not a raw page at all is an error.
pub fn parse_raw(text: &str) -> Result<Vec<Launch>> {
    // Skip anything before the header row (ncu's own messages).
    let Some(start) = text
        .lines()
        .position(|l| l.starts_with("\"ID\"") || l.starts_with("ID,"))
    else {
        if text
            .lines()
            .all(|l| l.trim().is_empty() || l.starts_with("=="))
        {
            return Ok(Vec::new());
        }
        bail!("not an ncu raw CSV page: no header row starting with \"ID\"");
    };
    let body: String = text
        .lines()
        .skip(start)
        .filter(|l| !l.starts_with("=="))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(body.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .context("reading the raw page's header row")?
        .iter()
        .map(str::to_string)
        .collect();
    let col = |name: &str| headers.iter().position(|h| h == name);
    let id_col = col("ID").context("the raw page has no ID column")?;
    let kernel_col = col("Kernel Name").context("the raw page has no Kernel Name column")?;
    let (block_col, grid_col, device_col, cc_col) = (
        col("Block Size"),
        col("Grid Size"),
        col("Device"),
        col("CC"),
    );

    let mut units: Vec<String> = vec![String::new(); headers.len()];
    let mut out = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("reading row {} of the raw page", i + 2))?;
        let cell = |c: Option<usize>| {
            c.and_then(|c| record.get(c))
                .unwrap_or_default()
                .to_string()
        };
        let id = cell(Some(id_col));
        if id.trim().is_empty() {
            // The units row.
            units = (0..headers.len())
                .map(|c| record.get(c).unwrap_or_default().to_string())
                .collect();
            continue;
        }
        let mut p = Launch {
            id: parse_number(&id)
                .with_context(|| format!("row {}: ID '{id}' is not a number", i + 2))?
                as u64,
            kernel: cell(Some(kernel_col)),
            block: cell(block_col),
            grid: cell(grid_col),
            device: cell(device_col),
            cc: cell(cc_col),
            ..Launch::default()
        };
        for (c, name) in headers.iter().enumerate() {
            if !is_metric(name) {
                continue;
            }
            let raw = record.get(c).unwrap_or_default();
            let (value, unit) = normalise(raw, units.get(c).map(String::as_str).unwrap_or(""));
            p.metrics.insert(name.clone(), value);
            p.units.insert(name.clone(), unit);
        }
        complete(&mut p);
        out.push(p);
    }
    Ok(out)
}

/// `1,638,400` → 1638400; `12.5` → 12.5; anything else → None.
pub fn parse_number(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    let digits_and_commas = t.trim_start_matches(['-', '+']);
    let cleaned: String =
        if digits_and_commas.split('.').next().is_some_and(|int| {
            int.contains(',') && int.chars().all(|c| c.is_ascii_digit() || c == ',')
        }) {
            t.replace(',', "")
        } else {
            t.to_string()
        };
    cleaned.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// A value and its unit, scaled to the unit the rest of the code expects.
fn normalise(raw: &str, unit: &str) -> (Value, String) {
    let Some(x) = parse_number(raw) else {
        return (Value::Text(raw.trim().to_string()), unit.to_string());
    };
    let (scale, unit) = match unit {
        "nsecond" | "ns" => (1.0, "ns"),
        "usecond" | "us" => (1e3, "ns"),
        "msecond" | "ms" => (1e6, "ns"),
        "second" | "s" => (1e9, "ns"),
        "byte" => (1.0, "byte"),
        "Kbyte" | "KB" => (1e3, "byte"),
        "Mbyte" | "MB" => (1e6, "byte"),
        "Gbyte" | "GB" => (1e9, "byte"),
        "Kibyte" | "KiB" => (1024.0, "byte"),
        "Mibyte" | "MiB" => (1024.0 * 1024.0, "byte"),
        other => (1.0, other),
    };
    (Value::Num(x * scale), unit.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_with_separators_and_text() {
        assert_eq!(parse_number("1,638,400"), Some(1638400.0));
        assert_eq!(parse_number("12.50"), Some(12.5));
        assert_eq!(parse_number("-3"), Some(-3.0));
        assert_eq!(parse_number("n/a"), None);
        assert_eq!(parse_number("(256, 1, 1)"), None);
        assert_eq!(parse_number(""), None);
    }

    #[test]
    fn units_are_normalised() {
        assert_eq!(
            normalise("1.5", "usecond"),
            (Value::Num(1500.0), "ns".into())
        );
        assert_eq!(normalise("2", "Kbyte"), (Value::Num(2000.0), "byte".into()));
        assert_eq!(normalise("7", "%"), (Value::Num(7.0), "%".into()));
        assert_eq!(
            normalise("CachePreferNone", ""),
            (Value::Text("CachePreferNone".into()), "".into())
        );
    }
}
