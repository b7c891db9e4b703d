//! Which submissions are too alike, each other or our own files (the week's solution and the broken
//! kernels made from it, which students can read in the workspace): winnowed fingerprints
//! ([`crate::similarity`]) with the week's template taken out. Found once, before grade.sh prints
//! its CSV (the column "most like"), and kept as JSON for the class page, with the lines that match
//! for each submission and the one most like it, for the pages that show them side by side.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context as _, Result};

use crate::similarity::{self, Fingerprints};

/// What was found: pairs of submissions, and submissions too like one of our files or of an earlier
/// year's submissions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Likeness {
    /// Submission `a` and submission `b` (by their place in the CSV), most alike first.
    pub pairs: Vec<(usize, usize, f64)>,
    /// Submission and our file (its path as given), most alike first.
    pub ours: Vec<(usize, String, f64)>,
    /// Submission and an earlier year's file (its path as given), most alike first (issue 61).
    pub earlier: Vec<(usize, String, f64)>,
    /// For each pair of [`Likeness::closest_pairs`]: `a`, `b` and the lines of each (from 1) that
    /// match the other.
    pub sides: Vec<(usize, usize, Vec<usize>, Vec<usize>)>,
}

impl Likeness {
    /// Compares every pair of `submissions` (their sources; `None` where none was graded) and each
    /// with each of `ours` and of `earlier` (name, source), the `template`'s fingerprints taken out of
    /// all.
    pub fn find(
        submissions: &[Option<String>],
        template: &str,
        ours: &[(String, String)],
        earlier: &[(String, String)],
    ) -> Likeness {
        let template = Fingerprints::of(template);
        let of = |source: &str| Fingerprints::of(source).without(&template);
        let prints: Vec<Fingerprints> = submissions
            .iter()
            .map(|source| source.as_deref().map_or_else(|| of(""), of))
            .collect();
        let pairs = similarity::alike_pairs(&prints)
            .into_iter()
            .map(|pair| (pair.a, pair.b, pair.similarity))
            .collect();
        let matches = |files: &[(String, String)]| {
            let mut matches = Vec::new();
            for (name, source) in files {
                let file = of(source);
                for (index, print) in prints.iter().enumerate() {
                    if let Some(score) = similarity::too_alike(print, &file) {
                        matches.push((index, name.clone(), score));
                    }
                }
            }
            matches.sort_by(|a: &(usize, String, f64), b| b.2.total_cmp(&a.2));
            matches
        };
        let mut likeness = Likeness {
            pairs,
            ours: matches(ours),
            earlier: matches(earlier),
            sides: Vec::new(),
        };
        let source = |index: usize| submissions[index].as_deref().unwrap_or_default();
        likeness.sides = likeness
            .closest_pairs()
            .into_iter()
            .map(|(a, b, _)| {
                let shared = similarity::common(&prints[a], &prints[b]);
                let lines = |index| similarity::matched_lines(source(index), &shared).into_iter().collect();
                (a, b, lines(a), lines(b))
            })
            .collect();
        likeness
    }

    /// The CSV's "most like" for submission `index`: the most alike of the other submissions
    /// (`names`) and our files, with how alike; empty where none is too alike.
    pub fn most_like(&self, index: usize, names: &[String]) -> String {
        let students = self
            .pairs
            .iter()
            .filter_map(|&(a, b, score)| match (a == index, b == index) {
                (true, _) => Some((names.get(b).cloned().unwrap_or_default(), score)),
                (_, true) => Some((names.get(a).cloned().unwrap_or_default(), score)),
                _ => None,
            });
        let ours = self
            .ours
            .iter()
            .filter(|(at, ..)| *at == index)
            .map(|(_, file, score)| (format!("our {file}"), *score));
        let earlier = self
            .earlier
            .iter()
            .filter(|(at, ..)| *at == index)
            .map(|(_, file, score)| (format!("earlier {file}"), *score));
        // The first of the most alike: another student before our files, our solution (given first)
        // before the broken kernels made from it, our files before earlier years'.
        let most = students
            .chain(ours)
            .chain(earlier)
            .reduce(|best, next| if next.1 > best.1 { next } else { best });
        most.map_or(String::new(), |(who, score)| format!("{who}, {:.0}%", 100.0 * score))
    }

