//! A study run by a real Slurm: Debian's `munged`, `slurmctld` and
//! `slurmd` started here (one node, their own config, state, spool and
//! munge socket in a temporary directory, ports of their own, stopped
//! after), `examples/slurm/study.sbatch` submitted as it is with the
//! shards plan of five SQLite targets over three array tasks, and the
//! merge job it submits checked: every target once, the base on every
//! shard, each shard's record naming its shard. Shard 2 is cancelled as
//! it runs and submitted again alone (`sbatch --array=2`), as users mend
//! a failed task: it resumes shard 2 of 3, and the study merges to the
//! report an uninterrupted run of it makes.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Daemons this test started, stopped by their PIDs when dropped.
struct Daemons(Vec<(String, Child)>);

impl Drop for Daemons {
    fn drop(&mut self) {
        // slurmd first, so no job is left behind it; munged last.
        for (_, c) in self.0.iter_mut().rev() {
            // SAFETY: kill on the PID of a child this test spawned.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let t0 = Instant::now();
            while c.try_wait().ok().flatten().is_none() {
                if t0.elapsed() > Duration::from_secs(20) {
                    let _ = c.kill();
                    let _ = c.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn need(bin: &str) -> PathBuf {
    for d in ["/usr/sbin", "/usr/bin"] {
        let p = Path::new(d).join(bin);
        if p.exists() {
            return p;
        }
    }
    panic!("{bin} is missing: install Debian's slurm-wlm and munge (./test does)");
}

fn spawn(daemons: &mut Daemons, dir: &Path, name: &str, cmd: &mut Command) {
    let log = std::fs::File::create(dir.join(format!("{name}.out"))).unwrap();
    let child = cmd
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .spawn()
        .unwrap_or_else(|e| panic!("starting {name}: {e}"));
    daemons.0.push((name.to_string(), child));
}

fn logs(dir: &Path) -> String {
    let mut s = String::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "out" || e == "log"))
        .collect();
    if let Ok(r) = std::fs::read_dir(dir.join("results")) {
        files.extend(
            r.map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "out")),
        );
    }
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(15).collect();
        s += &format!("\n== {} ==\n", f.display());
        for l in tail.into_iter().rev() {
            s += l;
            s.push('\n');
        }
    }
    s
}

