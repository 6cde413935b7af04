//! The UI budget (issue 7): everything the hub serves for the UI, vendored libraries
//! included, weighs at most 300 KiB once each file is gzipped.

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

const BUDGET: usize = 300 * 1024;

fn gzipped(data: &[u8]) -> usize {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(data).expect("writing to a Vec cannot fail");
    gz.finish().expect("finishing a Vec cannot fail").len()
}

#[test]
fn the_served_ui_weighs_at_most_300_kib_gzipped() {
    let mut files: Vec<(String, usize, usize)> = kerf::ui::files()
        .into_iter()
        .map(|(path, data)| {
            let gz = gzipped(&data);
            (path, data.len(), gz)
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.2));
    let raw: usize = files.iter().map(|f| f.1).sum();
    let total: usize = files.iter().map(|f| f.2).sum();
    assert_eq!(raw, kerf::ui::total_bytes());
    for (path, raw, gz) in files.iter().take(8) {
        println!("{gz:>8} B gzipped {raw:>8} B raw  {path}");
    }
    println!(
        "UI: {} files, {raw} B raw, {total} B gzipped ({:.1} KiB of {} KiB)",
        files.len(),
        total as f64 / 1024.0,
        BUDGET / 1024
    );
    assert!(
        total <= BUDGET,
        "the UI weighs {total} B gzipped, over the {BUDGET} B budget"
    );
}
