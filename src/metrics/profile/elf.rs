//! Why an object file's samples have no names: whether it keeps a symbol
//! table (`.symtab`) or only the dynamic one, read from its ELF section
//! headers (64-bit little-endian, as every x86-64 and arm64 Linux build),
//! which also give a build's provenance (`metrics::build`).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// What an object file has to name its functions with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symbols {
    /// A full symbol table: every function has a name.
    Full,
    /// Stripped: only the exported (dynamic) symbols are named.
    DynamicOnly,
    /// Not an ELF file this reader knows, or not readable.
    Unknown,
}

pub fn symbols(path: &Path) -> Symbols {
    match sections(path) {
        // SHT_SYMTAB = 2, named ".symtab".
        Some(s) if s.iter().any(|x| x.kind == 2 && x.name == ".symtab") => Symbols::Full,
        Some(_) => Symbols::DynamicOnly,
        None => Symbols::Unknown,
    }
}

/// One section of an ELF file: its name, type (`sh_type`), and where its
/// bytes are in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: String,
    pub kind: u32,
    pub offset: u64,
    pub size: u64,
}

/// The section headers of a 64-bit little-endian ELF file; None for any
/// other file.
pub fn sections(path: &Path) -> Option<Vec<Section>> {
    let mut f = File::open(path).ok()?;
    let mut h = [0u8; 64];
    f.read_exact(&mut h).ok()?;
    // ELF magic, 64-bit, little-endian.
    if &h[..4] != b"\x7fELF" || h[4] != 2 || h[5] != 1 {
        return None;
    }
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as u64;
    let u32_at = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as u64;
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let (shoff, shentsize, shnum, shstrndx) = (
        u64_at(&h, 0x28),
        u16_at(&h, 0x3A),
        u16_at(&h, 0x3C),
        u16_at(&h, 0x3E),
    );
    if shentsize < 64 || shnum == 0 || shnum > 65_535 || shstrndx >= shnum {
        return None;
    }
    let mut table = vec![0u8; (shentsize * shnum) as usize];
    f.seek(SeekFrom::Start(shoff)).ok()?;
    f.read_exact(&mut table).ok()?;
    let sh = |i: u64| &table[(i * shentsize) as usize..((i + 1) * shentsize) as usize];
    let strtab = sh(shstrndx);
    let (str_off, str_size) = (u64_at(strtab, 0x18), u64_at(strtab, 0x20));
    if str_size > 16 << 20 {
        return None;
    }
    let mut names = vec![0u8; str_size as usize];
    f.seek(SeekFrom::Start(str_off)).ok()?;
    f.read_exact(&mut names).ok()?;
    Some(
        (0..shnum)
            .map(|i| {
                let s = sh(i);
                let at = u32_at(s, 0) as usize;
                let name = names
                    .get(at..)
                    .and_then(|n| n.split(|b| *b == 0).next())
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .unwrap_or_default();
                Section {
                    name,
                    kind: u32_at(s, 4) as u32,
                    offset: u64_at(s, 0x18),
                    size: u64_at(s, 0x20),
                }
            })
            .collect(),
    )
}

/// A section's bytes (at most `max`).
pub fn section_bytes(path: &Path, s: &Section, max: u64) -> Option<Vec<u8>> {
    let mut f = File::open(path).ok()?;
    let mut b = vec![0u8; s.size.min(max) as usize];
    f.seek(SeekFrom::Start(s.offset)).ok()?;
    f.read_exact(&mut b).ok()?;
    Some(b)
}

/// Why samples in `object` have no function name, and what fixes it.
pub fn why_unnamed(object: &str) -> String {
    if object.is_empty() || object == "[unknown]" {
        return "code in no mapped file (JIT code, or a process gone before perf read its maps)"
            .into();
    }
    if object.starts_with('[') {
        return format!("{object}: kernel code perf could not name (kptr_restrict?)");
    }
    match symbols(Path::new(object)) {
        Symbols::DynamicOnly => "stripped (no symbol table, only its exported functions): install \
             its debug symbols (Debian: the package's -dbgsym from debian-debug) or profile an \
             unstripped build"
            .into(),
        Symbols::Full => {
            "has a symbol table, yet the addresses fall outside its functions (perf could not read it, or code it generates)".into()
        }
        Symbols::Unknown => "not readable here (another mount namespace, or removed since)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_test_binary_has_a_symbol_table_and_a_text_file_is_no_elf() {
        let me = std::env::current_exe().unwrap();
        assert_eq!(symbols(&me), Symbols::Full);
        assert_eq!(symbols(Path::new("Cargo.toml")), Symbols::Unknown);
    }
}
