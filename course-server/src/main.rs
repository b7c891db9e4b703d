//! `course-server`: the course server (issue 63) and its command line. `--help` says everything;
//! each module's doc says what it owns: the course file ([`course`]), the database and queue
//! ([`store`]), tokens and limits ([`auth`]), the HTTP API ([`server`]), the pages ([`web`]), the
//! gradebook and leaderboard ([`gradebook`](mod@gradebook)), the class page served live ([`class`]), the GPU workers ([`worker`]) and the command line's
//! client ([`client`]). It depends on `grader` (no CUDA crate): a worker runs the labs as programs.

mod auth;
mod class;
mod client;
mod course;
mod gradebook;
mod server;
mod store;
mod web;
mod worker;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};

use crate::course::Course;
use crate::store::{Role, Store, Who};

const ABOUT: &str = "The course server: students hand in from a laptop (web page, `course-server submit`, or curl), GPU workers pull the queue and grade with the grader's own check, the feedback page comes back in minutes.";

const LONG_ABOUT: &str = "The course server: students hand in from a laptop (web page, `course-server submit`, or curl), GPU workers pull the queue and grade with the grader's own check, the feedback page comes back in minutes.

Start a course on one machine:
  course-server tokens --course course.toml --teacher --all-students > tokens.csv   (each shown once)
  course-server --course course.toml                 (serves; one worker per GPU of this machine)

Add a worker on any machine that reaches the server (a Slurm job, another GPU node):
  course-server tokens --course course.toml --worker node7 > worker.token
  COURSE_TOKEN=$(cat worker.token | cut -d, -f2) course-server worker --server http://HOST:8080

A student, without a GPU:
  COURSE_TOKEN=... course-server submit --server http://HOST:8080 03-mmm-tiled mmm.cu --wait
  curl -H \"Authorization: Bearer $COURSE_TOKEN\" --data-binary @mmm.cu http://HOST:8080/api/weeks/03-mmm-tiled/submissions";

#[derive(Parser, Debug)]
#[command(name = "course-server", about = ABOUT, long_about = LONG_ABOUT, args_conflicts_with_subcommands = true)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: Serve,
}

/// Serving: the default command.
#[derive(clap::Args, Debug)]
struct Serve {
    /// The course file (weeks, deadlines, cases, students, limits)
    #[arg(long, value_name = "FILE")]
    course: Option<PathBuf>,
    /// Listen here instead of the course file's address (127.0.0.1:8080 by default)
    #[arg(long, value_name = "ADDRESS")]
    listen: Option<String>,
    /// Start N workers on this machine (default: one per GPU nvidia-smi lists; 0 for none)
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// The local workers only compile and judge the static rules (no GPU: grades without scores)
    #[arg(long)]
    dry_run: bool,
    /// The local workers grade nothing and answer after MS milliseconds (tests and load tests)
    #[arg(long, value_name = "MS")]
    stand_in: Option<u64>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Makes tokens and prints them once as NAME,TOKEN lines (only their hashes are kept)
    Tokens {
        #[arg(long, value_name = "FILE")]
        course: PathBuf,
        /// A token for every student who has none yet
        #[arg(long)]
        all_students: bool,
        /// A new token for this student id (the old one stops working); repeat for more
        #[arg(long, value_name = "ID")]
        student: Vec<String>,
        /// A new token for the teacher (the admin page)
        #[arg(long)]
        teacher: bool,
        /// A new token for workers named NAME (a cluster, a node)
        #[arg(long, value_name = "NAME")]
        worker: Option<String>,
    },
    /// Grades jobs from a server: on this machine's GPU (CUDA_VISIBLE_DEVICES), with the token in
    /// COURSE_TOKEN or --token-file
    Worker {
        #[arg(long, value_name = "URL")]
        server: String,
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// The worker's name on the admin page (default: the host name and the GPU)
        #[arg(long)]
        name: Option<String>,
        /// Compile and judge the static rules only (no GPU)
        #[arg(long)]
        dry_run: bool,
        /// Grade nothing: answer after MS milliseconds with a made-up row
        #[arg(long, value_name = "MS")]
        stand_in: Option<u64>,
        /// Ask for work every MS milliseconds while the queue is empty
        #[arg(long, value_name = "MS", default_value_t = 1000)]
        poll: u64,
        /// Stop after N jobs
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
    },
    /// Hands in FILE for WEEK, with the token in COURSE_TOKEN or --token-file
    Submit {
        #[arg(long, value_name = "URL")]
        server: String,
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// Wait for the grade and print its verdicts
        #[arg(long)]
        wait: bool,
        week: String,
        file: PathBuf,
    },
    /// Your submissions and their states
    Status {
        #[arg(long, value_name = "URL")]
        server: String,
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
    },
    /// Writes WEEK's gradebook: each student's last (or best) grade before the deadline, as grade.sh's CSV
    Gradebook {
        #[arg(long, value_name = "FILE")]
        course: PathBuf,
        week: String,
        /// Write to FILE (the previous FILE kept as FILE.bak) instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Grades WEEK's on-time submissions again (new cases, a fixed rule), after the students' own
    Regrade {
        #[arg(long, value_name = "FILE")]
        course: PathBuf,
        week: String,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let text = format!("{err:#}").replace('\n', " ");
            eprintln!("course-server: error: {text}");
            ExitCode::from(1)
        }
    }
}

