//! The passwords of URL targets (`password_env`), read from the
//! environment once, before any work, and removed from it: no child
//! relbench starts (a managed server, its init script, a shell hook)
//! inherits them, and `/proc/PID/environ` of relbench itself no longer
//! shows them. They travel as a value, in memory only.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::bail;

use super::server::Secret;
use super::spec::{Access, TargetSpec};

/// The passwords a run's URL targets name, by environment variable.
#[derive(Clone, Default, Debug)]
pub struct Secrets(Arc<BTreeMap<String, Secret>>);

impl Secrets {
    /// Reads every `password_env` the targets name and removes it from
    /// this process's environment. A variable that is not set is an error
    /// now, before anything runs.
    pub fn take(targets: &[TargetSpec]) -> anyhow::Result<Secrets> {
        let mut out = BTreeMap::new();
        for t in targets {
            let Access::Url {
                password_env: Some(var),
                ..
            } = &t.access
            else {
                continue;
            };
            if out.contains_key(var) {
                continue;
            }
            let Some(value) = std::env::var_os(var) else {
                bail!(
                    "target \"{}\": the environment variable {var} (password_env) is not set; \
                     export {var}=... before running relbench",
                    t.name
                );
            };
            let Some(value) = value.to_str() else {
                bail!(
                    "target \"{}\": the environment variable {var} (password_env) is not UTF-8",
                    t.name
                );
            };
            out.insert(var.clone(), Secret::from(value));
            // Single-threaded here (before any client or server starts):
            // nothing reads the environment while it changes.
            std::env::remove_var(var);
        }
        Ok(Secrets(Arc::new(out)))
    }

    /// The password a target's `password_env` named.
    pub fn get(&self, var: &str) -> Option<&str> {
        self.0.get(var).map(Secret::expose)
    }
}