    /// Each submission of a pair too alike with the one most like it, a pair once, most alike first:
    /// the pairs the class page shows side by side (not every pair of a group of fifteen copies).
    pub fn closest_pairs(&self) -> Vec<(usize, usize, f64)> {
        let mut seen = BTreeSet::new();
        // The pairs are sorted most alike first, so a submission's first pair is its closest; `|`
        // and not `||`, so that both are marked seen.
        self.pairs
            .iter()
            .filter(|&&(a, b, _)| seen.insert(a) | seen.insert(b))
            .copied()
            .collect()
    }

    /// The groups of submissions that pairs too alike link, directly or through one another: each of
    /// two or more, its members in the CSV's order, the largest group first. The class page lists
    /// groups, not pairs, so that fifteen copies of one file are one line, not a hundred pairs.
    pub fn clusters(&self) -> Vec<Vec<usize>> {
        let mut parent: BTreeMap<usize, usize> = BTreeMap::new();
        fn root(parent: &mut BTreeMap<usize, usize>, at: usize) -> usize {
            let up = *parent.entry(at).or_insert(at);
            if up == at {
                return at;
            }
            let top = root(parent, up);
            parent.insert(at, top);
            top
        }
        for &(a, b, _) in &self.pairs {
            let (a, b) = (root(&mut parent, a), root(&mut parent, b));
            parent.insert(a.max(b), a.min(b));
        }
        let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for at in parent.keys().copied().collect::<Vec<_>>() {
            let top = root(&mut parent, at);
            groups.entry(top).or_default().push(at);
        }
        let mut groups: Vec<Vec<usize>> = groups.into_values().collect();
        groups.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        groups
    }

    /// The pairs too alike within `group`, from the least to the most alike: (how many, lowest, highest).
    pub fn within_group(&self, group: &[usize]) -> (usize, f64, f64) {
        let scores: Vec<f64> = self
            .pairs
            .iter()
            .filter(|(a, b, _)| group.contains(a) && group.contains(b))
            .map(|&(_, _, score)| score)
            .collect();
        let lowest = scores.iter().copied().fold(f64::INFINITY, f64::min);
        let highest = scores.iter().copied().fold(0.0, f64::max);
        (scores.len(), lowest, highest)
    }

