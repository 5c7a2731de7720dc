//! Memory stays bounded while a document is edited: old revisions are freed. The only
//! test in this binary, so the process's resident set is the server's.

mod support;

use std::fs;

use support::{Client, project};

/// Resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    let status = fs::read_to_string("/proc/self/status").expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line")
}

#[test]
#[cfg_attr(not(target_os = "linux"), ignore = "reads /proc/self/status")]
fn memory_after_many_edits_stays_near_memory_after_a_few() {
    let (_d, root) = project();
    let text = factory_compiler::testgen::layered_workflow(150);
    let path = root.join("big.fwf");
    fs::write(&path, &text).unwrap();
    let mut c = Client::start(&root);
    let u = c.open(&path, &text);
    assert_eq!(c.diagnostics(&u, 1), (1, vec![]));
    // Each edit changes one attribute and waits for its diagnostics, so every revision
    // is checked in full: the worst case for what the server could hold on to.
    let edit = |c: &mut Client, v: i32| {
        let timeout = if v % 2 == 0 { "601" } else { "600" };
        let edited = text.replacen("timeout: 600", &format!("timeout: {timeout}"), 1);
        c.change(&u, v, &edited);
        let (got, diags) = c.diagnostics(&u, v);
        assert_eq!((got, diags.len()), (v, 0));
        // What the client has seen is not the server's memory.
        c.seen.clear();
    };
    for v in 2..12 {
        edit(&mut c, v);
    }
    let after_ten = rss_kib();
    for v in 12..112 {
        edit(&mut c, v);
    }
    let after_many = rss_kib();
    eprintln!("resident: {after_ten} KiB after 10 edits, {after_many} KiB after 110");
    assert!(
        after_many <= after_ten * 2,
        "memory grew from {after_ten} KiB after 10 edits to {after_many} KiB after 110"
    );
    c.stop();
}