#[test]
fn a_study_sharded_by_a_slurm_array_with_a_task_resubmitted_merges_into_one_report() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        panic!("the Slurm test starts slurmd, which runs jobs as their user: run it as root (./test in CI is)");
    }
    let (munged, slurmctld, slurmd, sbatch, squeue, sinfo, scancel) = (
        need("munged"),
        need("slurmctld"),
        need("slurmd"),
        need("sbatch"),
        need("squeue"),
        need("sinfo"),
        need("scancel"),
    );
    // Short: the munge socket's path must fit in a sockaddr_un.
    let tmp = tempfile::Builder::new()
        .prefix("rbslurm")
        .tempdir_in("/tmp")
        .unwrap();
    let dir = tmp.path();
    for d in ["state", "spool", "run", "results"] {
        std::fs::create_dir(dir.join(d)).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    let key = dir.join("munge.key");
    let bytes: Vec<u8> = (0..1024).map(|_| rand_byte()).collect();
    std::fs::write(&key, bytes).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let socket = dir.join("run/munge.sock");
    let mut daemons = Daemons(Vec::new());
    spawn(
        &mut daemons,
        dir,
        "munged",
        Command::new(&munged)
            .args(["--foreground", "--force"])
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--log-file={}", dir.join("munged.log").display()))
            .arg(format!(
                "--pid-file={}",
                dir.join("run/munged.pid").display()
            ))
            .arg(format!("--seed-file={}", dir.join("munged.seed").display())),
    );
    wait_for("munged's socket", 20, || socket.exists());

    let host = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let conf = dir.join("slurm.conf");
    let d = dir.display();
    std::fs::write(
        &conf,
        format!(
            "ClusterName=relbench\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmUser=root\nSlurmdUser=root\n\
             SlurmctldPort={}\nSlurmdPort={}\n\
             AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={}\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/run/slurmctld.pid\nSlurmdPidFile={d}/run/slurmd.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
             SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n\
             MpiDefault=none\nSwitchType=switch/none\nReturnToService=2\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 State=UNKNOWN\n\
             PartitionName=relbench Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            free_port(),
            free_port(),
            socket.display()
        ),
    )
    .unwrap();
    let slurm = |c: &mut Command| {
        c.env("SLURM_CONF", &conf);
    };
    let mut c = Command::new(&slurmctld);
    c.arg("-D").arg("-f").arg(&conf);
    slurm(&mut c);
    spawn(&mut daemons, dir, "slurmctld", &mut c);
    let mut c = Command::new(&slurmd);
    c.arg("-D").arg("-f").arg(&conf);
    slurm(&mut c);
    spawn(&mut daemons, dir, "slurmd", &mut c);
    let idle = || {
        let mut c = Command::new(&sinfo);
        c.args(["-h", "-o", "%t"]);
        slurm(&mut c);
        c.output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
    };
    let t0 = Instant::now();
    while !idle() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the Slurm node never came up idle:{}",
            logs(dir)
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // The example as a user submits it, with its three paths given.
    let plan = write_plan(dir, include_str!("fixtures/shards.toml"));
    let results = dir.join("results");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/slurm/study.sbatch");
    let submit = |array: Option<&str>| -> String {
        let mut c = Command::new(&sbatch);
        c.arg("--parsable");
        if let Some(a) = array {
            c.arg(format!("--array={a}"));
        }
        c.arg(&example)
            .current_dir(dir)
            .env("RELBENCH", bin())
            .env("PLAN", &plan)
            .env("RESULTS", &results);
        slurm(&mut c);
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "sbatch: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let queued = || {
        let mut c = Command::new(&squeue);
        c.args(["-h", "-o", "%i %j %T"]);
        slurm(&mut c);
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    // Until this submission and the merge job it submitted have left the
    // queue.
    let drained = |what: &str| {
        let t0 = Instant::now();
        let mut saw_merge = false;
        loop {
            let q = queued();
            saw_merge |= q.contains("relbench-merge");
            if q.trim().is_empty() && saw_merge {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(300),
                "{what} did not finish in 5 minutes; queue:\n{q}{}",
                logs(dir)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        eprintln!("{what} done in {:.1} s", t0.elapsed().as_secs_f64());
    };

    // Shard 2 cancelled while it runs: the first merge refuses the study.
    let job = submit(None);
    eprintln!("submitted array job {job}");
    let shard2 = results.join("shard-2");
    wait_for("shard 2 to start", 240, || shard2.join("run.json").exists());
    let mut c = Command::new(&scancel);
    c.arg(format!("{job}_2"));
    slurm(&mut c);
    assert!(c.status().unwrap().success());
    drained("the array with shard 2 cancelled");
    assert_ne!(
        read_json(&shard2.join("run.json"))["status"],
        "complete",
        "shard 2 finished before it was cancelled: the test cancelled nothing"
    );
    assert!(
        !results.join("merged/merge.json").exists(),
        "a study with a cancelled shard was merged:{}",
        logs(dir)
    );

    // The everyday fix: the failed task submitted again by its number.
    // It is shard 2 of 3 (not 1/1, the whole study), resumes, and merges.
    let again = submit(Some("2"));
    eprintln!("submitted task 2 again as job {again}");
    drained("task 2 submitted again");
    let merged = results.join("merged");
    assert!(merged.join("report.html").exists(), "{}", logs(dir));
    let out2 =
        std::fs::read_to_string(dir.join(format!("relbench-{again}_2.out"))).unwrap_or_default();
    assert!(
        out2.contains("holds shard 2/3"),
        "task 2 did not resume its shard: {out2}"
    );
    for i in 1..=3 {
        let run = read_json(&results.join(format!("shard-{i}/run.json")));
        assert_eq!(run["status"], "complete");
        assert_eq!(run["shard"]["index"], i);
        assert_eq!(run["shard"]["count"], 3);
        assert!(run["shard"]["targets"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("base")));
    }
    let report = read_json(&merged.join("report.json"));
    let names = report_targets(&report);
    for t in ["wal", "wal-full", "memory-journal", "small-cache"] {
        assert_eq!(names.iter().filter(|n| **n == t).count(), 1, "{names:?}");
    }
    for i in 1..=3 {
        assert!(names.contains(&format!("s{i}/base")), "{names:?}");
    }
    let m = read_json(&merged.join("merge.json"));
    assert_eq!(m["complete"], true);
    assert_eq!(m["shards"].as_array().unwrap().len(), 3);
    drop(daemons);

    // The same study run uninterrupted, here: the same report (targets,
    // rows, and every shard's step results).
    let whole = dir.join("whole");
    let mut shards = Vec::new();
    for i in 1..=3 {
        let out = whole.join(format!("shard-{i}"));
        relbench()
            .args(["run", "-q"])
            .arg(&plan)
            .args(["--shard", &format!("{i}/3"), "--out"])
            .arg(&out)
            .assert()
            .success();
        shards.push(out);
    }
    relbench()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(whole.join("merged"))
        .assert()
        .success();
    let uninterrupted = read_json(&whole.join("merged/report.json"));
    assert_eq!(report_targets(&uninterrupted), names);
    let rows = |r: &serde_json::Value| -> Vec<String> {
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| format!("{} ×{}", row["step"], row["clients"]))
            .collect()
    };
    assert_eq!(rows(&uninterrupted), rows(&report));
    for i in 1..=3 {
        let d = format!("shards/{i}-of-3");
        assert_eq!(
            step_files(&merged.join(&d)),
            step_files(&whole.join("merged").join(&d)),
            "shard {i}"
        );
    }
}

/// A byte from the kernel's random source (the munge key).
fn rand_byte() -> u8 {
    use std::io::Read;
    thread_local! {
        static F: std::cell::RefCell<std::fs::File> =
            std::cell::RefCell::new(std::fs::File::open("/dev/urandom").unwrap());
    }
    let mut b = [0u8];
    F.with(|f| f.borrow_mut().read_exact(&mut b).unwrap());
    b[0]
}
