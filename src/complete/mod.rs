//! Shell completion through cobra's `__complete` protocol, which kubectl (1.26+) uses for
//! plugins: on TAB after `kubectl vmctl `, kubectl runs `kubectl_complete-vmctl` from PATH
//! with the words after the plugin name, the last one the word being completed (possibly
//! empty), and reads one candidate per line (`value<TAB>description`), then `:<directive>`.
//! `vmctl __complete WORDS...` answers the same way.
//!
//! The words are walked over the clap definition (`crate::cli`), so subcommands, flags and
//! their values never drift from `--help`. Names that only the cluster knows (nodes, VMs,
//! migrations, namespaces, kubeconfig contexts) come from the source the command itself
//! would read: [`plan`] says which ones are wanted (pure), [`gather`] reads them (I/O,
//! bounded), [`finish`] turns them into candidates (pure).
//!
//! clap_complete's own engine (`unstable-dynamic`) was considered: its value completers see
//! only the word being completed, not `--from`/`--kubeconfig`/`-n` earlier on the line, and
//! it completes paths itself where the cobra protocol leaves them to the shell.

pub mod gather;

use std::path::PathBuf;

use clap::builder::ValueHint;
use clap::{Arg, ArgAction, Command};

use crate::names::Takes;

/// Cobra's `ShellCompDirective` bit flags (cobra `completions.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Directive(pub u32);

impl Directive {
    /// Let the shell do its default (file completion when there is no candidate).
    pub const DEFAULT: Directive = Directive(0);
    pub const ERROR: Directive = Directive(1);
    pub const NO_SPACE: Directive = Directive(2);
    pub const NO_FILE_COMP: Directive = Directive(4);
    pub const FILTER_FILE_EXT: Directive = Directive(8);
    pub const FILTER_DIRS: Directive = Directive(16);
    pub const KEEP_ORDER: Directive = Directive(32);
}

/// One completion: the value the shell inserts and a description it may show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub value: String,
    pub description: String,
}

impl Candidate {
    fn new(value: impl Into<String>, description: impl Into<String>) -> Candidate {
        Candidate {
            value: value.into(),
            description: description.into(),
        }
    }
}

/// The answer: candidates and the directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completions {
    pub candidates: Vec<Candidate>,
    pub directive: Directive,
}

impl Completions {
    /// Nothing to offer, and no file names either.
    pub fn none() -> Completions {
        Completions {
            candidates: Vec::new(),
            directive: Directive::NO_FILE_COMP,
        }
    }

    fn files() -> Completions {
        Completions {
            candidates: Vec::new(),
            directive: Directive::DEFAULT,
        }
    }

    fn dirs() -> Completions {
        Completions {
            candidates: Vec::new(),
            directive: Directive::FILTER_DIRS,
        }
    }
}

/// Names only a source knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Names {
    Nodes,
    /// VMIs in the command's scope (a running VM's VMI has its name).
    Vmis,
    /// VirtualMachineInstanceMigrations in the command's scope.
    Migrations,
    Namespaces,
    /// Contexts of the kubeconfig.
    Contexts,
}

/// One kind of name wanted, and the `KIND/` the command line writes before it (`vm/`,
/// `migration/`, or nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    pub names: Names,
    pub prefix: String,
}

/// The global flags on the line that choose the source, as the command would read them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceFlags {
    pub from: Option<PathBuf>,
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
    pub all_namespaces: bool,
    pub max_input_size: Option<String>,
}

/// Names to read from the source before answering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamesRequest {
    pub wanted: Vec<Wanted>,
    /// The word being completed.
    pub typed: String,
    /// Values already on the line for the same argument (`plan-drain node-1 <TAB>`).
    pub exclude: Vec<String>,
    pub source: SourceFlags,
}

/// What [`plan`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    Done(Completions),
    Names(NamesRequest),
}

/// At most this many names are printed (sorted, the first ones).
pub const MAX_CANDIDATES: usize = 1000;

