//! A real PostgreSQL server for one test (or the bench): `initdb` in a temporary folder, the
//! server on a free loopback port with its socket in that folder, stopped when the guard drops
//! (a failing test unwinds through it too).
//!
//! The binaries are those of the folder `TOOLS_PG_BIN` names (`scripts/test` installs Debian's
//! `postgresql` when it is missing and sets it, e.g. `/usr/lib/postgresql/15/bin`). A test that
//! needs the server fails, never skips, when it is unset or wrong. `initdb` and `postgres`
//! refuse to run as root: as root, the folder is given to `nobody` and they run as `nobody`.

use std::fs::{self, File};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The variable naming the folder of PostgreSQL's server binaries.
pub const PG_BIN_ENV: &str = "TOOLS_PG_BIN";

/// A running PostgreSQL server; stopped (fast shutdown) and its folder removed when dropped.
/// It can be taken down and brought back on the same port ([`PgServer::down`],
/// [`PgServer::up`]), as a database restart or crash would.
pub struct PgServer {
    child: std::sync::Mutex<Option<Child>>,
    port: u16,
    durability: Durability,
    /// The data, the socket and the logs; removed after the server stopped.
    dir: tempfile::TempDir,
}

/// How [`PgServer::down`] takes the server down.
#[derive(Clone, Copy, PartialEq, Eq)]
#[allow(dead_code, reason = "not every build of the tests uses both")]
pub enum Down {
    /// A fast shutdown (SIGINT): connections are ended, the data checkpointed.
    Fast,
    /// An immediate shutdown (SIGQUIT), as a crash: no checkpoint, crash recovery on the way
    /// back up.
    Crash,
}

/// How the server keeps its data.
#[derive(Clone, Copy, PartialEq, Eq)]
#[allow(dead_code, reason = "the tests use one variant, the bench the other")]
pub enum Durability {
    /// `fsync = off`: the tests, which never crash the machine (a crash of the server itself
    /// loses nothing the kernel holds).
    Tests,
    /// PostgreSQL's defaults (each commit flushed): the bench, to compare with SQLite's
    /// `synchronous = FULL`.
    Defaults,
}

/// The folder of `initdb` and `postgres`, or a panic that says how to get them.
pub fn bin_dir() -> PathBuf {
    let Some(dir) = std::env::var_os(PG_BIN_ENV) else {
        panic!(
            "{PG_BIN_ENV} is not set: the PostgreSQL tests need a real server. Install Debian's \
             `postgresql` (scripts/test does) and set {PG_BIN_ENV} to the folder of its `initdb` \
             and `postgres`, e.g. {PG_BIN_ENV}=$(ls -d /usr/lib/postgresql/*/bin | tail -1)"
        );
    };
    let dir = PathBuf::from(dir);
    for tool in ["initdb", "postgres", "pg_isready"] {
        assert!(
            dir.join(tool).is_file(),
            "{PG_BIN_ENV}={} has no `{tool}`: set it to the folder of PostgreSQL's server \
             binaries (e.g. /usr/lib/postgresql/15/bin)",
            dir.display()
        );
    }
    dir
}

/// The uid and gid of `nobody`, from /etc/passwd.
fn nobody() -> (u32, u32) {
    let passwd = fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&"nobody") && fields.len() > 3)
                .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
                .flatten()
        })
        .unwrap_or((65534, 65534))
}

/// A command that runs as `nobody` when this process is root.
fn command(bin: &Path, dir: &Path, log: &Path) -> Command {
    let mut cmd = Command::new(bin);
    let out = File::create(log).unwrap();
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .current_dir(dir)
        .env("LC_ALL", "C");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let (uid, gid) = nobody();
        // std drops the supplementary groups too when it changes the uid of a root child.
        cmd.uid(uid).gid(gid);
    }
    cmd
}