fn run(args: Args) -> Result<u8> {
    match args.command {
        None => serve(args.serve),
        Some(Command::Tokens {
            course,
            all_students,
            student,
            teacher,
            worker,
        }) => tokens(&course, all_students, &student, teacher, worker.as_deref()),
        Some(Command::Worker {
            server,
            token_file,
            name,
            dry_run,
            stand_in,
            poll,
            jobs,
        }) => {
            let client = client::Client::new(&server, client::token(token_file.as_deref())?);
            // The token stays in this process: nothing the worker starts (a lab, a compiler, the
            // student's program) inherits it. No thread runs yet, so the environment is ours alone.
            std::env::remove_var("COURSE_TOKEN");
            let device = std::env::var("CUDA_VISIBLE_DEVICES").ok();
            let name = name.unwrap_or_else(|| default_name(device.as_deref()));
            let options = worker::Options {
                name,
                device,
                dry_run,
                stand_in: stand_in.map(Duration::from_millis),
                poll: Duration::from_millis(poll),
                jobs,
            };
            worker::Worker::new(client, options)?.run()?;
            Ok(0)
        }
        Some(Command::Submit {
            server,
            token_file,
            wait,
            week,
            file,
        }) => {
            let client = client::Client::new(&server, client::token(token_file.as_deref())?);
            client::submit(&client, &week, &file, wait)?;
            Ok(0)
        }
        Some(Command::Status { server, token_file }) => {
            client::status(&client::Client::new(&server, client::token(token_file.as_deref())?))?;
            Ok(0)
        }
        Some(Command::Gradebook { course, week, out }) => gradebook(&course, &week, out.as_deref()),
        Some(Command::Regrade { course, week }) => {
            let course = Course::read(&course)?;
            let week = course
                .week(&week)
                .ok_or_else(|| anyhow!("no week {week} in the course"))?;
            let mut store = Store::open(&course.database)?;
            let (round, jobs) = store.regrade(week.week.name, server::now())?;
            eprintln!(
                "course-server: {}: round {round}, {jobs} submissions queued after the students' own",
                week.week.name
            );
            Ok(0)
        }
    }
}

/// A worker's name: the host's and the GPU's.
fn default_name(device: Option<&str>) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_else(|_| "worker".into());
    format!("{}-gpu{}", host.trim(), device.unwrap_or("any"))
}

fn tokens(course: &Path, all_students: bool, students: &[String], teacher: bool, worker: Option<&str>) -> Result<u8> {
    let course = Course::read(course)?;
    let mut store = Store::open(&course.database)?;
    let mut wanted: Vec<Who> = Vec::new();
    for id in students {
        if course.student(id).is_none() {
            bail!("no student with the id {id} in the course's students file");
        }
        wanted.push(Who {
            role: Role::Student,
            name: id.clone(),
        });
    }
    if all_students {
        for student in &course.students {
            let who = Who {
                role: Role::Student,
                name: student.id.clone(),
            };
            if !store.has_token(&who)? && !wanted.contains(&who) {
                wanted.push(who);
            }
        }
    }
    if teacher {
        wanted.push(Who {
            role: Role::Teacher,
            name: "teacher".into(),
        });
    }
    if let Some(name) = worker {
        // The server's own workers are local-N: their jobs are queued again when it starts.
        if name.starts_with("local-") || name.is_empty() {
            bail!("--worker {name:?}: a name not beginning with local- (the server's own workers')");
        }
        wanted.push(Who {
            role: Role::Worker,
            name: name.to_string(),
        });
    }
    if wanted.is_empty() {
        bail!("no token asked for: --all-students, --student ID, --teacher or --worker NAME");
    }
    for who in &wanted {
        let token = auth::random_hex()?;
        store.set_token(&auth::hashed(&token), who, server::now())?;
        println!("{},{token}", grader::csv::field(&who.name));
    }
    eprintln!(
        "course-server: {} tokens made; this is the only time they are shown",
        wanted.len()
    );
    Ok(0)
}

