//! Sizes on the command line and in tables: `2^28` or `268435456` in, `2^28` out.

/// The default reduction size: 2^28 elements (1 GiB of f32, far past the H200's 60 MB L2).
pub const DEFAULT: u64 = 1 << 28;
/// `--sweep`: every power of two from 2^10 (launch overhead dominates) to 2^30 (4 GiB).
pub const SWEEP: std::ops::RangeInclusive<u32> = 10..=30;
/// The transposes' default matrix edges (square, f32).
pub const TRANSPOSE_DEFAULT: [u64; 2] = [4096, 8192];

/// Parses `2^k`, `1<<k` or a plain integer (underscores allowed): the element count, ≥ 1.
pub fn parse(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let pow = t
        .strip_prefix("2^")
        .or_else(|| t.strip_prefix("1<<"))
        .map(str::trim);
    let n = match pow {
        Some(k) => {
            let k: u32 = k
                .parse()
                .map_err(|_| format!("exponent in '{s}' is not a whole number"))?;
            1u64.checked_shl(k)
                .filter(|_| k < 63)
                .ok_or_else(|| format!("'{s}' is too large (at most 2^62)"))?
        }
        None => t
            .parse()
            .map_err(|_| format!("size '{s}' is not 2^k or a whole number"))?,
    };
    if n == 0 {
        return Err(format!("size '{s}' must be at least 1"));
    }
    Ok(n)
}

/// `2^28` for powers of two from 2^4 up, the plain number otherwise (`1000`, `12`).
pub fn label(n: u64) -> String {
    if n.is_power_of_two() && n >= 16 {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

/// `4096x4096` (rows × cols).
pub fn shape_label(rows: u64, cols: u64) -> String {
    format!("{rows}x{cols}")
}

/// Parses `ROWSxCOLS` (each `2^k` or a whole number, both at least 1 and within u32): a
/// matrix shape.
pub fn parse_shape(s: &str) -> Result<(u32, u32), String> {
    let (r, c) = s
        .trim()
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("shape '{s}' is not ROWSxCOLS (e.g. 4096x32768)"))?;
    let side = |v: &str| -> Result<u32, String> {
        let n = parse(v)?;
        u32::try_from(n).map_err(|_| format!("shape '{s}': {n} does not fit the kernels' u32"))
    };
    Ok((side(r)?, side(c)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_powers_and_integers() {
        assert_eq!(parse("2^28"), Ok(1 << 28));
        assert_eq!(parse(" 2^10 "), Ok(1024));
        assert_eq!(parse("1<<20"), Ok(1 << 20));
        assert_eq!(parse("268435456"), Ok(1 << 28));
        assert_eq!(parse("268_435_456"), Ok(1 << 28));
        assert_eq!(parse("1000"), Ok(1000));
        assert_eq!(parse("2^0"), Ok(1));
        assert_eq!(parse("2^62"), Ok(1 << 62));
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "", "0", "2^", "2^x", "2^63", "2^-1", "abc", "-5", "1.5", "2**28",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be rejected");
        }
        assert!(parse("2^63").unwrap_err().contains("too large"));
    }

    #[test]
    fn labels_round_trip() {
        for k in 4..=40 {
            assert_eq!(parse(&label(1 << k)), Ok(1 << k));
        }
        assert_eq!(label(1 << 28), "2^28");
        assert_eq!(label(1000), "1000");
        assert_eq!(label(8), "8");
        assert_eq!(shape_label(4096, 8192), "4096x8192");
    }

    #[test]
    fn shapes_parse_and_refuse_nonsense() {
        assert_eq!(parse_shape("65536x512"), Ok((65536, 512)));
        assert_eq!(parse_shape(" 2^8X2^18 "), Ok((256, 262144)));
        for bad in ["4096", "0x8", "8x0", "x8", "8x", "2^33x8", "axb"] {
            assert!(parse_shape(bad).is_err(), "{bad:?} should be rejected");
        }
        assert!(parse_shape("2^33x8").unwrap_err().contains("u32"));
    }

    #[test]
    fn sweep_covers_the_issue_sizes() {
        let sizes: Vec<u64> = SWEEP.map(|k| 1u64 << k).collect();
        assert_eq!(sizes.first(), Some(&1024));
        assert_eq!(sizes.last(), Some(&(1 << 30)));
        assert_eq!(sizes.len(), 21);
        assert!(sizes.contains(&DEFAULT));
    }
}
