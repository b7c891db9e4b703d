//! The gradebook and the leaderboard of a week, from its grades: each student's last (or best)
//! grade before the deadline, as the grader's CSV with the column "student id"; and the passing
//! submissions ordered by their time against ours.

use grader::csv::{field, record};

use crate::course::{Choose, Course, CourseWeek};
use crate::store::WeekGrade;

/// Each student's chosen grade of the week, in the course's order of students (none: nothing graded
/// before the deadline). `grades` oldest first.
pub fn chosen<'a>(
    course: &'a Course,
    week: &CourseWeek,
    grades: &'a [WeekGrade],
) -> Vec<(&'a crate::course::Student, Option<&'a WeekGrade>)> {
    course
        .students
        .iter()
        .map(|student| {
            let mut theirs = grades
                .iter()
                .filter(|each| each.student == student.id && each.grade.score.is_some());
            let chosen = match week.choose {
                Choose::Last => theirs.next_back(),
                // The first to reach the best score: a later equal one changes nothing.
                Choose::Best => theirs.fold(None, |best: Option<&WeekGrade>, each| match best {
                    Some(best) if best.grade.score >= each.grade.score => Some(best),
                    _ => Some(each),
                }),
            };
            (student, chosen)
        })
        .collect()
}

/// The gradebook CSV: the header of the week's grades and "student id", a row per student; a student
/// with no grade gets a row with the note "nothing graded before the deadline" and score 0.
pub fn csv(course: &Course, week: &CourseWeek, grades: &[WeekGrade]) -> String {
    let chosen = chosen(course, week, grades);
    let header = chosen
        .iter()
        .find_map(|(_, chosen)| chosen.map(|chosen| chosen.grade.header.clone()))
        .unwrap_or_else(|| "student,file,note,score".to_string());
    let names = record(&header).unwrap_or_default();
    let mut text = format!("{header},student id\n");
    for (student, chosen) in chosen {
        let row = match chosen {
            Some(chosen) => chosen.grade.row.clone(),
            None => {
                let fields: Vec<String> = names
                    .iter()
                    .enumerate()
                    .map(|(at, name)| match name.as_str() {
                        _ if at == 0 => field(&student.name),
                        "note" => field("nothing graded before the deadline"),
                        "score" => "0.0".into(),
                        _ => String::new(),
                    })
                    .collect();
                fields.join(",")
            }
        };
        text.push_str(&format!("{row},{}\n", field(&student.id)));
    }
    text
}

/// The leaderboard: each student's fastest passing grade of the week (time ratio against ours, lower
/// is faster), fastest first: (student id, ratio).
pub fn leaderboard(grades: &[WeekGrade]) -> Vec<(String, f64)> {
    let mut best: Vec<(String, f64)> = Vec::new();
    for WeekGrade { student, grade, .. } in grades {
        let Some(ratio) = grade.ratio.filter(|_| grade.passing) else {
            continue;
        };
        match best.iter_mut().find(|(id, _)| id == student) {
            Some((_, held)) => *held = held.min(ratio),
            None => best.push((student.clone(), ratio)),
        }
    }
    best.sort_by(|a, b| a.1.total_cmp(&b.1));
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::course::{Limits, Student};
    use crate::store::Grade;

    fn grade(score: Option<f64>, passing: bool, ratio: Option<f64>, tag: &str) -> Grade {
        Grade {
            state: "graded".into(),
            header: "student,file,case 1,passed,time ratio,note,score".into(),
            row: format!(
                "{tag},{tag}.cu,PASS,1 of 1,1.0,\"\",{}",
                score.map_or(String::new(), |s| s.to_string())
            ),
            score,
            passing,
            ratio,
            kept: String::new(),
            page: None,
            details: None,
        }
    }

    fn course(choose: Choose) -> Course {
        Course {
            name: "c".into(),
            students: ["ann", "bob", "Doe, Jane"]
                .iter()
                .enumerate()
                .map(|(at, name)| Student {
                    name: name.to_string(),
                    id: format!("s{at}"),
                })
                .collect(),
            database: "x".into(),
            listen: "x".into(),
            limits: Limits::default(),
            weeks: vec![CourseWeek {
                week: grader::weeks::week("03-mmm-tiled").unwrap(),
                deadline: 0,
                deadline_shown: String::new(),
                choose,
                cases: None,
                hide_cases: false,
                leaderboard: true,
                weights: None,
                rule_cap: 50.0,
                time_limit: 600,
            }],
        }
    }

    fn grades() -> Vec<WeekGrade> {
        vec![
            WeekGrade {
                student: "s0".into(),
                submission: 1,
                grade: grade(Some(100.0), true, Some(1.2), "ann-first"),
            },
            WeekGrade {
                student: "s0".into(),
                submission: 2,
                grade: grade(Some(50.0), false, Some(0.9), "ann-second"),
            },
            WeekGrade {
                student: "s0".into(),
                submission: 3,
                grade: grade(None, false, None, "ann-machine"),
            },
            WeekGrade {
                student: "s1".into(),
                submission: 4,
                grade: grade(Some(100.0), true, Some(0.95), "bob"),
            },
        ]
    }

    #[test]
    fn last_takes_the_last_grade_best_the_first_best_and_nobody_is_left_out() {
        let grades = grades();
        let last = course(Choose::Last);
        let text = csv(&last, &last.weeks[0], &grades);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "student,file,case 1,passed,time ratio,note,score,student id");
        assert!(
            lines[1].starts_with("ann-second,") && lines[1].ends_with(",50,\"s0\""),
            "{text}"
        );
        assert!(lines[2].starts_with("bob,"), "{text}");
        assert_eq!(
            lines[3],
            "\"Doe, Jane\",,,,,\"nothing graded before the deadline\",0.0,\"s2\""
        );
        let best = course(Choose::Best);
        let text = csv(&best, &best.weeks[0], &grades);
        assert!(text.lines().nth(1).unwrap().starts_with("ann-first,"), "{text}");
    }

    #[test]
    fn the_leaderboard_holds_passing_grades_fastest_first_once_per_student() {
        let board = leaderboard(&grades());
        assert_eq!(board, vec![("s1".to_string(), 0.95), ("s0".to_string(), 1.2)]);
    }
}
