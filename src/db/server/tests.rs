//! Unit tests of starting and stopping managed servers.
use super::*;

/// Regression (fresh-clone CI): a port from the range the kernel gives
/// outgoing connections was taken by one before MyRocks could bind it.
#[test]
fn a_chosen_port_is_free_and_below_the_range_of_outgoing_connections() {
    let low: u16 = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    for _ in 0..100 {
        let p = free_port().unwrap();
        assert!(p < low, "{p} is in the kernel's range from {low}");
        assert!(!port_in_use(p));
    }
}

#[test]
fn a_server_that_lost_its_port_says_so_in_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("s.log");
    fs::write(
        &log,
        "[ERROR] Can't start server: Bind on TCP/IP port. Got error: 98: Address already in use\n",
    )
    .unwrap();
    assert!(lost_its_port(&log));
    fs::write(
        &log,
        "LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use\n",
    )
    .unwrap();
    assert!(lost_its_port(&log));
    fs::write(&log, "[ERROR] Aborting\n").unwrap();
    assert!(!lost_its_port(&log));
}

#[test]
fn an_install_scripts_failure_shows_the_line_that_says_why_not_its_advice() {
    // MariaDB 10.2's mysql_install_db, given an option it does not know.
    let mut out = String::from("Installing MariaDB/MySQL system tables in '/d' ...\n");
    for i in 0..30 {
        out += &format!("The latest information about mysql_install_db is available at line {i}\n");
    }
    out += "2026-11-23 4:51:55 0 [ERROR] /v/bin/mysqld: unknown option '--skip-test-db'\n";
    out += "2026-11-23 4:51:55 0 [ERROR] Aborting\n";
    let w = why(&out, 12);
    assert!(
        w.starts_with(
            "2026-11-23 4:51:55 0 [ERROR] /v/bin/mysqld: unknown option '--skip-test-db'"
        ),
        "{w}"
    );
    assert!(!w.contains("line 5"), "{w}");
    // Without an error line: the end of the output.
    let quiet: String = (0..40).map(|i| format!("line {i}\n")).collect();
    assert_eq!(why(&quiet, 3), "line 37\nline 38\nline 39");
}
use std::os::unix::fs::MetadataExt;

#[test]
fn private_directories_are_new_random_and_ours_alone() {
    // /tmp/relbench-<pid>-<target> could be made first by anyone.
    let a = crate::util::private_dir("relbench-test-").unwrap();
    let b = crate::util::private_dir("relbench-test-").unwrap();
    assert_ne!(a, b);
    for d in [&a, &b] {
        let m = fs::symlink_metadata(d).unwrap();
        assert!(m.is_dir());
        assert_eq!(m.mode() & 0o777, 0o700);
        fs::remove_dir(d).unwrap();
    }
}

#[test]
fn a_password_never_prints() {
    let s = Secret::random().unwrap();
    assert_eq!(s.expose().len(), 24);
    assert!(!format!("{s:?}").contains(s.expose()));
    assert_ne!(Secret::random().unwrap(), s);
}