/// The state of the walk over the words before the one being completed.
struct Walk<'a> {
    root: &'a Command,
    cmd: &'a Command,
    /// The subcommand path, e.g. `["plan-drain"]`.
    path: Vec<String>,
    /// Values of positionals given to the current command, in order.
    positionals: Vec<String>,
    /// Flags given (by id), to leave out of flag-name candidates.
    given: Vec<String>,
    source: SourceFlags,
    /// `--connect` on the line: a libvirt domain, no names from a cluster.
    libvirt: bool,
    after_double_dash: bool,
    unknown_command: bool,
}

impl<'a> Walk<'a> {
    fn record(&mut self, arg: &Arg, value: Option<&str>) {
        self.given.push(arg.get_id().to_string());
        let value = value.map(str::to_string);
        match arg.get_id().as_str() {
            "from" => self.source.from = value.map(PathBuf::from),
            "kubeconfig" => self.source.kubeconfig = value.map(PathBuf::from),
            "context" => self.source.context = value,
            "namespace" => self.source.namespace = value,
            "all_namespaces" => self.source.all_namespaces = true,
            "max_input_size" => self.source.max_input_size = value,
            "connect" => self.libvirt = true,
            _ => {}
        }
    }

    fn positional(&mut self, word: &str) {
        if !self.after_double_dash
            && self.positionals.is_empty()
            && self.cmd.has_subcommands()
            && self.path.last().map(String::as_str) != Some("help")
        {
            match find_subcommand(self.cmd, word) {
                Some(sub) => {
                    self.path.push(sub.get_name().to_string());
                    self.cmd = sub;
                }
                None => self.unknown_command = true,
            }
            return;
        }
        self.positionals.push(word.to_string());
    }
}

fn find_subcommand<'c>(cmd: &'c Command, word: &str) -> Option<&'c Command> {
    cmd.get_subcommands()
        .find(|s| s.get_name() == word || s.get_all_aliases().any(|a| a == word))
}

fn find_long<'c>(cmd: &'c Command, name: &str) -> Option<&'c Arg> {
    cmd.get_arguments().find(|a| {
        a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|all| all.contains(&name))
    })
}

fn find_short(cmd: &Command, c: char) -> Option<&Arg> {
    cmd.get_arguments().find(|a| {
        a.get_short() == Some(c)
            || a.get_all_short_aliases()
                .is_some_and(|all| all.contains(&c))
    })
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_action().takes_values()
}

/// A flag that may be given more than once, so it stays a candidate.
fn repeatable(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Append | ArgAction::Count)
}

/// The first sentence of a help text, on one line.
fn short_help(text: Option<String>) -> String {
    let text = text.unwrap_or_default();
    let line = text.lines().next().unwrap_or("").trim();
    let sentence = match line.find(". ") {
        Some(end) => &line[..end],
        None => line.trim_end_matches('.'),
    };
    sentence.to_string()
}

/// What to complete for `words` (the words after the program name; the last one is the word
/// being completed, possibly empty) under `cmd`, the program's clap definition. Pure.
pub fn plan(cmd: &Command, words: &[String]) -> Plan {
    let mut root = cmd.clone();
    // Propagates the global flags to every subcommand and adds help/version.
    root.build();
    plan_built(&root, words)
}

