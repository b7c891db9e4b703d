//! `--check --cases FILE`: cases a teacher wrote, which the students have not seen. One case per
//! line, its fields separated by spaces, `#` starts a comment; each lab says which fields (sizes and
//! a seed for lab-mmm, say). A bad line is a one-line error naming the file, the line and the value.
//!
//! Every case set, the week's own included, is named by a hash of its cases written out in one
//! canonical form (FNV-1a, 64 bits: a name to compare grading runs by, not a defence), so a CSV says
//! which cases its verdicts are for.

use std::io::Read as _;
use std::path::Path;

use anyhow::{bail, Context as _, Result};

/// A cases file is a few lines; past this it is not one (a device, or the wrong file).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The cases a check runs: their names for the table, the hash of the set, and which of them
/// compute-sanitizer's racecheck and synccheck run on under `--sanitize` ([`SharedChecks`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CaseSet<C> {
    pub cases: Vec<C>,
    pub names: Vec<String>,
    pub hash: String,
    /// Per case: whether racecheck and synccheck run on it (memcheck runs on every case).
    pub shared_checked: Vec<bool>,
    /// The budget that left some cases out of racecheck and synccheck, as the table's heading says
    /// it: `None` where every case is checked.
    pub shared_budget: Option<&'static str>,
    /// The case racecheck and synccheck run on in every `--check`, without `--sanitize` (issue 61:
    /// a missing barrier that the cases' values hide): the one of least work among those
    /// [`SharedChecks::races`] holds for. `None` where there is none.
    pub race_case: Option<usize>,
}

impl<C> CaseSet<C> {
    /// A set whose every case runs under every tool.
    pub fn every_case_checked(cases: Vec<C>, names: Vec<String>, hash: String) -> CaseSet<C> {
        let shared_checked = vec![true; cases.len()];
        CaseSet {
            cases,
            names,
            hash,
            shared_checked,
            shared_budget: None,
            race_case: None,
        }
    }

    /// For the heading of a sanitized check: which cases racecheck and synccheck left out, where
    /// the budget left out any.
    pub fn shared_checks_note(&self) -> Option<String> {
        let budget = self.shared_budget?;
        let checked = self.shared_checked.iter().filter(|&&checked| checked).count();
        (checked < self.cases.len()).then(|| {
            format!(
                "racecheck and synccheck on {checked} of {} cases (those within {budget}; of a kernel with none within it, its smallest), memcheck on all",
                self.cases.len()
            )
        })
    }
}

/// Which cases compute-sanitizer's racecheck and synccheck run on, for a lab whose cases grow large.
/// They follow every shared-memory access and barrier and slow a kernel the most: on an H100 the
/// check of week 3's 1000 x 999 x 1001 product alone took 156.6 s under the three tools in f64, that
/// of its 255 x 257 x 256 one 6.8 s (`results/h100/issue41/sanitize-per-case.log`). They run on every
/// case whose work is within `most`, and on at least one case of each kernel the cases run (its
/// `group`): where none of a kernel's cases is within `most`, its case with the least work. So no
/// kernel escapes them, and a `--sanitize` run never drops them silently. Labs without one check
/// every case.
pub struct SharedChecks<'a, C> {
    /// A case's work in the lab's own unit (multiply-adds for lab-mmm): racecheck's time grows with it.
    pub work: &'a dyn Fn(&C) -> u64,
    /// Which of the student's kernels a case runs (lab-mmm: the kernel and the precision), each of
    /// which racecheck must see at least once.
    pub group: &'a dyn Fn(&C) -> u64,
    /// The most work of a case racecheck and synccheck run on.
    pub most: u64,
    /// `most` as the table's heading says it: "2^25 multiply-adds".
    pub described: &'static str,
    /// Whether a race the week's technique could have shows on a case (lab-mmm: a tiled case whose
    /// K spans two tiles, where a missing barrier lets a tile be overwritten while it is read).
    pub races: &'a dyn Fn(&C) -> bool,
}

impl<C> SharedChecks<'_, C> {
    /// Per case of `cases`: whether racecheck and synccheck run on it.
    fn chosen(&self, cases: &[C]) -> Vec<bool> {
        let work: Vec<u64> = cases.iter().map(|case| (self.work)(case)).collect();
        let groups: Vec<u64> = cases.iter().map(|case| (self.group)(case)).collect();
        let mut chosen: Vec<bool> = work.iter().map(|&work| work <= self.most).collect();
        for &group in &groups {
            let members = || (0..cases.len()).filter(|&index| groups[index] == group);
            if !members().any(|index| chosen[index]) {
                if let Some(least) = members().min_by_key(|&index| work[index]) {
                    chosen[least] = true;
                }
            }
        }
        chosen
    }

    /// The case of least work that [`SharedChecks::races`] holds for and that is within the budget.
    fn race_case(&self, cases: &[C]) -> Option<usize> {
        (0..cases.len())
            .filter(|&index| (self.races)(&cases[index]) && (self.work)(&cases[index]) <= self.most)
            .min_by_key(|&index| (self.work)(&cases[index]))
    }
}

