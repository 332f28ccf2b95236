//! "Did you mean": close names for an object that does not exist.

/// Levenshtein distance, small inputs only.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Up to three candidates close to `wanted`: substring matches first, then by edit distance.
pub fn suggest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let d = distance(wanted, c);
            let close = d <= (wanted.len() / 3).max(2);
            let contains = c.contains(wanted) || wanted.contains(c);
            (close || contains).then_some((if contains { 0 } else { d }, c))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names() {
        let names = ["database-01", "database-02", "web-1", "cache"];
        assert_eq!(suggest("databse-01", names), ["database-01", "database-02"]);
        assert_eq!(suggest("web", names), ["web-1"]);
        assert!(suggest("zzzzzz", names).is_empty());
    }
}

/// What the operator named on a command line: a migration, or a VM / VMI (a VM's VMI has
/// the VM's name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Migration(String),
    Vmi(String),
}

/// What a bare `NAME` means to a command, and which forms it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// `explain`: a bare name is a migration; `vm/NAME`, `vmi/NAME` too.
    MigrationFirst,
    /// `abort`: a bare name is a VM; `migration/NAME` too.
    VmFirst,
    /// `migrate`: a VM only (`NAME`, `vm/NAME`, `vmi/NAME`).
    VmOnly,
}

impl Takes {
    fn forms(self) -> &'static str {
        match self {
            Takes::MigrationFirst => "a migration (NAME or migration/NAME), vm/NAME or vmi/NAME",
            Takes::VmFirst => "a VM (NAME, vm/NAME, vmi/NAME) or migration/NAME",
            Takes::VmOnly => "a VM or VMI (NAME, vm/NAME or vmi/NAME)",
        }
    }
}

/// Parses `NAME`, `KIND/NAME` (kind as kubectl spells it: `vm`, `vmi`, `vmim`,
/// `migration` …) into a [`Target`]; `command` names the command in the error.
pub fn parse_target(text: &str, takes: Takes, command: &str) -> crate::error::Result<Target> {
    use crate::cluster::Kind;
    use crate::error::Error;
    let (kind, name) = match text.split_once('/') {
        Some((kind, name)) => (Some(kind), name),
        None => (None, text),
    };
    if name.is_empty() || name.contains('/') {
        return Err(Error::usage(format!("{text:?} is not {}", takes.forms())));
    }
    let name = name.to_string();
    match (kind.map(Kind::from_resource_name), takes) {
        (None, Takes::MigrationFirst)
        | (
            Some(Some(Kind::VirtualMachineInstanceMigration)),
            Takes::MigrationFirst | Takes::VmFirst,
        ) => Ok(Target::Migration(name)),
        (None, Takes::VmFirst | Takes::VmOnly)
        | (Some(Some(Kind::VirtualMachine | Kind::VirtualMachineInstance)), _) => {
            Ok(Target::Vmi(name))
        }
        _ => Err(Error::usage(format!(
            "{text:?}: {command} takes {}",
            takes.forms()
        ))),
    }
}

#[cfg(test)]
mod target_tests {
    use super::*;

    #[test]
    fn each_command_reads_a_bare_name_its_own_way() {
        let t = |text, takes| parse_target(text, takes, "cmd").ok();
        let m = |n: &str| Some(Target::Migration(n.into()));
        let v = |n: &str| Some(Target::Vmi(n.into()));
        assert_eq!(t("m1", Takes::MigrationFirst), m("m1"));
        assert_eq!(t("migration/m1", Takes::MigrationFirst), m("m1"));
        assert_eq!(t("vmim/m1", Takes::VmFirst), m("m1"));
        assert_eq!(t("vm/a", Takes::MigrationFirst), v("a"));
        assert_eq!(t("a", Takes::VmFirst), v("a"));
        assert_eq!(t("vmi/a", Takes::VmOnly), v("a"));
        assert_eq!(t("a", Takes::VmOnly), v("a"));
        assert_eq!(t("migration/m", Takes::VmOnly), None);
        for bad in ["pod/a", "vm/", "a/b/c", ""] {
            assert_eq!(t(bad, Takes::MigrationFirst), None, "{bad}");
        }
        let e = parse_target("pod/x", Takes::VmFirst, "abort")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("abort takes a VM (NAME, vm/NAME, vmi/NAME) or migration/NAME"),
            "{e}"
        );
    }
}