fn plan_built(root: &Command, words: &[String]) -> Plan {
    let Some((typed, before)) = words.split_last() else {
        return Plan::Done(Completions::none());
    };
    let mut walk = Walk {
        root,
        cmd: root,
        path: Vec::new(),
        positionals: Vec::new(),
        given: Vec::new(),
        source: SourceFlags::default(),
        libvirt: false,
        after_double_dash: false,
        unknown_command: false,
    };
    // A flag whose value is the word being completed (`-n <TAB>`).
    let mut pending: Option<&Arg> = None;
    let mut i = 0;
    while i < before.len() {
        let word = before[i].as_str();
        i += 1;
        if walk.after_double_dash || word == "-" || !word.starts_with('-') {
            walk.positional(word);
            continue;
        }
        if word == "--" {
            walk.after_double_dash = true;
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let Some(arg) = find_long(walk.cmd, name) else {
                continue;
            };
            if !takes_value(arg) || inline.is_some() {
                walk.record(arg, inline);
            } else if i < before.len() {
                walk.record(arg, Some(before[i].as_str()));
                i += 1;
            } else {
                walk.given.push(arg.get_id().to_string());
                pending = Some(arg);
            }
            continue;
        }
        // A cluster of short flags: `-An`, `-ojson`, `-o=json`, `-n prod`.
        let shorts = &word[1..];
        for (at, c) in shorts.char_indices() {
            let Some(arg) = find_short(walk.cmd, c) else {
                break;
            };
            if !takes_value(arg) {
                walk.record(arg, None);
                continue;
            }
            let rest = &shorts[at + c.len_utf8()..];
            let rest = rest.strip_prefix('=').unwrap_or(rest);
            if !rest.is_empty() {
                walk.record(arg, Some(rest));
            } else if i < before.len() {
                walk.record(arg, Some(before[i].as_str()));
                i += 1;
            } else {
                walk.given.push(arg.get_id().to_string());
                pending = Some(arg);
            }
            break;
        }
    }
    if walk.unknown_command {
        return Plan::Done(Completions::none());
    }
    if let Some(arg) = pending {
        return value_of(&walk, arg, typed);
    }
    if !walk.after_double_dash && typed.starts_with('-') {
        if let Some((flag, value)) = typed.split_once('=') {
            let arg = match flag.strip_prefix("--") {
                Some(long) => find_long(walk.cmd, long),
                None => flag.chars().last().and_then(|c| find_short(walk.cmd, c)),
            };
            return match arg {
                Some(arg) if takes_value(arg) => value_of(&walk, arg, value),
                _ => Plan::Done(Completions::none()),
            };
        }
        return Plan::Done(flag_names(&walk, typed));
    }
    positional_of(&walk, typed)
}

/// `--flag` and `-f` candidates for a word that starts with `-`.
fn flag_names(walk: &Walk, typed: &str) -> Completions {
    let mut candidates = Vec::new();
    for arg in walk.cmd.get_arguments() {
        if arg.is_positional() || arg.is_hide_set() {
            continue;
        }
        if walk.given.iter().any(|g| g == arg.get_id().as_str()) && !repeatable(arg) {
            continue;
        }
        let help = short_help(arg.get_help().map(ToString::to_string));
        if let Some(long) = arg.get_long() {
            let flag = format!("--{long}");
            if flag.starts_with(typed) {
                candidates.push(Candidate::new(flag, help.clone()));
            }
        }
        if let Some(short) = arg.get_short() {
            let flag = format!("-{short}");
            if flag.starts_with(typed) {
                candidates.push(Candidate::new(flag, help));
            }
        }
    }
    Completions {
        candidates,
        directive: Directive::NO_FILE_COMP,
    }
}

/// Candidates from clap's possible values (`-o table|wide|json|yaml`), or `None`.
fn possible_values(arg: &Arg, typed: &str) -> Option<Completions> {
    let values = arg.get_possible_values();
    if values.is_empty() {
        return None;
    }
    let candidates = values
        .iter()
        .filter(|v| !v.is_hide_set() && v.get_name().starts_with(typed))
        .map(|v| {
            Candidate::new(
                v.get_name(),
                short_help(v.get_help().map(ToString::to_string)),
            )
        })
        .collect();
    Some(Completions {
        candidates,
        directive: Directive::NO_FILE_COMP,
    })
}

