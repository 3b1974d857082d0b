//! The row-wise family's references, in f64 from the inputs' exact values, with PyTorch's
//! definitions and its special values: softmax `exp(x − max) / Σ exp(x − max)` (a row of all
//! −inf, or one holding a NaN or a +inf, is NaN), RMSNorm `x / sqrt(mean(x²) + eps) · w`,
//! LayerNorm `(x − mean) / sqrt(var + eps) · w + b` (biased variance). Rows are split over the
//! machine's cores (the bench's largest matrices hold 2^27 elements).

use catalog::rows::Op;

/// `op` over each row of the row-major `rows × cols` matrix `x`, with weights `w` and biases
/// `b` (`cols` each, where `op` reads them), in f64.
pub fn reference(op: Op, x: &[f32], (w, b): (&[f32], &[f32]), cols: usize, eps: f32) -> Vec<f64> {
    assert!(
        cols > 0 && x.len().is_multiple_of(cols),
        "{} is not whole rows of {cols}",
        x.len()
    );
    let weight = |v: &[f32], j: usize, default: f64| v.get(j).map_or(default, |&v| v as f64);
    let mut out = vec![0f64; x.len()];
    let rows = x.len() / cols;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(rows.max(1));
    let per = rows.div_ceil(threads) * cols;
    std::thread::scope(|scope| {
        for (xs, ys) in x.chunks(per).zip(out.chunks_mut(per)) {
            scope.spawn(move || {
                for (row, y) in xs.chunks(cols).zip(ys.chunks_mut(cols)) {
                    match op {
                        Op::Softmax => softmax(row, y),
                        Op::RmsNorm => {
                            let ms = row.iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>()
                                / cols as f64;
                            let rstd = 1.0 / (ms + eps as f64).sqrt();
                            for (j, (o, &v)) in y.iter_mut().zip(row).enumerate() {
                                *o = v as f64 * rstd * weight(w, j, 1.0);
                            }
                        }
                        Op::LayerNorm => {
                            let mean = row.iter().map(|&v| v as f64).sum::<f64>() / cols as f64;
                            let var = row
                                .iter()
                                .map(|&v| (v as f64 - mean) * (v as f64 - mean))
                                .sum::<f64>()
                                / cols as f64;
                            let rstd = 1.0 / (var + eps as f64).sqrt();
                            for (j, (o, &v)) in y.iter_mut().zip(row).enumerate() {
                                *o = (v as f64 - mean) * rstd * weight(w, j, 1.0)
                                    + weight(b, j, 0.0);
                            }
                        }
                    }
                }
            });
        }
    });
    out
}

/// One row's softmax, the way PyTorch computes it: the max (NaN ignored, as `fmax`), then
/// `exp(x − max)` over their sum, so NaN and infinities give what PyTorch's give.
fn softmax(row: &[f32], y: &mut [f64]) {
    let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
    let mut sum = 0.0;
    for (o, &v) in y.iter_mut().zip(row) {
        *o = (v as f64 - max).exp();
        sum += *o;
    }
    for o in y.iter_mut() {
        *o /= sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(op: Op, x: &[f32], w: &[f32], b: &[f32]) -> Vec<f64> {
        reference(op, x, (w, b), x.len(), 1e-5)
    }

    #[test]
    fn softmax_sums_to_one_and_does_not_overflow() {
        let y = one(Op::Softmax, &[1.0, 2.0, 3.0], &[], &[]);
        let e: Vec<f64> = [1f64, 2.0, 3.0].iter().map(|v| (v - 3.0).exp()).collect();
        let s: f64 = e.iter().sum();
        for (g, w) in y.iter().zip(&e) {
            assert!((g - w / s).abs() < 1e-15);
        }
        let huge = one(Op::Softmax, &[3e38, 3e38, -3e38], &[], &[]);
        assert_eq!(huge, [0.5, 0.5, 0.0]);
    }

    #[test]
    fn softmax_special_values_follow_pytorch() {
        let inf = f32::INFINITY;
        assert!(
            one(Op::Softmax, &[-inf, -inf], &[], &[])
                .iter()
                .all(|v| v.is_nan())
        );
        assert_eq!(one(Op::Softmax, &[-inf, 0.0], &[], &[]), [0.0, 1.0]);
        assert!(
            one(Op::Softmax, &[f32::NAN, 0.0], &[], &[])
                .iter()
                .all(|v| v.is_nan())
        );
        assert!(
            one(Op::Softmax, &[inf, 0.0], &[], &[])
                .iter()
                .all(|v| v.is_nan())
        );
    }

    #[test]
    fn norms_match_their_definitions() {
        let x = [1.0f32, -2.0, 3.0, 4.0];
        let (w, b) = ([0.5f32, 1.0, 1.5, 2.0], [0.1f32, 0.2, 0.3, 0.4]);
        let rms = one(Op::RmsNorm, &x, &w, &[]);
        let r = 1.0 / ((1.0 + 4.0 + 9.0 + 16.0) / 4.0 + 1e-5f32 as f64).sqrt();
        assert!((rms[3] - 4.0 * r * 2.0).abs() < 1e-12);
        let ln = one(Op::LayerNorm, &x, &w, &b);
        let mean = 1.5;
        let var = ((1.0 - mean) * (1.0 - mean) + 3.5 * 3.5 + 1.5 * 1.5 + 2.5 * 2.5) / 4.0;
        let want = (-2.0 - mean) / (var + 1e-5f32 as f64).sqrt() * 1.0 + 0.2f32 as f64;
        assert!((ln[1] - want).abs() < 1e-12);
        // Each row on its own: two equal rows give equal outputs.
        let two = reference(Op::LayerNorm, &[x, x].concat(), (&w, &b), 4, 1e-5);
        assert_eq!(two[..4], two[4..]);
    }
}