/// A lab's reading of one line's fields into cases, or why they are none.
pub type ParseLine<'a, C> = &'a dyn Fn(&[&str]) -> Result<Vec<C>, String>;

/// How a lab's cases are written: the fields of a line (`"M K N PRECISION SEED"`), how a line's
/// fields become cases (several where one line runs with each chosen kernel), and a case's canonical
/// line (for the hash) and name (for the table).
pub struct CaseFormat<'a, C> {
    pub fields: &'static str,
    pub parse: ParseLine<'a, C>,
    pub line: &'a dyn Fn(&C) -> String,
    pub name: &'a dyn Fn(&C) -> String,
    /// Where racecheck and synccheck run only on the smaller cases; `None`: on every case.
    pub shared_checks: Option<SharedChecks<'a, C>>,
}

impl<C> CaseFormat<'_, C> {
    /// The week's cases, or those of `file`; a file that cannot be read or has a bad line is a
    /// [`crate::exit::Usage`] error (exit code 2: the call is wrong, not the student's kernel).
    pub fn load(&self, file: Option<&Path>, builtin: Vec<C>) -> Result<CaseSet<C>> {
        let cases = match file {
            Some(path) => self
                .read(path)
                .map_err(|err| anyhow::Error::new(crate::exit::Usage(format!("{err:#}"))))?,
            None => builtin,
        };
        let lines: Vec<String> = cases.iter().map(|case| (self.line)(case)).collect();
        let names = cases.iter().map(|case| (self.name)(case)).collect();
        let mut set = CaseSet::every_case_checked(cases, names, case_set_hash(&lines));
        if let Some(shared) = &self.shared_checks {
            set.shared_checked = shared.chosen(&set.cases);
            set.shared_budget = Some(shared.described);
            set.race_case = shared.race_case(&set.cases);
        }
        Ok(set)
    }

    fn read(&self, path: &Path) -> Result<Vec<C>> {
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
            .with_context(|| format!("cannot read the cases file {}", path.display()))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            bail!(
                "{}: over {} bytes; a cases file has one line per case",
                path.display(),
                MAX_FILE_BYTES
            );
        }
        let text =
            String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{}: not a text file (UTF-8)", path.display()))?;
        self.parse_text(&path.display().to_string(), &text)
    }

    /// The cases of a file's text; `file` names it in errors.
    pub fn parse_text(&self, file: &str, text: &str) -> Result<Vec<C>> {
        let wanted = self.fields.split_whitespace().count();
        let mut cases = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split('#').next().unwrap_or_default().split_whitespace().collect();
            if fields.is_empty() {
                continue;
            }
            if fields.len() != wanted {
                bail!(
                    "{file}:{}: {} fields where a case has {wanted} ({})",
                    index + 1,
                    fields.len(),
                    self.fields
                );
            }
            cases.extend((self.parse)(&fields).map_err(|why| anyhow::anyhow!("{file}:{}: {why}", index + 1))?);
        }
        if cases.is_empty() {
            bail!("{file}: no cases (one per line: {})", self.fields);
        }
        Ok(cases)
    }
}

/// `value` as a number in `range`, or an error naming the field: for a lab's `parse`.
pub fn field<T>(value: &str, name: &str, range: std::ops::RangeInclusive<T>) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    match value.parse::<T>() {
        Ok(number) if range.contains(&number) => Ok(number),
        _ => Err(format!(
            "{name} {value:?} is not a number from {} to {}",
            range.start(),
            range.end()
        )),
    }
}

/// `value` as one of `choices` (`("f64", true)`), or an error listing them.
pub fn choice<T: Copy>(value: &str, name: &str, choices: &[(&str, T)]) -> Result<T, String> {
    choices
        .iter()
        .find(|(text, _)| *text == value)
        .map(|(_, choice)| *choice)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(text, _)| *text).collect();
            format!("{name} {value:?} is not one of {}", names.join(", "))
        })
}