fn gradebook(course: &Path, week: &str, out: Option<&Path>) -> Result<u8> {
    let course = Course::read(course)?;
    let week = course
        .week(week)
        .ok_or_else(|| anyhow!("no week {week} in the course"))?
        .clone();
    let store = Store::open(&course.database)?;
    let grades = store.week_grades(week.week.name)?;
    let waiting = store.ungraded(week.week.name)?;
    let text = gradebook::csv(&course, &week, &grades);
    match out {
        Some(file) => grader::output::replace(file, text.as_bytes())?,
        None => print!("{text}"),
    }
    if waiting > 0 {
        eprintln!("course-server: {waiting} on-time submissions of {} still wait for this round's grade: the gradebook counts what is graded; write it again when the queue is done", week.week.name);
        return Ok(grader::stop::WAITING);
    }
    Ok(0)
}

fn serve(serve: Serve) -> Result<u8> {
    let Some(file) = serve.course.as_deref() else {
        bail!("give the course: course-server --course course.toml (--help for more)");
    };
    let mut course = Course::read(file)?;
    if let Some(listen) = &serve.listen {
        course.listen = listen.clone();
    }
    let mut store = Store::open(&course.database)?;
    let secret = store.setting("csrf-secret", || auth::random_hex().unwrap_or_default())?;
    if secret.is_empty() {
        bail!("cannot make the server's secret (no /dev/urandom?)");
    }
    let address: SocketAddr = course
        .listen
        .parse()
        .map_err(|err| anyhow!("listen address {:?}: {err} (write it as 127.0.0.1:8080)", course.listen))?;
    let released = store.release_local()?;
    if released > 0 {
        eprintln!("course-server: {released} jobs of the last run's local workers queued again");
    }
    // Each local worker signs in with a token of its own, made here and handed over in its environment.
    let mut workers = Vec::new();
    for (index, device) in local_workers(&serve)?.into_iter().enumerate() {
        let (name, token) = (format!("local-{index}"), auth::random_hex()?);
        store.set_token(
            &auth::hashed(&token),
            &Who {
                role: Role::Worker,
                name: name.clone(),
            },
            server::now(),
        )?;
        workers.push((name, token, device));
    }
    let rate = course.limits.requests_per_second;
    let app = Arc::new(server::App {
        course,
        store: Mutex::new(store),
        secret,
        buckets: auth::Buckets::new(rate),
        address_buckets: auth::Buckets::new(rate * server::ADDRESS_SHARE),
    });
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen on {address}"))?;
        eprintln!("course-server: {} on http://{address}/", app.course.name);
        let mut children = Vec::new();
        for (name, token, device) in workers {
            children.push(start_worker(address, &name, &token, device, &serve)?);
        }
        let service = server::router(app).into_make_service_with_connect_info::<SocketAddr>();
        let served = axum::serve(listener, service)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await;
        for mut child in children {
            let _ = child.kill();
            let _ = child.wait();
        }
        served.context("the server stopped")
    })?;
    Ok(0)
}

/// The devices of the local workers, each a CUDA_VISIBLE_DEVICES value (none: a worker without a GPU).
fn local_workers(serve: &Serve) -> Result<Vec<Option<String>>> {
    if serve.workers == Some(0) {
        return Ok(Vec::new());
    }
    if serve.stand_in.is_some() || serve.dry_run {
        return Ok(vec![None; serve.workers.unwrap_or(1)]);
    }
    let gpus = match grader::local::find_gpus() {
        Ok(gpus) => gpus,
        Err(err) if serve.workers.is_none() => {
            eprintln!("course-server: no local workers ({err}); start workers elsewhere: --help says how");
            return Ok(Vec::new());
        }
        Err(err) => return Err(err),
    };
    let count = serve.workers.unwrap_or(gpus.len());
    Ok((0..count)
        .map(|index| gpus.get(index % gpus.len().max(1)).cloned())
        .collect())
}

/// Starts local worker `name` on `device`, signed in with `token`, dying with the server.
fn start_worker(
    address: SocketAddr,
    name: &str,
    token: &str,
    device: Option<String>,
    serve: &Serve,
) -> Result<std::process::Child> {
    let mut command = std::process::Command::new(std::env::current_exe()?);
    command
        .args(["worker", "--server", &format!("http://{address}"), "--name", name])
        .env("COURSE_TOKEN", token);
    if serve.dry_run {
        command.arg("--dry-run");
    }
    if let Some(ms) = serve.stand_in {
        command.args(["--stand-in", &ms.to_string(), "--poll", "100"]);
    }
    if let Some(device) = device {
        command.env("CUDA_VISIBLE_DEVICES", device);
    }
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches only the child's own state;
    // nothing else runs between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    command.spawn().context("cannot start a local worker")
}
