//! Where a server's build came from, as its running binary says: the
//! program, its size and the size of its code, its build id, the compiler
//! that made it (the ELF `.comment`), and the allocator in its memory map.
//! Two builds of one version are not one target; a report's "settings
//! that differ" and a history's builds say how they differ.

use std::collections::BTreeMap;
use std::path::Path;

use super::profile::elf;

/// The facts of the process `pid`'s binary, by name (`relbench.build.…`,
/// `relbench.malloc_in_use`); none when its binary cannot be read.
pub fn provenance(pid: u32) -> BTreeMap<String, String> {
    let mut f = BTreeMap::new();
    let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else {
        return f;
    };
    // A build run through its own dynamic loader (a newer glibc's, as
    // examples/get-versions.sh runs Debian unstable's MySQL): the program
    // is the loader's first argument that is not one of its options.
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let exe = program_of(&exe, &cmdline).unwrap_or(exe);
    f.insert("relbench.build.binary".into(), exe.display().to_string());
    if let Ok(m) = std::fs::metadata(&exe) {
        f.insert("relbench.build.bytes".into(), m.len().to_string());
    }
    f.extend(of_file(&exe));
    if let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) {
        f.insert("relbench.malloc_in_use".into(), malloc_in(&maps));
    }
    f
}

/// The program a dynamic loader (`ld-linux-x86-64.so.2 [OPTIONS] PROGRAM
/// …`) runs, from the process's NUL-separated command line; None when
/// `exe` is no loader.
fn program_of(exe: &Path, cmdline: &[u8]) -> Option<std::path::PathBuf> {
    let name = exe.file_name()?.to_str()?;
    if !(name.starts_with("ld-linux") || name.starts_with("ld.so") || name.starts_with("ld64.so")) {
        return None;
    }
    let args: Vec<&[u8]> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .collect();
    let mut i = 1;
    while let Some(a) = args.get(i) {
        match *a {
            // The loader's options that take a value.
            b"--library-path" | b"--preload" | b"--argv0" | b"--audit" | b"--inhibit-rpath" => {
                i += 2
            }
            a if a.starts_with(b"--") => i += 1,
            a => {
                return Some(std::path::PathBuf::from(
                    String::from_utf8_lossy(a).into_owned(),
                ))
            }
        }
    }
    None
}

/// What an ELF file says of its build: code size, build id, compiler.
pub fn of_file(path: &Path) -> BTreeMap<String, String> {
    let mut f = BTreeMap::new();
    let Some(sections) = elf::sections(path) else {
        return f;
    };
    if let Some(t) = sections.iter().find(|s| s.name == ".text") {
        f.insert("relbench.build.text_bytes".into(), t.size.to_string());
    }
    let id = sections
        .iter()
        .find(|s| s.name == ".note.gnu.build-id")
        .and_then(|s| elf::section_bytes(path, s, 256))
        .and_then(|b| build_id(&b));
    if let Some(id) = id {
        f.insert("relbench.build.id".into(), id);
    }
    let compiler = sections
        .iter()
        .find(|s| s.name == ".comment")
        .and_then(|s| elf::section_bytes(path, s, 4096))
        .map(|b| compilers(&b));
    if let Some(c) = compiler.filter(|c| !c.is_empty()) {
        f.insert("relbench.build.compiler".into(), c);
    }
    f
}

/// The GNU build id from its note: namesz, descsz, type, "GNU\0", the id.
fn build_id(note: &[u8]) -> Option<String> {
    let u32_at = |o: usize| Some(u32::from_le_bytes(note.get(o..o + 4)?.try_into().ok()?) as usize);
    let (namesz, descsz) = (u32_at(0)?, u32_at(4)?);
    let start = 12 + namesz.div_ceil(4) * 4;
    let id = note.get(start..start + descsz)?;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}

/// The distinct compiler strings of a `.comment` section, joined.
fn compilers(comment: &[u8]) -> String {
    let mut v: Vec<String> = comment
        .split(|b| *b == 0)
        .map(|s| String::from_utf8_lossy(s).trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    v.dedup();
    v.sort();
    v.dedup();
    v.join("; ")
}

/// The allocator a process runs with, from its memory map: a preloaded
/// or linked jemalloc, tcmalloc or mimalloc by its library's name, else
/// the C library's.
pub fn malloc_in(maps: &str) -> String {
    for (lib, name) in [
        ("libjemalloc", "jemalloc"),
        ("libtcmalloc", "tcmalloc"),
        ("libmimalloc", "mimalloc"),
    ] {
        if let Some(l) = maps.lines().find(|l| l.contains(lib)) {
            let path = l.split_whitespace().last().unwrap_or(lib);
            return format!("{name} ({path})");
        }
    }
    "glibc malloc".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_test_binary_has_code_a_build_id_or_a_compiler() {
        let exe = std::env::current_exe().unwrap();
        let f = of_file(&exe);
        assert!(
            f["relbench.build.text_bytes"].parse::<u64>().unwrap() > 100_000,
            "{f:?}"
        );
        let me = provenance(std::process::id());
        assert_eq!(me["relbench.malloc_in_use"], "glibc malloc", "{me:?}");
        assert!(me.contains_key("relbench.build.bytes"), "{me:?}");
    }

    #[test]
    fn a_program_run_through_its_own_loader_is_the_program() {
        let ld = Path::new("/x/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
        let cmd = b"/x/ld-linux-x86-64.so.2\0--library-path\0/x/lib\0--argv0\0/x/mysqld\0/x/usr/sbin/mysqld\0--port=1\0";
        assert_eq!(program_of(ld, cmd), Some("/x/usr/sbin/mysqld".into()));
        assert_eq!(program_of(Path::new("/usr/sbin/mariadbd"), cmd), None);
    }

    #[test]
    fn a_preloaded_allocator_is_named_from_the_map() {
        let maps = "7f0-7f1 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n";
        assert_eq!(
            malloc_in(maps),
            "jemalloc (/usr/lib/x86_64-linux-gnu/libjemalloc.so.2)"
        );
        let note = [4u32.to_le_bytes(), 4u32.to_le_bytes(), 3u32.to_le_bytes()].concat();
        let note = [note, b"GNU\0".to_vec(), vec![0xde, 0xad, 0xbe, 0xef]].concat();
        assert_eq!(build_id(&note).as_deref(), Some("deadbeef"));
    }
}