    /// Only what names submissions of the `count` there are (a file of another run's leaves out the
    /// rest, with a line on stderr).
    pub fn within(mut self, count: usize) -> Likeness {
        let before = self.pairs.len() + self.ours.len() + self.earlier.len();
        self.pairs.retain(|&(a, b, _)| a < count && b < count);
        self.ours.retain(|&(a, ..)| a < count);
        self.earlier.retain(|&(a, ..)| a < count);
        self.sides.retain(|&(a, b, ..)| a < count && b < count);
        if self.pairs.len() + self.ours.len() + self.earlier.len() < before {
            eprintln!("feedback: the likeness file names submissions the CSV does not have; those are left out");
        }
        self
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "pairs": self.pairs.iter().map(|(a, b, s)| serde_json::json!([a, b, s])).collect::<Vec<_>>(),
            "ours": self.ours.iter().map(|(a, file, s)| serde_json::json!([a, file, s])).collect::<Vec<_>>(),
            "earlier": self.earlier.iter().map(|(a, file, s)| serde_json::json!([a, file, s])).collect::<Vec<_>>(),
            "sides": self.sides.iter().map(|(a, b, left, right)| serde_json::json!([a, b, left, right])).collect::<Vec<_>>(),
        })
    }

    pub fn from_json(text: &str) -> Result<Likeness> {
        let json: serde_json::Value = serde_json::from_str(text).context("the likeness file is not JSON")?;
        let items = |key: &str| json[key].as_array().cloned().unwrap_or_default();
        let number = |value: &serde_json::Value| value.as_u64().map(|n| n as usize).context("a submission's number");
        let score = |value: &serde_json::Value| value.as_f64().context("a similarity");
        let pairs = items("pairs")
            .iter()
            .map(|pair| Ok((number(&pair[0])?, number(&pair[1])?, score(&pair[2])?)))
            .collect::<Result<_>>()?;
        let files = |key: &str| -> Result<Vec<(usize, String, f64)>> {
            items(key)
                .iter()
                .map(|hit| {
                    Ok((
                        number(&hit[0])?,
                        hit[1].as_str().unwrap_or_default().to_string(),
                        score(&hit[2])?,
                    ))
                })
                .collect()
        };
        let (ours, earlier) = (files("ours")?, files("earlier")?);
        let lines = |value: &serde_json::Value| -> Result<Vec<usize>> {
            value
                .as_array()
                .map_or(Ok(Vec::new()), |lines| lines.iter().map(number).collect())
        };
        // Files of runs before the side-by-side pages have no "sides": no page is made for them.
        let sides = items("sides")
            .iter()
            .map(|side| Ok((number(&side[0])?, number(&side[1])?, lines(&side[2])?, lines(&side[3])?)))
            .collect::<Result<_>>()?;
        Ok(Likeness {
            pairs,
            ours,
            earlier,
            sides,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_like_names_the_closest_of_students_and_our_files_and_survives_json() {
        let likeness = Likeness {
            pairs: vec![(0, 2, 0.91)],
            ours: vec![(2, "kernels/cuda/mmm.cu".into(), 0.97)],
            earlier: vec![(1, "2025/dan.cu".into(), 0.95)],
            sides: vec![(0, 2, vec![3, 4], vec![5])],
        };
        let names: Vec<String> = ["ann", "bob", "cy"].map(String::from).to_vec();
        assert_eq!(likeness.most_like(0, &names), "cy, 91%");
        assert_eq!(likeness.most_like(1, &names), "earlier 2025/dan.cu, 95%");
        assert_eq!(likeness.most_like(2, &names), "our kernels/cuda/mmm.cu, 97%");
        assert_eq!(Likeness::from_json(&likeness.to_json().to_string()).unwrap(), likeness);
        assert!(Likeness::from_json("[1]").is_ok_and(|empty| empty == Likeness::default()));
        assert_eq!(likeness.clusters(), [vec![0, 2]]);
        assert_eq!(
            likeness.within(2),
            Likeness {
                earlier: vec![(1, "2025/dan.cu".into(), 0.95)],
                ..Likeness::default()
            }
        );
    }

    /// Pairs that chain (a with b, b with c) make one group, however they are listed; groups that
    /// share nobody stay apart, the largest first.
    #[test]
    fn pairs_that_chain_are_one_group() {
        let likeness = Likeness {
            pairs: vec![(1, 3, 0.99), (0, 9, 0.95), (3, 9, 0.9), (5, 7, 0.8), (7, 8, 0.77)],
            ..Likeness::default()
        };
        // Each submission beside the one most like it: 3 and 9 are both placed already.
        assert_eq!(
            likeness.closest_pairs(),
            [(1, 3, 0.99), (0, 9, 0.95), (5, 7, 0.8), (7, 8, 0.77)]
        );
        assert_eq!(likeness.clusters(), [vec![0, 1, 3, 9], vec![5, 7, 8]]);
        assert_eq!(likeness.within_group(&[5, 7, 8]), (2, 0.77, 0.8));
        assert_eq!(Likeness::default().clusters(), Vec::<Vec<usize>>::new());
    }
}
