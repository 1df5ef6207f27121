//! The programs relbench runs from a managed target's basedir: found in
//! the usual places, and each refused unless no other user can change it
//! (`util::trusted`), since relbench runs them as whoever runs it, root
//! included.

use std::path::{Path, PathBuf};

use anyhow::bail;

/// Looks for the first of `names` in the usual places under `basedir`;
/// one found is refused unless no other user can change it
/// ([`crate::util::trusted`]): relbench runs it, as root too.
pub fn find_binary(basedir: &Path, names: &[&str]) -> anyhow::Result<PathBuf> {
    if let Some(p) = find_optional(basedir, names)? {
        return Ok(p);
    }
    bail!(
        "no {} under {}/{{bin,sbin,libexec,scripts}}; point `basedir` at the directory that holds them \
         (for Debian's packages: /usr for MariaDB, /usr/lib/postgresql/<version> for PostgreSQL)",
        names.join(" or "),
        basedir.display()
    )
}

/// As [`find_binary`], for a binary a build may not have: `None` when
/// there is none, an error when the one there is not trusted.
pub fn find_optional(basedir: &Path, names: &[&str]) -> anyhow::Result<Option<PathBuf>> {
    for dir in ["bin", "sbin", "libexec", "scripts", ""] {
        for n in names {
            let p = basedir.join(dir).join(n);
            if p.is_file() {
                crate::util::trusted(&p, "a server binary")?;
                return Ok(Some(p));
            }
        }
    }
    Ok(None)
}

/// Every binary and script relbench may run from `basedir`, checked as
/// [`find_binary`] checks the one it runs: for `relbench check`, so a
/// basedir another user can change is refused before a run, not during.
pub fn check_binaries(basedir: &Path) -> anyhow::Result<()> {
    const ALL: [&str; 7] = [
        "mariadbd",
        "mysqld",
        "mariadb-install-db",
        "mysql_install_db",
        "my_print_defaults",
        "postgres",
        "initdb",
    ];
    for n in ALL {
        find_optional(basedir, &[n])?;
    }
    Ok(())
}