fn give_to_nobody(path: &Path) {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let (uid, gid) = nobody();
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    }
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl PgServer {
    /// `initdb`, then the server; returns once it accepts connections.
    pub fn start(durability: Durability) -> PgServer {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("tools-approvals-pg")
            .tempdir()
            .unwrap();
        give_to_nobody(dir.path());
        let data = dir.path().join("data");
        let initdb_log = dir.path().join("initdb.log");
        let status = command(&bin.join("initdb"), dir.path(), &initdb_log)
            .args(["-D"])
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "-N",
            ])
            .status()
            .unwrap();
        assert!(
            status.success(),
            "initdb failed ({status}):\n{}",
            fs::read_to_string(&initdb_log).unwrap_or_default()
        );
        let mut tries = 0;
        loop {
            tries += 1;
            let port = free_port();
            match spawn(dir.path(), port, durability) {
                Ok(child) => {
                    return PgServer {
                        child: std::sync::Mutex::new(Some(child)),
                        port,
                        durability,
                        dir,
                    };
                }
                Err(why) if tries < 3 => {
                    eprintln!("PostgreSQL did not start on port {port} ({why}); trying another");
                }
                Err(why) => panic!("PostgreSQL did not start: {why}"),
            }
        }
    }

    /// Takes the server down as `how` says; it stays down until [`up`](Self::up).
    #[allow(dead_code, reason = "only the PostgreSQL restart tests use it")]
    pub fn down(&self, how: Down) {
        let mut child = self.child.lock().unwrap();
        if let Some(mut running) = child.take() {
            match how {
                Down::Fast => stop(&mut running),
                Down::Crash => {
                    signal(&running, libc::SIGQUIT);
                    let _ = running.wait();
                }
            }
        }
    }

    /// Starts the server again on its port (after [`down`](Self::down)), once it accepts
    /// connections.
    #[allow(dead_code, reason = "only the PostgreSQL restart tests use it")]
    pub fn up(&self) {
        let mut child = self.child.lock().unwrap();
        if child.is_none() {
            match spawn(self.dir.path(), self.port, self.durability) {
                Ok(started) => *child = Some(started),
                Err(why) => panic!("PostgreSQL did not start again: {why}"),
            }
        }
    }

    /// The connection settings of database `dbname` (as superuser `postgres`).
    pub fn conninfo(&self, dbname: &str) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname={dbname} connect_timeout=10",
            self.port
        )
    }

    /// A client of database `dbname`, its connection driven by a task of the current runtime.
    pub async fn client(&self, dbname: &str) -> tokio_postgres::Client {
        let (client, connection) =
            tokio_postgres::connect(&self.conninfo(dbname), tokio_postgres::NoTls)
                .await
                .unwrap();
        tokio::spawn(async move {
            let _ = connection.await;
        });
        client
    }

    /// Creates database `name` and returns its connection settings.
    pub async fn database(&self, name: &str) -> String {
        let admin = self.client("postgres").await;
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
        self.conninfo(name)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.lock().unwrap_or_else(|e| e.into_inner()).take() {
            stop(&mut child);
        }
    }
}

/// The server of the data in `dir` on `port`, once it accepts connections; its log is
/// `dir/postgres.log`.
fn spawn(dir: &Path, port: u16, durability: Durability) -> Result<Child, String> {
    let bin = bin_dir();
    let log = dir.join("postgres.log");
    let mut cmd = command(&bin.join("postgres"), dir, &log);
    cmd.arg("-D")
        .arg(dir.join("data"))
        .args(["-p", &port.to_string(), "-k"])
        .arg(dir)
        .args([
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "max_connections=40",
        ]);
    if durability == Durability::Tests {
        cmd.args(["-c", "fsync=off", "-c", "full_page_writes=off"]);
    }
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    match wait_ready(&mut child, port, &bin) {
        Ok(()) => Ok(child),
        Err(why) => {
            stop(&mut child);
            Err(format!(
                "{why}\n{}",
                fs::read_to_string(&log).unwrap_or_default()
            ))
        }
    }
}

/// Sends `sig` to `child`, unless it has been reaped.
fn signal(child: &Child, sig: i32) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill has no memory preconditions; the pid is our child's, not yet reaped.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Waits until the server on `port` accepts connections.
fn wait_ready(child: &mut Child, port: u16, bin: &Path) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Err(format!("the server exited ({status})"));
        }
        if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
            let ready = Command::new(bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
                .status()
                .map_err(|e| e.to_string())?;
            if ready.success() {
                return Ok(());
            }
        }
        if Instant::now() > deadline {
            return Err("not ready after 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Fast shutdown (SIGINT), then SIGKILL after 10 s.
fn stop(child: &mut Child) {
    if child.try_wait().ok().flatten().is_some() {
        return;
    }
    let Ok(pid) = i32::try_from(child.id()) else {
        let _ = child.kill();
        let _ = child.wait();
        return;
    };
    // SAFETY: kill has no memory preconditions; the pid is our child's, not yet reaped.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}
