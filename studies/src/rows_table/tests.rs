use super::*;

#[test]
fn the_lab_and_the_peers_meet_in_one_case() {
    let lab = r#"{"rows": [
        {"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32", "implementation": "rust-llvm",
         "schedule": "warp", "chosen": true, "median_us": 1.0, "gbps": 3900.0, "x_copy": 0.95, "cache": "hot"},
        {"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32", "implementation": "rust-nvvm",
         "schedule": "warp", "chosen": true, "median_us": 1.0, "gbps": 3800.0, "x_copy": 0.93, "cache": "hot"},
        {"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32", "implementation": "rust-llvm",
         "schedule": "block", "chosen": false, "median_us": 2.0, "gbps": 1000.0, "x_copy": 0.25, "cache": "hot"}
    ]}"#;
    let peers = r#"{"rows": [
        {"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32", "implementation": "copy",
         "median_us": 1.0, "gbps": 4100.0, "x_copy": 1.0, "ok": true},
        {"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32", "implementation": "compile",
         "median_us": 1.0, "gbps": 4000.0, "x_copy": 0.97, "ok": true},
        {"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32", "implementation": "liger",
         "median_us": null, "gbps": null, "x_copy": null, "ok": false}
    ]}"#;
    let cases = build(lab, Some(peers), None).unwrap();
    assert_eq!(cases.len(), 1);
    let c = &cases[0];
    // The chosen schedule only, the slower compiler, the best peer that ran.
    assert_eq!(c.cells["rust-llvm"].x_copy, 0.95);
    assert_eq!(c.rust_x_copy(), Some(0.93));
    assert_eq!(c.best_peer, Some(("compile".into(), 0.97)));
    let t = text(&cases);
    assert!(
        t.contains("Rust at >= 0.90 x copy: 1 of 1; at least as fast as the best peer: 0 of 1"),
        "{t}"
    );
    assert_eq!(charts(&cases)[0].series.len(), 3);
    assert!(t.contains("the schedule the catalogue chooses"), "{t}");
    assert!(build("[]", None, None).is_err());
    // Another schedule's rows, chosen or not, where asked; one the bench did not run: none.
    let block = build(lab, Some(peers), Some("block")).unwrap();
    assert_eq!(block[0].cells["rust-llvm"].x_copy, 0.25);
    assert!(!block[0].cells.contains_key("rust-nvvm"));
    assert!(text(&block).contains("Rust: the slower of the two compilers, the block schedule"));
    let e = build(lab, None, Some("streamed")).unwrap_err().to_string();
    assert!(
        e.contains("no verified row of the streamed schedule"),
        "{e}"
    );
}

/// A lab rows file of one chosen rust-llvm row (softmax 8 x 512 f32, 0.95 x copy).
const ONE_RUST_ROW: &str = r#"{"rows": [
    {"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32", "implementation": "rust-llvm",
     "schedule": "warp", "chosen": true, "median_us": 1.0, "gbps": 3900.0, "x_copy": 0.95, "cache": "hot"}
]}"#;

#[test]
fn the_peer_verdict_takes_the_rust_kernels_timed_in_the_peers_run() {
    let peers = |rust: f64| {
        format!(
            r#"{{"rows": [
            {{"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32", "implementation": "compile",
             "median_us": 1.0, "gbps": 3950.0, "x_copy": 0.96, "ok": true}},
            {{"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32", "implementation": "rust-llvm",
             "median_us": 1.0, "gbps": 3990.0, "x_copy": {rust}, "ok": true}}
        ]}}"#
        )
    };
    // The lab's own run puts Rust behind (0.95 < 0.96); the peers' run, one method, ahead.
    let cases = build(ONE_RUST_ROW, Some(&peers(0.97)), None).unwrap();
    let c = &cases[0];
    assert_eq!(c.cells["rust-llvm"].x_copy, 0.95, "the lab's cell is kept");
    assert_eq!(c.rust_in_rotation(), Some(0.97));
    assert_eq!(c.rust_at_least_best_peer(), Some(true));
    assert!((c.rust_over_best_peer.unwrap() - (0.97 / 0.96 - 1.0)).abs() < 1e-12);
    let t = text(&cases);
    assert!(t.contains("rust in peers' run"), "{t}");
    assert!(t.contains("yes +1.0 %"), "{t}");
    assert!(!t.contains("widest gap behind"), "{t}");
    assert!(
        t.contains("at least as fast as the best peer: 1 of 1"),
        "{t}"
    );
    let series = &charts(&cases)[0].series;
    assert_eq!(series.last().unwrap().name, "rust in peers' run");
    assert_eq!(series.last().unwrap().values, vec![Some(0.97)]);
    // And behind where the peers' run says so.
    let cases = build(ONE_RUST_ROW, Some(&peers(0.95)), None).unwrap();
    assert_eq!(cases[0].rust_at_least_best_peer(), Some(false));
    let t = text(&cases);
    assert!(t.contains("NO -1.0 %"), "{t}");
    assert!(
        t.contains("the widest gap behind: 1.0 %, softmax 8 x 512 f32"),
        "{t}"
    );
    // A peers file whose Rust kernels were another schedule's (peers.py --lab-schedule)
    // goes only with the table of that schedule.
    let streamed = peers(0.97).replacen(
        r#"{"rows""#,
        r#"{"config": {"lab_schedule": "streamed"}, "rows""#,
        1,
    );
    let e = build(ONE_RUST_ROW, Some(&streamed), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("timed the streamed schedule's Rust kernels, the table asks for the chosen"),
        "{e}"
    );
    let e = build(ONE_RUST_ROW, Some(&peers(0.97)), Some("warp"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("pass --schedule as peers.py's --lab-schedule was"),
        "{e}"
    );
    // Without the peers' run of Rust, the lab's own cell decides.
    let alone = build(ONE_RUST_ROW, None, None).unwrap();
    assert_eq!(alone[0].rust_at_least_best_peer(), None);
    assert_eq!(alone[0].rust_over_best_peer, None);
}

