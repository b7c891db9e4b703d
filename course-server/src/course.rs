//! The course file (`course.toml`): the course's weeks (their deadline, the cases kept on the server,
//! last or best submission, leaderboard on or off), its students (the ids file the grader reads), the
//! database and the limits. Read once at start; every error names the file and what is wrong in it.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use grader::csv::shown;
use grader::weeks::{self, Week};
use serde::Deserialize;

/// The course file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    /// The students: lines `NAME,STUDENT_ID`, as `grade.sh --ids` reads them.
    students: PathBuf,
    /// The SQLite file (created where missing); default: beside the course file, `course.sqlite`.
    database: Option<PathBuf>,
    /// Where the server listens; default 127.0.0.1:8080.
    listen: Option<String>,
    #[serde(default)]
    limits: Limits,
    #[serde(rename = "week", default)]
    weeks: Vec<WeekFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WeekFile {
    name: String,
    deadline: String,
    #[serde(default)]
    choose: Choose,
    cases: Option<PathBuf>,
    #[serde(default)]
    hide_cases: bool,
    #[serde(default)]
    leaderboard: bool,
    weights: Option<PathBuf>,
    rule_cap: Option<f64>,
    time_limit: Option<u64>,
}

/// The limits that keep the server fair and up.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// The largest file a student may hand in, in bytes.
    pub upload_bytes: usize,
    /// Submissions per student per hour.
    pub per_hour: u32,
    /// Requests per second a client may make on average (bursts of four times as many).
    pub requests_per_second: f64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            upload_bytes: 1 << 20,
            per_hour: 10,
            requests_per_second: 10.0,
        }
    }
}

/// Which submission before the deadline is the grade.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Choose {
    #[default]
    Last,
    Best,
}

/// One week of the course.
#[derive(Debug, Clone)]
pub struct CourseWeek {
    pub week: &'static Week,
    /// Unix seconds.
    pub deadline: i64,
    pub deadline_shown: String,
    pub choose: Choose,
    /// The cases' text (hidden ones: never sent to a student), or none for the week's own.
    pub cases: Option<String>,
    pub hide_cases: bool,
    pub leaderboard: bool,
    pub weights: Option<String>,
    pub rule_cap: f64,
    pub time_limit: u64,
}

/// A student: the name their submissions are graded under and their id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Student {
    pub name: String,
    pub id: String,
}

/// The course, read and checked.
#[derive(Debug, Clone)]
pub struct Course {
    pub name: String,
    pub students: Vec<Student>,
    pub database: PathBuf,
    pub listen: String,
    pub limits: Limits,
    pub weeks: Vec<CourseWeek>,
}

impl Course {
    /// Reads `path`; relative paths in it are relative to its folder.
    pub fn read(path: &Path) -> Result<Course> {
        let at = shown(path);
        let text = std::fs::read_to_string(path).with_context(|| format!("{at}: cannot read"))?;
        let file: File = toml::from_str(&text).map_err(|err| anyhow!("{at}: {}", one_line(&err.to_string())))?;
        let folder = path.parent().unwrap_or(Path::new("."));
        let beside = |file: &Path| folder.join(file);
        let students = read_students(&beside(&file.students))?;
        let mut weeks = Vec::new();
        for week in &file.weeks {
            let read = |file: &Option<PathBuf>, what: &str| -> Result<Option<String>> {
                file.as_ref()
                    .map(|file| {
                        std::fs::read_to_string(beside(file))
                            .with_context(|| format!("{at}: week {}: {what} {}: cannot read", week.name, shown(file)))
                    })
                    .transpose()
            };
            let found = weeks::week(&week.name)
                .ok_or_else(|| anyhow!("{at}: no week {} (weeks: {})", week.name, weeks::names()))?;
            if weeks.iter().any(|other: &CourseWeek| other.week.name == week.name) {
                bail!("{at}: week {} is there twice", week.name);
            }
            let deadline = chrono::DateTime::parse_from_rfc3339(&week.deadline).map_err(|err| {
                anyhow!(
                    "{at}: week {}: deadline {:?} is no RFC 3339 time such as 2026-12-07T23:59:00+01:00 ({err})",
                    week.name,
                    week.deadline
                )
            })?;
            let rule_cap = week.rule_cap.unwrap_or(50.0);
            if !(0.0..=100.0).contains(&rule_cap) {
                bail!("{at}: week {}: rule_cap {rule_cap} is not 0 to 100", week.name);
            }
            weeks.push(CourseWeek {
                week: found,
                deadline: deadline.timestamp(),
                deadline_shown: week.deadline.clone(),
                choose: week.choose,
                cases: read(&week.cases, "cases")?,
                hide_cases: week.hide_cases,
                leaderboard: week.leaderboard,
                weights: read(&week.weights, "weights")?,
                rule_cap,
                time_limit: week.time_limit.unwrap_or(600).max(1),
            });
        }
        if weeks.is_empty() {
            bail!("{at}: no [[week]]: name at least one week ({})", weeks::names());
        }
        Ok(Course {
            name: file.name,
            students,
            database: beside(file.database.as_deref().unwrap_or(Path::new("course.sqlite"))),
            listen: file.listen.unwrap_or_else(|| "127.0.0.1:8080".into()),
            limits: file.limits,
            weeks,
        })
    }