/// Completions by the argument's value hint: paths to the shell, nothing otherwise.
fn by_hint(arg: &Arg) -> Completions {
    match arg.get_value_hint() {
        ValueHint::AnyPath | ValueHint::FilePath | ValueHint::ExecutablePath => {
            Completions::files()
        }
        ValueHint::DirPath => Completions::dirs(),
        _ => Completions::none(),
    }
}

fn names(walk: &Walk, typed: &str, wanted: Vec<Wanted>, exclude: Vec<String>) -> Plan {
    Plan::Names(NamesRequest {
        wanted,
        typed: typed.to_string(),
        exclude,
        source: walk.source.clone(),
    })
}

fn bare(names: Names) -> Wanted {
    Wanted {
        names,
        prefix: String::new(),
    }
}

/// The value of a flag.
fn value_of(walk: &Walk, arg: &Arg, typed: &str) -> Plan {
    if let Some(done) = possible_values(arg, typed) {
        return Plan::Done(done);
    }
    match arg.get_id().as_str() {
        "namespace" => names(walk, typed, vec![bare(Names::Namespaces)], Vec::new()),
        "context" => names(walk, typed, vec![bare(Names::Contexts)], Vec::new()),
        "node" => names(walk, typed, vec![bare(Names::Nodes)], Vec::new()),
        _ => Plan::Done(by_hint(arg)),
    }
}

/// A subcommand name or the next positional argument.
fn positional_of(walk: &Walk, typed: &str) -> Plan {
    // `vmctl help <TAB>`: the commands help is about.
    let help = walk.path == ["help"];
    let commands_of = if help { walk.root } else { walk.cmd };
    if (help || walk.cmd.has_subcommands())
        && walk.positionals.is_empty()
        && !walk.after_double_dash
    {
        let candidates = commands_of
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && (!help || s.get_name() != "help"))
            .filter(|s| s.get_name().starts_with(typed))
            .map(|s| {
                Candidate::new(
                    s.get_name(),
                    short_help(s.get_about().map(ToString::to_string)),
                )
            })
            .collect();
        return Plan::Done(Completions {
            candidates,
            directive: Directive::NO_FILE_COMP,
        });
    }
    let positionals: Vec<&Arg> = walk.cmd.get_positionals().collect();
    let index = walk.positionals.len();
    let arg = match positionals.get(index) {
        Some(arg) => *arg,
        None => match positionals.last() {
            Some(last) if accepts_many(last) => *last,
            _ => return Plan::Done(Completions::none()),
        },
    };
    if let Some(done) = possible_values(arg, typed) {
        return Plan::Done(done);
    }
    let command = walk.path.first().map(String::as_str).unwrap_or("");
    let id = arg.get_id().as_str();
    let exclude = || walk.positionals.clone();
    match (command, id) {
        ("plan-drain" | "drain" | "plan-maintenance", "nodes") => {
            names(walk, typed, vec![bare(Names::Nodes)], exclude())
        }
        ("status", "names") => names(walk, typed, vec![bare(Names::Vmis)], exclude()),
        ("migrate", "target") if !walk.libvirt => targets(walk, typed, Takes::VmOnly),
        ("abort", "target") if !walk.libvirt => targets(walk, typed, Takes::VmFirst),
        ("explain", "target") if !walk.libvirt => targets(walk, typed, Takes::MigrationFirst),
        _ => Plan::Done(by_hint(arg)),
    }
}

fn accepts_many(arg: &Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.max_values() > 1)
}