#[test]
fn a_peers_run_with_the_l2_clean_is_named_in_the_table() {
    let peers = |config: &str| {
        format!(
            r#"{{{config} "rows": [
            {{"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32", "implementation": "compile",
             "median_us": 1.0, "gbps": 3950.0, "x_copy": 0.96, "ok": true}}
        ]}}"#
        )
    };
    let clean = build(
        ONE_RUST_ROW,
        Some(&peers(r#""config": {"l2": "clean"},"#)),
        None,
    )
    .unwrap();
    assert_eq!(clean[0].peers_l2.as_deref(), Some("clean"));
    assert!(text(&clean).contains("L2 clean"), "{}", text(&clean));
    // A file from before `--l2` was timed dirty, as one that says so.
    for config in [
        "",
        r#""config": {"reps": 30},"#,
        r#""config": {"l2": "dirty"},"#,
    ] {
        let dirty = build(ONE_RUST_ROW, Some(&peers(config)), None).unwrap();
        assert_eq!(dirty[0].peers_l2.as_deref(), Some("dirty"), "{config}");
        assert!(!text(&dirty).contains("L2 clean"));
    }
    assert_eq!(build(ONE_RUST_ROW, None, None).unwrap()[0].peers_l2, None);
}

#[test]
fn the_verdict_says_whether_it_lies_outside_the_rounds_spread() {
    // Rust (the slower compiler in the rotation) and compile, each with its rounds' p10 and
    // p90 times.
    let peers = |rust_llvm: (f64, f64, f64), rust_nvvm: (f64, f64, f64)| {
        let row = |imp: &str, (median, p10, p90): (f64, f64, f64)| {
            format!(
                r#"{{"op": "softmax", "rows": 8, "cols": 512, "dtype": "f32",
                 "implementation": "{imp}", "median_us": {median}, "p10_us": {p10},
                 "p90_us": {p90}, "gbps": {}, "x_copy": {}, "ok": true}}"#,
                4000.0 / median,
                1.0 / median
            )
        };
        format!(
            r#"{{"rows": [{}, {}, {}]}}"#,
            row("compile", (1.00, 0.99, 1.01)),
            row("rust-llvm", rust_llvm),
            row("rust-nvvm", rust_nvvm)
        )
    };
    let verdict = |llvm, nvvm| {
        let cases = build(ONE_RUST_ROW, Some(&peers(llvm, nvvm)), None).unwrap();
        (cases[0].outside_spread, text(&cases))
    };
    // Behind by 3 %, Rust's fastest tenth slower than compile's slowest: behind.
    let (s, t) = verdict((1.03, 1.02, 1.04), (1.00, 0.99, 1.01));
    assert_eq!(s, Some(Spread::Behind));
    assert!(t.contains("NO -2.9 %"), "{t}");
    assert!(t.contains("outside the spread"), "{t}");
    assert!(
        t.contains("outside the rounds' spread: behind on 1, ahead on 0"),
        "{t}"
    );
    // Behind by the median, but the rounds overlap: within.
    let (s, t) = verdict((1.005, 0.995, 1.02), (1.00, 0.99, 1.01));
    assert_eq!(s, Some(Spread::Within));
    assert!(t.contains("NO -0.5 %"), "{t}");
    assert!(t.contains("behind on 0, ahead on 0"), "{t}");
    // Ahead beyond the spread: the slower compiler's slowest tenth is faster.
    assert_eq!(
        verdict((0.96, 0.95, 0.97), (0.97, 0.965, 0.98)).0,
        Some(Spread::Ahead)
    );
    // The slower compiler decides: nvvm's rounds overlap compile's.
    assert_eq!(
        verdict((0.96, 0.95, 0.97), (1.005, 0.995, 1.02)).0,
        Some(Spread::Within)
    );
    // Without deciles (a file from before they were written) nothing is claimed.
    let bare = build(
        ONE_RUST_ROW,
        Some(&peers((1.03, 1.02, 1.04), (1.0, 0.99, 1.01)).replace(r#""p10_us""#, r#""p10_x""#)),
        None,
    )
    .unwrap();
    assert_eq!(bare[0].outside_spread, None);
    assert!(!text(&bare).contains("outside the"), "{}", text(&bare));
}