    pub fn week(&self, name: &str) -> Option<&CourseWeek> {
        self.weeks.iter().find(|week| week.week.name == name)
    }

    pub fn student(&self, id: &str) -> Option<&Student> {
        self.students.iter().find(|student| student.id == id)
    }
}

/// The first line of a message (toml's span a few lines long).
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    lines.join(" ")
}

/// The students from an ids file: lines `NAME,STUDENT_ID` (a name quoted as CSV quotes it). A name is
/// the file name the grader grades, so it may not hold `/` or begin with a dot; names and ids are
/// each unique.
pub fn read_students(path: &Path) -> Result<Vec<Student>> {
    let at = shown(path);
    let mut students: Vec<Student> = Vec::new();
    // The lines as grade.sh --ids reads them; a course's names and ids are also each unique.
    for (number, name, id) in grader::ids::entries(path, &at)? {
        if name.contains('/') || name.starts_with('.') || name.chars().any(char::is_control) {
            bail!(
                "{at}, line {number}: the name {name:?} is no file name (a '/', a leading dot or a control character)"
            );
        }
        if !id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-@".contains(&b)) {
            bail!("{at}, line {number}: the id {id:?} holds more than letters, digits and . _ - @");
        }
        if let Some(other) = students.iter().find(|other| other.name == name || other.id == id) {
            bail!(
                "{at}, line {number}: {name},{id} repeats the name or id of {},{}",
                other.name,
                other.id
            );
        }
        students.push(Student { name, id });
    }
    if students.is_empty() {
        bail!("{at}: no students (lines NAME,STUDENT_ID)");
    }
    Ok(students)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn course(toml: &str, students: &str) -> Result<Course> {
        let dir = std::env::temp_dir().join(format!("course-test-{}-{}", std::process::id(), toml.len()));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("ids.csv"), students)?;
        std::fs::write(dir.join("course.toml"), toml)?;
        let read = Course::read(&dir.join("course.toml"));
        std::fs::remove_dir_all(&dir)?;
        read
    }

    const WEEK: &str = "name = \"GPU\"\nstudents = \"ids.csv\"\n[[week]]\nname = \"03-mmm-tiled\"\ndeadline = \"2026-12-07T23:59:00+01:00\"\n";

    #[test]
    fn a_course_is_read_with_its_defaults() {
        let read = course(WEEK, "ann,s1\n\"Doe, Jane\",s2\n").unwrap();
        assert_eq!(read.students[1].name, "Doe, Jane");
        assert_eq!(read.weeks[0].deadline, 1_796_684_340);
        assert_eq!(read.weeks[0].choose, Choose::Last);
        assert_eq!(read.limits.upload_bytes, 1 << 20);
        assert!(read.database.ends_with("course.sqlite"));
    }

    #[test]
    fn every_mistake_is_one_line_naming_it() {
        let cases = [
            (WEEK.replace("03-mmm-tiled", "03-mmm"), "ann,s1", "no week 03-mmm"),
            (WEEK.replace("+01:00", ""), "ann,s1", "no RFC 3339 time"),
            (format!("{WEEK}colour = 1\n"), "ann,s1", "unknown field"),
            (WEEK.to_string(), "ann", "line 1: not FILE_OR_FOLDER_NAME,STUDENT_ID"),
            (WEEK.to_string(), "ann,s1\nbob,s1", "line 2: bob,s1 repeats"),
            (WEEK.to_string(), "../x,s1", "no file name"),
            (WEEK.to_string(), "ann,s 1", "the id"),
            (WEEK.to_string(), "# nobody\n", "no students"),
            (
                format!("{WEEK}[[week]]\nname = \"03-mmm-tiled\"\ndeadline = \"2026-12-07T23:59:00Z\"\n"),
                "a,1",
                "twice",
            ),
            (format!("{WEEK}rule_cap = 101.0\n"), "a,1", "rule_cap 101"),
        ];
        for (toml, students, expected) in cases {
            let err = course(&toml, students).unwrap_err().to_string();
            assert!(err.contains(expected) && !err.contains('\n'), "{expected}: {err}");
        }
    }
}