/// A migrate/abort/explain target: what a bare name means to the command (see
/// `names::Takes`), and the `KIND/NAME` forms once a `/` is typed.
fn targets(walk: &Walk, typed: &str, takes: Takes) -> Plan {
    let vm_kind = ["vm/", "vmi/"].into_iter().find(|k| typed.starts_with(k));
    let migration_kind = ["migration/", "vmim/"]
        .into_iter()
        .find(|k| typed.starts_with(k));
    let with = |names, prefix: &str| Wanted {
        names,
        prefix: prefix.to_string(),
    };
    let wanted = match (vm_kind, migration_kind, takes) {
        (Some(kind), _, _) => vec![with(Names::Vmis, kind)],
        (None, Some(_), Takes::VmOnly) => return Plan::Done(Completions::none()),
        (None, Some(kind), _) => vec![with(Names::Migrations, kind)],
        (None, None, Takes::VmOnly) => vec![bare(Names::Vmis)],
        // A bare name is a VM; a migration is written migration/NAME.
        (None, None, Takes::VmFirst) => {
            vec![bare(Names::Vmis), with(Names::Migrations, "migration/")]
        }
        // A bare name is a migration; a VM is written vm/NAME.
        (None, None, Takes::MigrationFirst) => {
            vec![bare(Names::Migrations), with(Names::Vmis, "vm/")]
        }
    };
    names(walk, typed, wanted, Vec::new())
}

/// Names read from the source, each with a description (e.g. its namespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub wanted: Wanted,
    pub names: Vec<(String, String)>,
}

/// What [`finish`] left out, for a line on stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Names a shell cannot be given as they are: control characters, bidi overrides,
    /// whitespace.
    pub unprintable: usize,
    /// Beyond [`MAX_CANDIDATES`].
    pub beyond_limit: usize,
}

/// A name that reaches the shell as it is: no control character, no bidi override (see
/// `text::printable`), no whitespace (it would split the word).
fn shell_safe(name: &str) -> bool {
    !name.is_empty()
        && crate::text::printable(name) == name
        && !name.chars().any(char::is_whitespace)
}

/// The candidates for a [`NamesRequest`] from the names read: those that start with the
/// typed word, not already on the line, safe for a shell, sorted, deduplicated, at most
/// `limit`. Descriptions are escaped. Pure.
pub fn finish(request: &NamesRequest, found: Vec<Found>, limit: usize) -> (Completions, LeftOut) {
    let mut left = LeftOut::default();
    let mut candidates = Vec::new();
    for Found { wanted, names } in found {
        for (name, description) in names {
            if !shell_safe(&name) {
                left.unprintable += 1;
                continue;
            }
            let value = format!("{}{name}", wanted.prefix);
            if !value.starts_with(&request.typed) || request.exclude.contains(&value) {
                continue;
            }
            candidates.push(Candidate::new(value, crate::text::printable(&description)));
        }
    }
    candidates.sort_by(|a, b| a.value.cmp(&b.value));
    candidates.dedup_by(|a, b| a.value == b.value);
    if candidates.len() > limit {
        left.beyond_limit = candidates.len() - limit;
        candidates.truncate(limit);
    }
    (
        Completions {
            candidates,
            directive: Directive::NO_FILE_COMP,
        },
        left,
    )
}

