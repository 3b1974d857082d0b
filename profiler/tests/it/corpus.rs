//! The diagnosis graded on kernels written outside the lab's catalogue, against truths stated
//! from their mechanisms and timed twins (`gpu/corpus/`): a CUDA C++ program, Triton and CuPy
//! kernels, and PyTorch's and cuBLAS's. Each corpus was captured on the H200 by
//! `gpu/corpus.sh` twice: by plain `ncu --set full` (what anyone's report holds) and with the
//! lab's extra metrics; both must get every kernel right.

use profiler::accuracy::{self, Judged};
use profiler::program;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The corpus's kernels from one capture, judged against its truth file.
fn judge(corpus: &str, capture: &str) -> Vec<Judged> {
    let kernels =
        program::diagnose_all(crate::h200_launches(&format!("corpus/{corpus}-{capture}")));
    let truths =
        std::fs::read_to_string(root().join(format!("gpu/corpus/{corpus}_corpus.truth.csv")))
            .unwrap();
    accuracy::judge(&kernels, &accuracy::read_truths(&truths).unwrap()).unwrap()
}

fn graded(corpus: &str) {
    for capture in ["plain", "metrics"] {
        let judged = judge(corpus, capture);
        let text = accuracy::text(&judged, &format!("{corpus} corpus, {capture} capture"));
        println!("{text}");
        let misses: Vec<String> = judged
            .iter()
            .filter(|j| !j.right)
            .map(|j| format!("{} ({} → {})", j.label, j.expected, j.got))
            .collect();
        assert!(misses.is_empty(), "{corpus}/{capture}: {misses:?}\n{text}");
    }
}

#[test]
fn the_cuda_corpus_gets_every_first_fix() {
    graded("cuda");
}

#[test]
fn the_triton_corpus_gets_every_first_fix() {
    graded("triton");
}

#[test]
fn the_pytorch_corpus_gets_every_first_fix() {
    graded("torch");
}
