//! Text files as captures keep them: plain, or gzipped to keep the repository small.

use anyhow::{Context, Result};
use std::path::Path;

/// A text file, gunzipped when its name ends in `.gz`.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
            .with_context(|| format!("gunzipping {}", path.display()))?;
        return Ok(text);
    }
    String::from_utf8(bytes).with_context(|| format!("reading {}", path.display()))
}