/// The protocol's text: a line per candidate (`value<TAB>description`, or the value alone
/// without descriptions), then `:<directive>`. Pure.
pub fn render(completions: &Completions, descriptions: bool) -> String {
    let mut out = String::new();
    for c in &completions.candidates {
        // A value or description is one line by construction; cobra keeps the first line
        // and trims, and so does this.
        let value = c.value.lines().next().unwrap_or("").trim();
        if value.is_empty() {
            continue;
        }
        out.push_str(value);
        let description = c.description.lines().next().unwrap_or("").trim();
        if descriptions && !description.is_empty() {
            out.push('\t');
            out.push_str(description);
        }
        out.push('\n');
    }
    out.push_str(&format!(":{}\n", completions.directive.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn words(line: &str) -> Vec<String> {
        let mut w: Vec<String> = line.split(' ').map(str::to_string).collect();
        if line.is_empty() {
            w = vec![String::new()];
        }
        w
    }

    fn done(line: &str) -> Completions {
        match plan(&crate::cli::Cli::command(), &words(line)) {
            Plan::Done(c) => c,
            Plan::Names(r) => panic!("{line:?}: wanted names {r:?}"),
        }
    }

    fn request(line: &str) -> NamesRequest {
        match plan(&crate::cli::Cli::command(), &words(line)) {
            Plan::Names(r) => r,
            Plan::Done(c) => panic!("{line:?}: done {c:?}"),
        }
    }

    fn values(c: &Completions) -> Vec<&str> {
        c.candidates.iter().map(|c| c.value.as_str()).collect()
    }

    #[test]
    fn subcommands_with_their_about() {
        let c = done("");
        assert!(values(&c).contains(&"plan-drain"), "{c:?}");
        assert!(values(&c).contains(&"status"));
        assert_eq!(c.directive, Directive::NO_FILE_COMP);
        let plan_drain = c.candidates.iter().find(|c| c.value == "plan-drain");
        assert_eq!(
            plan_drain.map(|c| c.description.as_str()),
            Some("Predict, before anything is cordoned, what draining a node will do to every VM")
        );
        assert_eq!(values(&done("pl")), ["plan-drain", "plan-maintenance"]);
        // After global flags and their values.
        assert_eq!(
            values(&done("--from examples/cluster -n prod ex")),
            ["explain"]
        );
        assert!(done("frobnicate ").candidates.is_empty());
        // `help <TAB>`: the commands, not help itself.
        let help = done("help ");
        assert!(values(&help).contains(&"drain"), "{help:?}");
        assert!(!values(&help).contains(&"help"));
    }

    #[test]
    fn flags_long_and_short_with_globals() {
        let c = done("plan-drain --b");
        assert_eq!(values(&c), ["--bandwidth"]);
        assert_eq!(c.directive, Directive::NO_FILE_COMP);
        let all = done("status -");
        let v = values(&all);
        for f in [
            "--node",
            "-l",
            "--selector",
            "-w",
            "--from",
            "-n",
            "-A",
            "-o",
            "--help",
        ] {
            assert!(v.contains(&f), "{f} missing from {v:?}");
        }
        // Hidden flags stay hidden; given flags are not offered again.
        assert!(!v.contains(&"--now"));
        let again = done("status --node n1 -");
        assert!(!values(&again).contains(&"--node"));
    }

    #[test]
    fn enum_values_of_flags_and_positionals() {
        for line in [
            "status -o ",
            "-o ",
            "status --output ",
            "status --output=",
            "status -o=",
        ] {
            let c = done(line);
            assert_eq!(
                values(&c),
                ["table", "wide", "json", "yaml", "html", "name"],
                "{line}"
            );
            assert_eq!(c.directive, Directive::NO_FILE_COMP);
        }
        assert_eq!(values(&done("status -o j")), ["json"]);
        assert_eq!(values(&done("status --output=y")), ["yaml"]);
        assert_eq!(
            values(&done("plan-maintenance --order ")),
            ["given", "auto"]
        );
        assert!(values(&done("completions ")).contains(&"bash"));
        // A value given with the flag is consumed: the next word is a positional.
        let r = request("-o json plan-drain ");
        assert_eq!(r.wanted, [bare(Names::Nodes)]);
    }

    #[test]
    fn paths_are_left_to_the_shell() {
        for line in ["--from ", "status --from=ex", "--kubeconfig ", "snapshot "] {
            let c = done(line);
            assert_eq!(c.directive, Directive::DEFAULT, "{line}");
            assert!(c.candidates.is_empty());
        }
        assert_eq!(done("man --dir ").directive, Directive::FILTER_DIRS);
        // A number has nothing to complete, and no files either.
        assert_eq!(
            done("--request-timeout ").directive,
            Directive::NO_FILE_COMP
        );
    }

    #[test]
    fn dynamic_names_carry_the_source_on_the_line() {
        let r = request("--from examples/cluster plan-drain node-1 n");
        assert_eq!(r.wanted, [bare(Names::Nodes)]);
        assert_eq!(r.typed, "n");
        assert_eq!(r.exclude, ["node-1"]);
        assert_eq!(r.source.from, Some(PathBuf::from("examples/cluster")));

        let r = request("migrate --kubeconfig /k --context c -nprod ");
        assert_eq!(r.wanted, [bare(Names::Vmis)]);
        assert_eq!(r.source.kubeconfig, Some(PathBuf::from("/k")));
        assert_eq!(r.source.context.as_deref(), Some("c"));
        assert_eq!(r.source.namespace.as_deref(), Some("prod"));

        let r = request("-A explain ");
        assert!(r.source.all_namespaces);
        assert_eq!(
            r.wanted,
            [
                bare(Names::Migrations),
                Wanted {
                    names: Names::Vmis,
                    prefix: "vm/".into()
                }
            ]
        );
        assert_eq!(request("explain vmi/pg").wanted[0].prefix, "vmi/");
        assert_eq!(
            request("abort migration/").wanted,
            [Wanted {
                names: Names::Migrations,
                prefix: "migration/".into()
            }]
        );
        assert!(done("migrate migration/").candidates.is_empty());
        assert_eq!(request("-n ").wanted, [bare(Names::Namespaces)]);
        assert_eq!(request("status --namespace=p").typed, "p");
        assert_eq!(request("--context ").wanted, [bare(Names::Contexts)]);
        assert_eq!(request("status --node ").wanted, [bare(Names::Nodes)]);
        assert_eq!(request("status a ").exclude, ["a"]);
        // After --, a flag-looking word is a name.
        assert_eq!(request("plan-drain -- -").typed, "-");
    }

    #[test]
    fn libvirt_targets_are_not_cluster_names() {
        let c = done("migrate --connect qemu:///system ");
        assert!(c.candidates.is_empty());
        assert_eq!(c.directive, Directive::NO_FILE_COMP);
        // explain's single target is given: nothing more to complete.
        assert!(done("explain m1 ").candidates.is_empty());
    }

    fn found(names: Names, prefix: &str, list: &[&str]) -> Found {
        Found {
            wanted: Wanted {
                names,
                prefix: prefix.into(),
            },
            names: list
                .iter()
                .map(|n| (n.to_string(), "ns\u{1b}[31m".to_string()))
                .collect(),
        }
    }

    #[test]
    fn names_are_filtered_sorted_bounded_and_safe() {
        let req = NamesRequest {
            wanted: Vec::new(),
            typed: "n".into(),
            exclude: vec!["node-1".into()],
            source: SourceFlags::default(),
        };
        let (c, left) = finish(
            &req,
            vec![found(
                Names::Nodes,
                "",
                &[
                    "node-3",
                    "node-1",
                    "web",
                    "node-2",
                    "node-2",
                    "n\u{1b}]0;x",
                    "n\nx",
                    "n x",
                ],
            )],
            1000,
        );
        assert_eq!(values(&c), ["node-2", "node-3"]);
        assert_eq!(left.unprintable, 3);
        assert_eq!(c.candidates[0].description, "ns\\u{1b}[31m");
        let (c, left) = finish(
            &NamesRequest {
                typed: String::new(),
                ..req
            },
            vec![
                found(Names::Migrations, "", &["m2", "m1"]),
                found(Names::Vmis, "vm/", &["a", "b"]),
            ],
            3,
        );
        assert_eq!(values(&c), ["m1", "m2", "vm/a"]);
        assert_eq!(left.beyond_limit, 1);
    }

    #[test]
    fn the_protocol_text() {
        let c = Completions {
            candidates: vec![
                Candidate::new("json", "A stable JSON document"),
                Candidate::new("node-1", ""),
            ],
            directive: Directive::NO_FILE_COMP,
        };
        assert_eq!(
            render(&c, true),
            "json\tA stable JSON document\nnode-1\n:4\n"
        );
        assert_eq!(render(&c, false), "json\nnode-1\n:4\n");
        assert_eq!(render(&Completions::files(), true), ":0\n");
    }
}