/// FNV-1a (64 bits) of the canonical lines, one per case, as 16 hex digits.
pub fn case_set_hash(lines: &[String]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in lines.iter().flat_map(|line| line.bytes().chain([b'\n'])) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lab whose cases are `N SEED`, and whose line `N SEED` also gives a second case at 2N.
    fn with_format<R>(body: impl FnOnce(&CaseFormat<(u32, u64)>) -> R) -> R {
        let parse = |fields: &[&str]| -> Result<Vec<(u32, u64)>, String> {
            let n = field(fields[0], "N", 1..=1000)?;
            Ok(vec![(n, field(fields[1], "SEED", 0..=u64::MAX)?), (2 * n, 0)])
        };
        let line = |case: &(u32, u64)| format!("{} {}", case.0, case.1);
        let name = |case: &(u32, u64)| format!("n = {}", case.0);
        body(&CaseFormat {
            fields: "N SEED",
            parse: &parse,
            line: &line,
            name: &name,
            shared_checks: None,
        })
    }

    #[test]
    fn lines_become_cases_and_comments_and_blank_lines_do_not() {
        let cases = with_format(|format| {
            format
                .parse_text("c.txt", "# hidden cases\n\n17 3  # odd\n  1 0\n")
                .unwrap()
        });
        assert_eq!(cases, [(17, 3), (34, 0), (1, 0), (2, 0)]);
    }

    #[test]
    fn a_bad_line_names_the_file_the_line_and_the_value() {
        let error = |text: &str| with_format(|format| format.parse_text("c.txt", text).unwrap_err().to_string());
        assert_eq!(error("17 3\n0 1\n"), "c.txt:2: N \"0\" is not a number from 1 to 1000");
        assert_eq!(error("x 1\n"), "c.txt:1: N \"x\" is not a number from 1 to 1000");
        assert_eq!(
            error("5 -1\n"),
            "c.txt:1: SEED \"-1\" is not a number from 0 to 18446744073709551615"
        );
        assert_eq!(error("5\n"), "c.txt:1: 1 fields where a case has 2 (N SEED)");
        assert_eq!(error("# nothing\n"), "c.txt: no cases (one per line: N SEED)");
        assert_eq!(
            choice("f16", "PRECISION", &[("f64", 1), ("f32", 2)]).unwrap_err(),
            "PRECISION \"f16\" is not one of f64, f32"
        );
        let missing = with_format(|format| {
            format
                .load(Some(Path::new("/no/such/cases.txt")), Vec::new())
                .unwrap_err()
        });
        assert!(
            format!("{missing:#}").starts_with("cannot read the cases file /no/such/cases.txt: "),
            "{missing:#}"
        );
        assert_eq!(
            crate::exit::exit_code(&missing),
            2,
            "issue 45: a bad cases file is a usage error"
        );
    }

    #[test]
    fn the_hash_names_the_cases_not_their_spelling() {
        let (one, two) = with_format(|format| {
            (
                format.load(None, vec![(17, 3)]).unwrap(),
                format.load(None, vec![(17, 4)]).unwrap(),
            )
        });
        assert_ne!(one.hash, two.hash);
        assert_eq!(one.names, ["n = 17"]);
        let written = with_format(|format| {
            let path = common::private_dir::PrivateDir::new("cases-test").unwrap();
            std::fs::write(path.path().join("c"), "17   3 # same case, other spacing\n").unwrap();
            format.load(Some(&path.path().join("c")), Vec::new()).unwrap()
        });
        assert_eq!(
            written.hash,
            with_format(|format| format.load(None, vec![(17, 3), (34, 0)]).unwrap()).hash
        );
        assert_eq!(case_set_hash(&[]), "cbf29ce484222325");
        assert_eq!(case_set_hash(&["a".to_string()]).len(), 16);
    }

    #[test]
    fn racecheck_runs_on_the_cases_within_the_budget_or_else_on_the_smallest() {
        // Work is N; the group (the kernel a case runs) is the seed.
        let work = |case: &(u32, u64)| u64::from(case.0);
        let group = |case: &(u32, u64)| case.1;
        // Races show from N = 50 on.
        let races = |case: &(u32, u64)| case.0 >= 50;
        let shared = SharedChecks {
            work: &work,
            group: &group,
            most: 100,
            described: "100 units",
            races: &races,
        };
        let set = |cases: Vec<(u32, u64)>| {
            with_format(|format| {
                CaseFormat {
                    shared_checks: Some(SharedChecks { ..shared }),
                    ..*format
                }
                .load(None, cases)
                .unwrap()
            })
        };
        let some = set(vec![(17, 0), (1000, 0), (100, 0), (101, 0)]);
        assert_eq!(some.shared_checked, [true, false, true, false]);
        // Issue 61: every check runs racecheck on the least work where races show, within the budget.
        assert_eq!(some.race_case, Some(2));
        assert_eq!(
            set(vec![(17, 0), (1000, 0)]).race_case,
            None,
            "none within the budget shows races"
        );
        assert_eq!(
            some.shared_checks_note().unwrap(),
            "racecheck and synccheck on 2 of 4 cases (those within 100 units; of a kernel with none within it, its smallest), memcheck on all"
        );
        // A kernel whose cases are all large still gets its smallest, beside another's small ones;
        // of equal ones, the first.
        let mixed = set(vec![(64, 1), (300, 2), (200, 2), (200, 3), (200, 3), (64, 1)]);
        assert_eq!(mixed.shared_checked, [true, false, true, true, false, true]);
        let none_within = set(vec![(500, 0), (200, 0), (300, 0)]);
        assert_eq!(
            none_within.shared_checked,
            [false, true, false],
            "the smallest still runs"
        );
        let all_within = set(vec![(1, 0), (2, 0)]);
        assert_eq!(all_within.shared_checked, [true, true]);
        assert_eq!(
            all_within.shared_checks_note(),
            None,
            "nothing left out, nothing to say"
        );
        let unbudgeted = with_format(|format| format.load(None, vec![(1000, 0)]).unwrap());
        assert_eq!(
            (unbudgeted.shared_checked, unbudgeted.shared_budget),
            (vec![true], None)
        );
    }
}
