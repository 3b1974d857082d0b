//! The one JSON document `profile --format json` prints, whichever way the launches came:
//! the lab's kernels profiled or read back (`--from`), a report made elsewhere (`--report`),
//! or any program (`-- PROGRAM`). Its schema is `docs/json-schema.md`'s "profile".

use crate::diagnose::Diagnosis;
use crate::ncu::{Launch, Value};
use crate::source::KernelSource;
use std::collections::BTreeMap;

/// The document's version: a reader refuses a newer one.
pub const SCHEMA_VERSION: u32 = 1;

/// Every profiled launch, in the order ncu profiled them.
#[derive(Debug, serde::Serialize)]
pub struct Document<'a> {
    pub schema_version: u32,
    /// The program that wrote it (`xtask profile`).
    pub tool: &'a str,
    /// How the launches were captured (`ncu --set full … -- python3 train.py`, `read back
    /// from …`).
    pub how: &'a str,
    pub kernels: Vec<Entry<'a>>,
}

/// One profiled launch: who it is, what the diagnosis says, and every metric behind it.
#[derive(Debug, serde::Serialize)]
pub struct Entry<'a> {
    /// ncu's result ID: the launch's place among those profiled.
    pub id: u64,
    /// What the report calls it: `reduce_v3 [llvm]` for the lab's kernels, the short name for
    /// any other.
    pub label: &'a str,
    /// The name ncu reported (demangled).
    pub name: &'a str,
    /// The name for tables (`profiler::names::short`).
    pub short: String,
    /// Whether the lab's run checked this launch's result (absent for other programs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    pub diagnosis: &'a Diagnosis,
    /// Hot source lines, with `--source`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<&'a KernelSource>,
    pub metrics: &'a BTreeMap<String, Value>,
    /// Each metric's unit after normalisation (`ns`, `byte`, `%`).
    pub units: &'a BTreeMap<String, String>,
}

impl<'a> Entry<'a> {
    /// `launch` under `label`, with its diagnosis.
    pub fn new(launch: &'a Launch, label: &'a str, diagnosis: &'a Diagnosis) -> Entry<'a> {
        Entry {
            id: launch.id,
            label,
            name: &launch.kernel,
            short: crate::names::short(&launch.kernel),
            verified: None,
            diagnosis,
            source: None,
            metrics: &launch.metrics,
            units: &launch.units,
        }
    }
}

impl<'a> Document<'a> {
    pub fn new(how: &'a str, kernels: Vec<Entry<'a>>) -> Document<'a> {
        Document {
            schema_version: SCHEMA_VERSION,
            tool: "xtask profile",
            how,
            kernels,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a profile document serializes")
    }
}

/// What a grader reads back from a document: each kernel's name, label and verdicts.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct ReadKernel {
    pub label: String,
    pub name: String,
    pub diagnosis: ReadDiagnosis,
}

#[derive(Clone, Debug, serde::Deserialize)]
pub struct ReadDiagnosis {
    pub headline: String,
    pub verdict: Option<String>,
    pub findings: Vec<ReadFinding>,
}

#[derive(Clone, Debug, serde::Deserialize)]
pub struct ReadFinding {
    pub rule: String,
    pub kind: String,
    pub verdict: String,
}

#[derive(serde::Deserialize)]
struct ReadDocument {
    schema_version: u32,
    kernels: Vec<ReadKernel>,
}

/// The kernels of a document `profile --format json` printed.
pub fn read(json: &str) -> anyhow::Result<Vec<ReadKernel>> {
    let doc: ReadDocument = serde_json::from_str(json).map_err(|e| {
        anyhow::anyhow!("not a `profile --format json` document (schema_version 1): {e}")
    })?;
    if doc.schema_version > SCHEMA_VERSION {
        anyhow::bail!(
            "a profile document of schema_version {} (this build reads {SCHEMA_VERSION}): \
             update the lab",
            doc.schema_version
        );
    }
    Ok(doc.kernels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_back_the_verdicts_it_printed() {
        let mut launch = Launch {
            id: 7,
            kernel: "void k<float>(float *)".into(),
            ..Launch::default()
        };
        launch
            .metrics
            .insert(crate::ncu::metrics::SM_PCT.into(), Value::Num(85.0));
        launch
            .metrics
            .insert(crate::ncu::metrics::MEM_PCT.into(), Value::Num(10.0));
        let d = crate::diagnose::diagnose(&launch);
        let doc = Document::new("test", vec![Entry::new(&launch, "k", &d)]);
        let back = read(&doc.to_json()).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].name, "void k<float>(float *)");
        assert_eq!(back[0].diagnosis.headline, d.headline);
        assert_eq!(back[0].diagnosis.findings[0].kind, "bound");
        let newer = doc
            .to_json()
            .replace("\"schema_version\": 1", "\"schema_version\": 9");
        assert!(format!("{:#}", read(&newer).unwrap_err()).contains("update the lab"));
        assert!(read("[]").is_err());
    }
}
