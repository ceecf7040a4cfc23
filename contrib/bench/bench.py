#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# Copyright (c) 2026 The vigil authors
"""Benchmarks of vigild side by side with supervisord, runit, s6 and daemontools.

Each supervisor that is installed runs the same workloads, started by hand
in a private temporary directory, in the foreground, and stopped by pid:

  * N services of `sleep 100000.TOKEN` (N = 10, 100, 1000): the time from
    the supervisor's start to all N running (from /proc start times, and
    polled on the wall clock), the supervisor's PSS (its own processes,
    never the services), CPU time and voluntary context switches over an
    idle period, the wall time of one status query of all services, and
    the time to stop all;
  * a service that exits at once: the restart period and the time from an
    exit to the next exec (for vigil minus its restart delay: the overhead);
  * SIGKILL of the supervisor: the services alive 1 s later, then the copies
    running once a new supervisor on the same directories has settled;
  * vigil only: queue throughput at concurrency 1, 2 and 8 against a bare
    posix_spawn + waitpid loop (spawnloop.c).

With --base-vigild and --base-vigilctl, a second vigil build (say, main
before a change) runs every vigil workload above as one more column,
labelled --base-label ("vigil (base)"): in each repetition, right next to
the current build (which of the two goes first alternates), so that both
see the same machine.  A table of the current build's medians over the
base's follows.  This is the old-against-new run a refactoring or a
hot-path change carries:

  make bench BENCH_FLAGS='--only vigil --base-vigild /path/old/vigild
                          --base-vigilctl /path/old/vigilctl'

Every wait has a deadline; the harness ends only processes it started (by
pid) and never touches system-wide instances of the anchors.  The result
is a markdown section on stdout (progress goes to stderr), pasteable as is
into README.md.  Python 3 standard library only; a C compiler builds the
two helpers next to this file.

usage: bench.py --vigild PATH --vigilctl PATH [--install] [--quick]
                [--reps N] [--only vigil,runit,...] [--output FILE]
                [--base-vigild PATH --base-vigilctl PATH [--base-label TEXT]]
"""

import argparse
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
HERE = os.path.dirname(os.path.abspath(__file__))
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ANCHOR_PACKAGES = ["supervisor", "runit", "s6", "daemontools"]

START_TIMEOUT = 180.0  # all N services running
STOP_TIMEOUT = 60.0  # all services gone after a stop
CMD_TIMEOUT = 120.0  # one status query, one apt-get step: 900
SETTLE = 1.0  # pause between "all running" and the idle window


def log(msg):
    """Print a progress line with the time of day on stderr."""
    print(time.strftime("[%H:%M:%S] ") + msg, file=sys.stderr, flush=True)


class BenchError(Exception):
    """A workload that could not be measured; the run goes on without it."""


# ---------------------------------------------------------------- /proc


def proc_stat(pid):
    """Return a dict (comm, state, ppid, ticks, start) for pid, or None.

    ticks is utime + stime and start the start time, both in clock ticks
    (field 22 of /proc/PID/stat: ticks since boot, 10 ms at CLK_TCK 100).
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    close = data.rfind(b")")
    comm = data[data.find(b"(") + 1:close].decode(errors="replace")
    fields = data[close + 2:].split()
    return {
        "comm": comm,
        "state": fields[0].decode(),
        "ppid": int(fields[1]),
        "ticks": int(fields[11]) + int(fields[12]),
        "start": int(fields[19]),
    }


def proc_alive(pid, start):
    """Tell whether pid still runs the process that started at start.

    A zombie counts as gone: the process has exited.
    """
    st = proc_stat(pid)
    return st is not None and st["start"] == start and st["state"] not in "ZX"


def all_pids():
    """Return the pids in /proc, as ints."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def service_start(pid, want):
    """Return the start ticks of pid if it is a live `sleep <want>`, else None."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    if len(argv) < 2 or argv[1] != want or not argv[0].endswith(b"sleep"):
        return None
    st = proc_stat(pid)
    if st is None or st["state"] in "ZX":
        return None
    return st["start"]


def find_services(marker, known=None):
    """Return {pid: start ticks} of the live processes `sleep <marker>`.

    With known (a dict this call updates), a pid already found there is
    not read again: a scan while a supervisor starts 1000 services then
    reads only the new pids, and takes little of the CPU it measures.
    """
    want = marker.encode()
    found = {}
    for pid in all_pids():
        if known is not None and pid in known:
            found[pid] = known[pid]
            continue
        start = service_start(pid, want)
        if start is not None:
            found[pid] = start
    if known is not None:
        known.clear()
        known.update(found)
    return found


def children_map():
    """Return {ppid: [(pid, comm), ...]} for every process."""
    kids = {}
    for pid in all_pids():
        st = proc_stat(pid)
        if st is not None:
            kids.setdefault(st["ppid"], []).append((pid, st["comm"]))
    return kids


def descendants(root, kids):
    """Return every pid below root in the tree kids (from children_map)."""
    out, todo = [], [root]
    while todo:
        for pid, _ in kids.get(todo.pop(), []):
            out.append(pid)
            todo.append(pid)
    return out


def pss_kb(pid):
    """Return the PSS of pid in kB from /proc/PID/smaps_rollup (0 if gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def voluntary_switches(pid):
    """Return the voluntary context switches of all threads of pid."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def idle_counters(pids):
    """Return {pid: (cpu ticks, voluntary switches)} for the live pids."""
    out = {}
    for pid in pids:
        st = proc_stat(pid)
        if st is not None:
            out[pid] = (st["ticks"], voluntary_switches(pid))
    return out


# ---------------------------------------------------------- processes


def wait_until(pred, timeout, interval=0.02):
    """Call pred until it returns a true value or timeout seconds pass.

    Returns that value, or None at the deadline.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


def run_cmd(argv, timeout=CMD_TIMEOUT, **kw):
    """Run argv to completion within timeout; return (rc, seconds, output).

    Output is stdout and stderr together, as text.  On timeout the child is
    killed (by pid, through subprocess) and BenchError raised.
    """
    t0 = time.monotonic()
    try:
        p = subprocess.run(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            env=kw.pop("env", clean_env()),
            **kw,
        )
    except subprocess.TimeoutExpired as e:
        raise BenchError(f"{argv[0]} took more than {timeout:.0f} s") from e
    return p.returncode, time.monotonic() - t0, p.stdout.decode(errors="replace")


def clean_env():
    """Return the environment given to supervisors and their tools."""
    return {"PATH": PATH, "LC_ALL": "C", "HOME": "/root"}


def kill_pids(pids, sig=signal.SIGKILL):
    """Send sig to each pid that still exists; return how many got it."""
    n = 0
    for pid in pids:
        try:
            os.kill(pid, sig)
            n += 1
        except ProcessLookupError:
            pass
    return n


def leftovers(root, marker=None):
    """Return the pids of processes this harness left behind under root.

    That is a process whose working directory is inside root, whose command
    line names a path inside root, or, with marker, a `sleep <marker>`.
    """
    me = os.getpid()
    rootb = root.encode()
    found = []
    for pid in all_pids():
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        st = proc_stat(pid)
        if st is None or st["state"] in "ZX":
            continue
        if (
            cwd == root
            or cwd.startswith(root + "/")
            or rootb in cmd
            or (marker and marker.encode() in cmd.split(b"\0")[1:2])
        ):
            found.append(pid)
    return found


def reap_leftovers(root, marker=None):
    """SIGKILL the leftovers under root (by pid) and wait until they are gone.

    Returns how many there were.
    """
    pids = leftovers(root, marker)
    if not pids:
        return 0
    kill_pids(pids)
    wait_until(lambda: not leftovers(root, marker), 10.0, 0.05)
    return len(pids)


# ---------------------------------------------------------- supervisors


class Supervisor:
    """One supervisor under test, in its own directory.

    Subclasses write the service definitions, say how to start the
    supervisor in the foreground, how to query the status of all services
    and how to stop them all.
    """

    name = ""
    package = ""
    programs = ()
    helpers = ()  # comm of the per-service processes of the supervisor
    base = False  # vigil's --base-vigild build

    def __init__(self, bench, workdir):
        """Prepare a supervisor rooted at workdir (created empty)."""
        self.bench = bench
        self.dir = workdir
        self.names = []
        self.proc = None
        self.logfile = os.path.join(workdir, "supervisor.log")

    @classmethod
    def missing(cls, bench):
        """Return the programs of this supervisor not found, or []."""
        return [p for p in cls.programs if shutil.which(p, path=PATH) is None]

    def add_services(self, names, argv):
        """Define the services names, each running argv (a list)."""
        raise NotImplementedError

    def add_flapper(self, stamp):
        """Define one service "flap" that runs stamp and exits at once.

        Returns the path of the record file stamp appends to.
        """
        raise NotImplementedError

    def start_argv(self):
        """Return the command line that runs the supervisor in the foreground."""
        raise NotImplementedError

    def status_argv(self):
        """Return the command line of one status query of all services."""
        raise NotImplementedError

    def stop(self):
        """Ask the running supervisor to stop all services (and exit)."""
        os.kill(self.proc.pid, signal.SIGTERM)

    def start(self):
        """Start the supervisor; returns its Popen (also kept in self.proc)."""
        out = open(self.logfile, "ab")
        try:
            self.proc = subprocess.Popen(
                self.start_argv(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=clean_env(),
                start_new_session=True,
            )
        finally:
            out.close()
        self.bench.running.append(self.proc)
        return self.proc

    def wait_exit(self, timeout):
        """Wait up to timeout s for the supervisor to exit; True if it did."""
        try:
            self.proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def kill(self):
        """SIGKILL the supervisor's own process and reap it."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.wait_exit(10.0)

    def own_pids(self, kids=None):
        """Return the supervisor's processes: its main one and its helpers."""
        kids = children_map() if kids is None else kids
        pids = [self.proc.pid]
        for pid, comm in kids.get(self.proc.pid, []):
            if comm in self.helpers:
                pids.append(pid)
        return pids

    def service_dirs(self, base):
        """Create base/NAME for each service; return the directories."""
        dirs = []
        for name in self.names:
            d = os.path.join(base, name)
            os.makedirs(d)
            dirs.append(d)
        return dirs


class BareLoop(Supervisor):
    """No supervisor: spawnloop.c starts the N copies (the machine's floor)."""

    name = "bare spawn loop"

    def add_services(self, names, argv):
        """Keep argv: spawnloop starts len(names) copies of it."""
        self.names = list(names)
        self.argv = list(argv)

    def start_argv(self):
        """spawnloop N 0 argv: start all, wait for none."""
        return [self.bench.spawnloop, str(len(self.names)), "0"] + self.argv

    def stop(self):
        """SIGKILL the copies (by pid); spawnloop exits once they are gone."""
        kill_pids([pid for pid, _ in children_map().get(self.proc.pid, [])])


class Vigil(Supervisor):
    """vigild with one job file per service in a jobs.d."""

    name = "vigil"
    package = "vigil"

    @classmethod
    def missing(cls, bench):
        """vigild and vigilctl come from the command line, not PATH."""
        return [p for p in bench.vigil_bins(cls) if not os.access(p, os.X_OK)]

    def __init__(self, bench, workdir):
        """Lay out vigil.conf, jobs.d, the runtime, state and log dirs."""
        super().__init__(bench, workdir)
        self.vigild, self.vigilctl = bench.vigil_bins(type(self))
        self.conf = os.path.join(workdir, "vigil.conf")
        self.jobs = os.path.join(workdir, "jobs.d")
        self.sock = os.path.join(workdir, "run", "vigild.sock")
        os.makedirs(self.jobs)
        with open(self.conf, "w") as f:
            f.write(bench.vigil_conf(type(self)))
        self.log_level = "info"

    def write_job(self, name, body):
        """Write jobs.d/NAME.conf with body (libconfuse syntax)."""
        with open(os.path.join(self.jobs, name + ".conf"), "w") as f:
            f.write(body)

    @staticmethod
    def words(argv):
        """Render argv as a libconfuse list of strings."""
        return "{" + ", ".join('"%s"' % a for a in argv) + "}"

    def add_services(self, names, argv):
        """One job per service, every option at its default."""
        self.names = list(names)
        for name in self.names:
            self.write_job(name, f"command = {self.words(argv)}\n")

    def add_flapper(self, stamp):
        """The default restart_delay, pinned so that it does not double."""
        rec = os.path.join(self.dir, "flap.rec")
        self.write_job(
            "flap",
            f"command = {self.words([stamp, rec])}\n"
            f'restart_delay_max = "{self.bench.vigil_delay_ms}ms"\n',
        )
        return rec

    def start_argv(self):
        """vigild in the foreground on the private directories."""
        d = self.dir
        return [
            self.vigild,
            "-c", self.conf,
            "-j", self.jobs,
            "--runtime-dir", os.path.join(d, "run"),
            "--state-dir", os.path.join(d, "state"),
            "--log-dir", os.path.join(d, "log"),
            "--log-level", self.log_level,
        ]  # fmt: skip

    def status_argv(self):
        """vigilctl status: every job."""
        return [self.vigilctl, "-s", self.sock, "status"]


class VigilBase(Vigil):
    """The same vigil workloads with the --base-vigild build.

    Bench.__init__ subclasses it under the name --base-label.
    """

    name = "vigil (base)"
    base = True


class Supervisord(Supervisor):
    """supervisord -n with one [program:] section per service."""

    name = "supervisord"
    package = "supervisor"
    programs = ("supervisord", "supervisorctl")

    def __init__(self, bench, workdir):
        """Paths of the config, socket, pid file and child logs."""
        super().__init__(bench, workdir)
        self.conf = os.path.join(workdir, "supervisord.conf")
        self.programs_text = []

    def write_conf(self):
        """Write supervisord.conf: private socket, logs, the programs."""
        d = self.dir
        os.makedirs(os.path.join(d, "childlog"), exist_ok=True)
        head = (
            "[unix_http_server]\n"
            f"file={d}/supervisor.sock\n"
            "[supervisord]\n"
            "nodaemon=true\n"
            f"logfile={d}/supervisord.log\n"
            f"pidfile={d}/supervisord.pid\n"
            f"childlogdir={d}/childlog\n"
            "minfds=16384\n"
            "minprocs=4096\n"
            "[rpcinterface:supervisor]\n"
            "supervisor.rpcinterface_factory = "
            "supervisor.rpcinterface:make_main_rpcinterface\n"
            "[supervisorctl]\n"
            f"serverurl=unix://{d}/supervisor.sock\n"
        )
        with open(self.conf, "w") as f:
            f.write(head + "".join(self.programs_text))

    def add_services(self, names, argv):
        """One [program:NAME] per service, every option at its default."""
        self.names = list(names)
        cmd = " ".join(argv)
        for name in self.names:
            self.programs_text.append(f"[program:{name}]\ncommand={cmd}\n")
        self.write_conf()

    def add_flapper(self, stamp):
        """Its most aggressive setting: startsecs=0, autorestart, no give-up."""
        rec = os.path.join(self.dir, "flap.rec")
        self.programs_text.append(
            "[program:flap]\n"
            f"command={stamp} {rec}\n"
            "startsecs=0\nautorestart=true\nstartretries=1000000\n"
        )
        self.write_conf()
        return rec

    def start_argv(self):
        """supervisord -n (no daemon) -c the private config."""
        return ["supervisord", "-n", "-c", self.conf]

    def status_argv(self):
        """supervisorctl status: every program."""
        return ["supervisorctl", "-c", self.conf, "status"]


class ScanDirSupervisor(Supervisor):
    """The daemontools family: a scan directory of service dirs with ./run."""

    scan_name = "service"

    def __init__(self, bench, workdir):
        """The scan directory inside workdir."""
        super().__init__(bench, workdir)
        self.scan = os.path.join(workdir, self.scan_name)
        os.makedirs(self.scan)
        self.dirs = []

    def add_services(self, names, argv):
        """NAME/run: a shell script that execs argv (the usual way)."""
        self.names = list(names)
        self.dirs = self.service_dirs(self.scan)
        script = "#!/bin/sh\nexec " + " ".join(argv) + "\n"
        for d in self.dirs:
            run = os.path.join(d, "run")
            with open(run, "w") as f:
                f.write(script)
            os.chmod(run, 0o755)

    def add_flapper(self, stamp):
        """flap/run is a symlink to stamp, which writes flap/stamp.rec."""
        self.names = ["flap"]
        self.dirs = self.service_dirs(self.scan)
        os.symlink(stamp, os.path.join(self.dirs[0], "run"))
        return os.path.join(self.dirs[0], "stamp.rec")

    def start(self):
        """Age the directories a minute first, as on a running system.

        runsvdir waits until its scan directory is at least 1 s old
        before it scans (it would add a second to every start of runit).
        """
        old = time.time() - 60
        for d in [self.scan] + self.dirs:
            os.utime(d, (old, old))
        return super().start()


class Runit(ScanDirSupervisor):
    """runsvdir DIR: one runsv per service; sv status; HUP to stop all."""

    name = "runit"
    package = "runit"
    programs = ("runsvdir", "runsv", "sv")
    helpers = ("runsv",)

    def start_argv(self):
        """runsvdir on the private scan directory."""
        return ["runsvdir", self.scan]

    def status_argv(self):
        """sv status DIR/*."""
        return ["sv", "status"] + self.dirs

    def stop(self):
        """runsvdir(8): HUP sends TERM to each runsv (runsv(8): TERM = x:
        TERM the service, exit once it is down), then runsvdir exits."""
        os.kill(self.proc.pid, signal.SIGHUP)


class S6(ScanDirSupervisor):
    """s6-svscan DIR: one s6-supervise per service; s6-svstat each."""

    name = "s6"
    package = "s6"
    programs = ("s6-svscan", "s6-supervise", "s6-svstat")
    helpers = ("s6-supervise",)
    scan_name = "scan"

    def start_argv(self):
        """s6-svscan on the private scan directory.

        s6 2.11.3's default is at most 500 services: -c raises it past that.
        """
        argv = ["s6-svscan"]
        if len(self.names) > 500:
            argv += ["-c", str(len(self.names))]
        return argv + [self.scan]

    def status_argv(self):
        """s6-svstat has no "all": one call per service in one shell loop."""
        loop = 'for d in "$1"/*; do s6-svstat "$d" || exit; done'
        return ["sh", "-c", loop, "sh", self.scan]

    # stop: SIGTERM (= s6-svscanctl -t): every s6-supervise stops its
    # service and exits, then s6-svscan exits.


class Daemontools(ScanDirSupervisor):
    """svscan DIR: one supervise per service; svstat DIR/*; svc -dx."""

    name = "daemontools"
    package = "daemontools"
    programs = ("svscan", "supervise", "svstat", "svc")
    helpers = ("supervise",)

    def start_argv(self):
        """svscan on the private scan directory."""
        return ["svscan", self.scan]

    def status_argv(self):
        """svstat DIR/*."""
        return ["svstat"] + self.dirs

    def stop(self):
        """svc -dx DIR/* (TERM each service, supervise exits once it is
        down), then TERM to svscan, which has no stop of its own."""
        rc, _, out = run_cmd(["svc", "-dx"] + self.dirs)
        if rc != 0:
            log(f"daemontools: svc -dx: exit {rc}: {out.strip()[:200]}")
        os.kill(self.proc.pid, signal.SIGTERM)


SUPERVISORS = [Vigil, Supervisord, Runit, S6, Daemontools]


# ---------------------------------------------------------- statistics


def fmt_num(v):
    """Format a number with about three significant digits."""
    if v is None:
        return "—"
    if float(v).is_integer():
        return str(int(v))
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def summary(values):
    """Return "median (min–max)" of values, or the value if there is one."""
    if not values:
        return ""
    med = statistics.median(values)
    lo, hi = min(values), max(values)
    if len(values) == 1 or lo == hi:
        return fmt_num(med)
    return f"{fmt_num(med)} ({fmt_num(lo)}–{fmt_num(hi)})"


def median_or_none(values):
    """Return the median of values, or None if there are none."""
    return statistics.median(values) if values else None


# ---------------------------------------------------------- the harness


class Bench:
    """The whole run: options, helpers, results and the report."""

    def __init__(self, args):
        """Take the parsed options; create the private work directory."""
        self.args = args
        self.vigild = os.path.abspath(args.vigild)
        self.vigilctl = os.path.abspath(args.vigilctl)
        self.base_vigild = args.base_vigild and os.path.abspath(args.base_vigild)
        self.base_vigilctl = args.base_vigilctl and os.path.abspath(args.base_vigilctl)
        self.classes = list(SUPERVISORS)
        if self.base_vigild:  # right after vigil, under its label
            base = type("VigilBase", (VigilBase,), {"name": args.base_label})
            self.classes.insert(1, base)
        self.root = tempfile.mkdtemp(prefix="vigil-bench.", dir=args.tmpdir)
        self.running = []  # every Popen of a supervisor, for the cleanup
        self.results = {}  # (row key) -> {supervisor: [values]}
        self.rows = []  # row keys in order, with labels
        self.labels = {}
        self.notes = []
        self.vigil_delay_ms = 100  # lib/conf.c: restart_delay default
        self.stamp = None
        self.spawnloop = None
        self.serial = 0
        self.loads = [float(loadavg())]  # sampled before each measurement

    # ---- bookkeeping

    def vigil_conf(self, cls):
        """The vigil.conf lines of the vigil build cls runs (--conf,
        --base-conf): e.g. cgroup = "off"."""
        lines = self.args.base_conf if cls.base else self.args.conf
        return "".join(line + "\n" for line in lines or [])

    def vigil_bins(self, cls):
        """Return (vigild, vigilctl) of the vigil build cls runs."""
        if cls.base:
            return self.base_vigild, self.base_vigilctl
        return self.vigild, self.vigilctl

    def record(self, key, label, sup, value):
        """Add one measured value of row key (label) for supervisor sup."""
        if key not in self.labels:
            self.rows.append(key)
            self.labels[key] = label
        self.results.setdefault(key, {}).setdefault(sup, []).append(value)

    def note(self, text):
        """Add a note to the report (and show it now)."""
        if text not in self.notes:
            self.notes.append(text)
        log("note: " + text)

    def fresh_dir(self, tag):
        """Return a new empty directory for one run under the work dir."""
        self.serial += 1
        tag = re.sub(r"[^A-Za-z0-9.-]+", "-", tag).strip("-")
        d = os.path.join(self.root, f"{self.serial:03d}-{tag}")
        os.makedirs(d)
        return d

    def marker(self):
        """Return a fresh `sleep` operand: 100000 s with a unique fraction."""
        return "100000.%06d" % secrets.randbelow(1000000)

    def cleanup_run(self, sup, marker=None, quiet=False):
        """Stop sup if it still runs and SIGKILL anything left in its dir.

        After a clean exit of the supervisor its helpers get 3 s to go on
        their own (runsv and supervise may be in their 1 s pause).
        """
        if sup.proc is not None and sup.proc.poll() is None:
            sup.kill()
        elif sup.proc is not None:
            wait_until(lambda: not leftovers(sup.dir, marker), 3.0, 0.05)
        n = reap_leftovers(sup.dir, marker)
        if n and not quiet:
            self.note(f"{sup.name}: {n} leftover processes killed after a run")
        if sup.proc in self.running:
            self.running.remove(sup.proc)

    def cleanup_all(self):
        """Kill every supervisor still running and every leftover (by pid)."""
        for p in self.running:
            if p.poll() is None:
                kill_pids([p.pid])
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
        reap_leftovers(self.root)
        if not self.args.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    # ---- helpers

    def compile_helpers(self):
        """Build stamp (static if it can: a shorter exec) and spawnloop."""
        cc = os.environ.get("CC", "cc")
        for name, tries in (("stamp", (["-static"], [])), ("spawnloop", ([],))):
            src = os.path.join(HERE, name + ".c")
            out = os.path.join(self.root, name)
            for extra in tries:
                rc, _, msg = run_cmd([cc, "-O2"] + extra + ["-o", out, src], env=None)
                if rc == 0:
                    break
            else:
                self.note(f"cannot build {name}.c with {cc}: {msg.strip()[:200]}")
                continue
            setattr(self, name, out)

    def select(self):
        """Return the supervisor classes to run: asked for and installed."""
        only = self.args.only.split(",") if self.args.only else None
        chosen = []
        for cls in self.classes:
            if only and (Vigil.name if cls.base else cls.name) not in only:  # base with vigil
                continue
            missing = cls.missing(self)
            if missing:
                how = ("" if issubclass(cls, Vigil)
                       else " (Debian package %s; --install)" % cls.package)
                self.note(f"{cls.name} skipped: {', '.join(missing)} not found{how}")
                continue
            chosen.append(cls)
        return chosen

    # ---- workloads

    def wait_all_running(self, sup, marker, n, t0):
        """Wait for n services; return ({pid: start}, wall seconds).

        The polls read only pids not seen as services before and are
        spaced by twice the cost of a scan, within 5-20 ms: while the
        supervisor forks, a scan gets only its fair share of the CPU, so
        the polls take little from the start they measure.  Once n are
        seen, a full scan confirms them.
        """
        deadline = t0 + START_TIMEOUT
        known = {}
        while True:
            t_scan = time.monotonic()
            found = find_services(marker, known)
            cost = time.monotonic() - t_scan
            if len(found) >= n:
                wall = time.monotonic() - t0
                found = find_services(marker)
                if len(found) >= n:
                    return found, wall
                known.clear()
            if sup.proc.poll() is not None:
                raise BenchError(f"{sup.name} exited ({sup.proc.returncode}) "
                                 f"with {len(found)}/{n} services up")
            if time.monotonic() > deadline:
                raise BenchError(f"{sup.name}: {len(found)}/{n} services "
                                 f"after {START_TIMEOUT:.0f} s")
            time.sleep(min(0.02, max(0.005, 2 * cost)))

    def start_all(self, sup, marker, n):
        """Start sup; once its n services run, return (found, wall s, ms).

        ms is the latest service start minus the supervisor's, from /proc.
        """
        t0 = time.monotonic()
        sup.start()
        found, wall = self.wait_all_running(sup, marker, n, t0)
        root = proc_stat(sup.proc.pid)
        if root is None:
            raise BenchError(f"{sup.name} exited after starting all")
        return found, wall, (max(found.values()) - root["start"]) * 1000.0 / CLK_TCK

    def steady(self, cls, n):
        """N services: start, memory, idle, status and stop of one run."""
        marker = self.marker()
        sup = cls(self, self.fresh_dir(f"{cls.name}-{n}"))
        sup.add_services([f"s{i:04d}" for i in range(1, n + 1)], ["sleep", marker])
        p = f"{n} services: "
        try:
            found, wall, ms = self.start_all(sup, marker, n)
            self.record(f"start{n}", p + "all running, ms (/proc start times, ±10)",
                        cls.name, ms)
            self.record(f"wall{n}", p + "all running, ms (polled wall clock)",
                        cls.name, wall * 1000)
            time.sleep(SETTLE)
            own = sup.own_pids()
            self.record(f"pss{n}", p + "supervisor PSS, MB", cls.name,
                        sum(pss_kb(x) for x in own) / 1024.0)
            self.idle(sup, own, n)
            self.status(sup, n)
            self.stop(sup, found, n)
            log(f"{cls.name} N={n}: all running {ms:.0f} ms (wall {wall * 1000:.0f} ms)")
        finally:
            self.cleanup_run(sup, marker)

    def floor(self, n):
        """The same start with no supervisor: a bare posix_spawn loop."""
        marker = self.marker()
        sup = BareLoop(self, self.fresh_dir(f"bare-{n}"))
        sup.add_services(range(n), ["sleep", marker])
        try:
            _, _, ms = self.start_all(sup, marker, n)
            self.record(f"floor{n}", f"{n} copies: all running, ms", sup.name, ms)
            sup.stop()
            sup.wait_exit(STOP_TIMEOUT)
        finally:
            self.cleanup_run(sup, marker)

    def idle(self, sup, own, n):
        """CPU time and voluntary switches of own over the idle window."""
        secs = self.args.idle
        c0 = idle_counters(own)
        time.sleep(secs)
        c1 = idle_counters(own)
        ticks = sum(c1[p][0] - c0[p][0] for p in c1 if p in c0)
        wakes = sum(c1[p][1] - c0[p][1] for p in c1 if p in c0)
        p = f"{n} services: idle"
        self.record(f"cpu{n}", f"{p} CPU in {secs:g} s, ms", sup.name, ticks * 1000.0 / CLK_TCK)
        self.record(f"wake{n}", f"{p} wakeups in {secs:g} s (voluntary switches)", sup.name,
                    wakes)

    def status(self, sup, n):
        """Wall time of one status query of all services (after a warm-up)."""
        argv = sup.status_argv()
        run_cmd(argv)
        rc, secs, out = run_cmd(argv)
        if rc not in (0, 3):
            self.note(f"{sup.name}: status exited {rc}: {out.strip()[:200]}")
        self.record(f"status{n}", f"{n} services: status of all, ms", sup.name, secs * 1000)

    def stop(self, sup, found, n):
        """Time from the stop request until every service pid is gone."""
        left = dict(found)
        t0 = time.monotonic()
        sup.stop()

        def gone():
            for pid in list(left):
                if not proc_alive(pid, left[pid]):
                    del left[pid]
            return not left

        if not wait_until(gone, STOP_TIMEOUT, 0.005):
            raise BenchError(f"{sup.name}: {len(left)} services left after stop")
        secs = time.monotonic() - t0
        self.record(f"stop{n}", f"{n} services: stop all, ms", sup.name, secs * 1000)
        if not sup.wait_exit(STOP_TIMEOUT):
            self.note(f"{sup.name}: still running {STOP_TIMEOUT:.0f} s after its stop; killed")

    def flap(self, cls):
        """Restart period of a service that exits at once."""
        sup = cls(self, self.fresh_dir(f"{cls.name}-flap"))
        rec = sup.add_flapper(self.stamp)
        t0 = time.monotonic()
        sup.start()
        try:
            def enough():
                lines = read_lines(rec)
                return len(lines) >= 7 and time.monotonic() - t0 >= self.args.flap
            wait_until(enough, self.args.flap + 20.0, 0.1)
            sup.stop()
            sup.wait_exit(STOP_TIMEOUT)
        finally:
            self.cleanup_run(sup)
        recs = [tuple(int(x) for x in line.split()) for line in read_lines(rec)]
        if len(recs) < 3:
            raise BenchError(f"{cls.name}: only {len(recs)} starts of the flapping service")
        periods = [(b[0] - a[0]) / 1e6 for a, b in zip(recs, recs[1:])]
        gaps = [(b[0] - a[1]) / 1e6 for a, b in zip(recs, recs[1:])]
        self.record("period", "restart of a service that exits at once: period, ms",
                    cls.name, statistics.median(periods))
        if issubclass(cls, Vigil):
            delays = vigil_delays(sup.logfile)
            over = [g - d for g, d in zip(gaps, delays)]
            if over:
                self.record("overhead", "restart: vigil overhead (exit to exec − "
                            "the delay vigild chose), ms", cls.name, statistics.median(over))
        log(f"{cls.name} restart: period {statistics.median(periods):.1f} ms "
            f"over {len(recs)} starts")

    def kill9(self, cls, n):
        """SIGKILL of the supervisor with n services, then a new one."""
        marker = self.marker()
        sup = cls(self, self.fresh_dir(f"{cls.name}-kill"))
        sup.add_services([f"s{i:04d}" for i in range(1, n + 1)], ["sleep", marker])
        sup.start()
        try:
            self.wait_all_running(sup, marker, n, time.monotonic())
            time.sleep(SETTLE)
            sup.kill()
            time.sleep(1.0)
            alive = len(find_services(marker))
            self.record("k9alive", f"SIGKILL of the supervisor, {n} services: "
                        "alive 1 s later", cls.name, alive)
            sup.start()  # the same directories, a new supervisor
            copies = self.settle_copies(sup, marker, n)
            self.record("k9copies", f"SIGKILL, {n} services: copies running "
                        "once a new supervisor has settled", cls.name, copies)
            log(f"{cls.name} SIGKILL: {alive} alive, {copies} after restart")
            sup.stop()
            sup.wait_exit(STOP_TIMEOUT)
        finally:
            # The old tree's orphans are expected here: no note.
            self.cleanup_run(sup, marker, quiet=True)

    def settle_copies(self, sup, marker, n):
        """Count the services once a restarted supervisor has settled.

        Settled: it runs n services of its own, or (when it cannot, as the
        old tree still holds the locks) the count has not changed for 2 s
        and at least 6 s have passed (svscan and runsvdir rescan every 5 s).
        Then 1 s more is watched; returns the count at the end.
        """
        t0 = time.monotonic()
        last, since = -1, t0
        while time.monotonic() - t0 < START_TIMEOUT:
            found = find_services(marker)
            now = time.monotonic()
            if len(found) != last:
                last, since = len(found), now
            mine = set(descendants(sup.proc.pid, children_map()))
            if sum(1 for p in found if p in mine) >= n:
                break
            if now - t0 >= 6.0 and now - since >= 2.0:
                break
            time.sleep(0.25)
        time.sleep(1.0)
        return len(find_services(marker))

    def queue(self, cls, conc):
        """Messages/s of a queue job running `true` (vigil build cls), and the bare loop."""
        msgs = self.args.queue_messages
        vigilctl = self.vigil_bins(cls)[1]
        sup = cls(self, self.fresh_dir(f"{cls.name}-queue-{conc}"))
        sup.log_level = "warning"
        sup.write_job("q", f'kind = "queue"\nconcurrency = {conc}\n'
                      'autostart = false\ncommand = "true"\n')
        state = os.path.join(sup.dir, "state")
        os.makedirs(state)
        t0 = time.monotonic()
        for i in range(msgs):
            rc, _, out = run_cmd([vigilctl, "--state-dir", state, "enqueue",
                                  "--direct", "q", f"m{i}"])
            if rc != 0:
                raise BenchError(f"enqueue --direct: exit {rc}: {out.strip()[:200]}")
        self.record("enq", "vigilctl enqueue --direct (vigild down), messages/s",
                    cls.name, msgs / (time.monotonic() - t0))
        sup.start()
        try:
            ping = [vigilctl, "-s", sup.sock, "ping"]
            if not wait_until(lambda: run_cmd(ping, 10)[0] == 0, 30, 0.01):
                raise BenchError("vigild did not answer")
            t0 = time.monotonic()
            t0_wall = time.time()
            run_cmd([vigilctl, "-s", sup.sock, "start", "--no-wait", "q"])
            while queue_left(vigilctl, sup.sock) != 0:
                if time.monotonic() - t0 > 600:
                    raise BenchError("queue not drained in 600 s")
                time.sleep(0.1)
            end = last_run_end(vigilctl, sup.sock, conc)
            if end is None or end <= t0_wall:
                raise BenchError("no end time in the history of q")
            rate = msgs / (end - t0_wall)
            sup.stop()
            sup.wait_exit(STOP_TIMEOUT)
        finally:
            self.cleanup_run(sup)
        self.record(f"q{conc}", f"queue, concurrency {conc}: messages/s", cls.name, rate)
        rc, _, out = run_cmd([self.spawnloop, str(msgs), str(conc), "true"])
        if rc != 0:
            raise BenchError(f"spawnloop: exit {rc}")
        bare = float(out.split()[0])
        self.record(f"q{conc}", "", "bare spawn loop", bare)
        self.record(f"qr{conc}", "", f"{cls.name}/bare", 100 * rate / bare)
        log(f"queue c={conc}: {cls.name} {rate:.0f}/s, bare {out.strip()}/s")

    # ---- driver

    def attempt(self, what, fn, *a):
        """Run one measurement; a BenchError becomes a note, not a stop."""
        self.loads.append(float(loadavg()))
        try:
            fn(*a)
        except BenchError as e:
            self.note(f"{what}: not measured: {e}")

    def run(self):
        """Run every workload for every chosen supervisor, reps times."""
        args = self.args
        t_start = time.monotonic()
        self.compile_helpers()
        chosen = self.select()
        sizes = [int(x) for x in args.sizes.split(",")]
        self.big = max(sizes)
        self.kill_n = kill_n = args.kill_n or self.big
        for rep in range(1, args.reps + 1):
            order = rep_order(chosen, rep)
            for n in sizes:
                for cls in order:
                    log(f"rep {rep}/{args.reps}: {cls.name}, {n} services")
                    self.attempt(f"{cls.name} N={n}", self.steady, cls, n)
                if self.spawnloop:
                    self.attempt(f"bare loop N={n}", self.floor, n)
            for cls in order:
                if self.stamp:
                    self.attempt(f"{cls.name} restart", self.flap, cls)
            for cls in order:
                log(f"rep {rep}/{args.reps}: {cls.name}, SIGKILL with {kill_n}")
                self.attempt(f"{cls.name} SIGKILL", self.kill9, cls, kill_n)
            builds = [c for c in order if issubclass(c, Vigil)]
            if Vigil in chosen and self.spawnloop and not args.no_queue:
                for conc in (1, 2, 8):
                    for cls in builds:
                        self.attempt(f"{cls.name} queue c={conc}", self.queue, cls, conc)
        self.elapsed = time.monotonic() - t_start
        busy = statistics.median(self.loads)
        if busy > 1.0:
            self.note(f"the machine was not idle (median 1-min load average {busy:.1f} on "
                      f"{os.cpu_count()} CPUs, from other work): expect noise in the timings, "
                      "less in the memory, wakeup and count rows")
        return [c.name for c in chosen]

    # ---- report

    def report(self, names):
        """Return the markdown section: machine, tables, ratios, notes."""
        out = [machine_line(self, names), ""]
        out += self.main_table(names)
        f = self.floor_table(names)
        if f:
            out += [""] + f
        q = self.queue_table(names)
        if q:
            out += [""] + q
        b = self.base_table(names)
        if b:
            out += [""] + b
        r = self.ratio_table(names)
        if r:
            out += [""] + r
        out += [""] + self.target_table(names)
        out += ["", f"This run took {self.elapsed / 60:.1f} minutes. How each number is taken:", ""]
        out += [f"- {m}" for m in METHOD]
        if len(self.builds(names)) > 1:
            out.append(f"- {BASE_METHOD}")
        if self.notes:
            out += ["", "Notes:", ""] + [f"- {n}" for n in self.notes]
        return "\n".join(out) + "\n"

    def builds(self, names):
        """Return the vigil columns: "vigil", then the base build if it ran."""
        base = self.args.base_label
        return ["vigil"] + ([base] if self.base_vigild and base in names else [])

    def main_rows(self):
        """Return the row keys of the main table, grouped by measure."""
        order = ("start", "wall", "pss", "cpu", "wake", "status", "stop")

        def rank(k):
            head = k.rstrip("0123456789")
            if head in order:
                return (order.index(head), int(k[len(head):]))
            return (len(order), self.rows.index(k))

        return sorted((k for k in self.rows
                       if not k.startswith(("q", "floor")) and k != "enq"), key=rank)

    def main_table(self, names):
        """Workloads as rows (grouped by measure), supervisors as columns."""
        rows = self.main_rows()
        out = ["| workload | " + " | ".join(names) + " |",
               "|---|" + "---|" * len(names)]
        for k in rows:
            cells = [summary(self.results[k].get(s, [])) for s in names]
            out.append(f"| {self.labels[k]} | " + " | ".join(cells) + " |")
        return out

    def floor_table(self, names):
        """The bare spawn loop's start, next to vigil's (each build's)."""
        keys = [k for k in self.rows if k.startswith("floor")]
        if not keys:
            return []
        builds = self.builds(names)
        out = ["| floor: `sleep` started by a bare posix_spawn loop, no supervisor "
               "| bare spawn loop | " + " | ".join(builds) + " |",
               "|---|---|" + "---|" * len(builds)]
        for k in keys:
            b = self.results[k].get("bare spawn loop", [])
            v = [summary(self.results.get("start" + k[5:], {}).get(s, [])) for s in builds]
            out.append(f"| {self.labels[k]} | {summary(b)} | " + " | ".join(v) + " |")
        return out

    def queue_table(self, names):
        """Queue throughput of vigil (each build) against the bare spawn loop."""
        keys = [k for k in self.rows if k.startswith("q") and not k.startswith("qr")]
        if not keys:
            return []
        builds = self.builds(names)
        pct = [f"{s}/bare in %" for s in builds]
        pct[-1] += ", each run against the loop run next to it"
        out = ["| queue (vigil only, `true` per message) | " + " | ".join(builds)
               + " | bare posix_spawn loop | " + " | ".join(pct) + " |",
               "|---|---|" + "---|" * 2 * len(builds)]
        for k in keys:
            v = [summary(self.results[k].get(s, [])) for s in builds]
            b = self.results[k].get("bare spawn loop", [])
            r = [summary([round(x) for x in self.results.get("qr" + k[1:], {})
                          .get(f"{s}/bare", [])]) for s in builds]
            out.append(f"| {self.labels[k]} | " + " | ".join(v) + f" | {summary(b)} | "
                       + " | ".join(r) + " |")
        if "enq" in self.results:
            v = [summary(self.results["enq"].get(s, [])) for s in builds]
            out.append(f"| {self.labels['enq']} | " + " | ".join(v) + " |"
                       + " |" * (1 + len(builds)))
        return out

    def base_table(self, names):
        """The current build's medians over the base build's, every vigil row.

        A range column tells whether the min–max ranges of the two overlap
        (then the difference is within this run's noise).
        """
        builds = self.builds(names)
        if len(builds) < 2:
            return []
        new, base = builds
        keys = self.main_rows() + [k for k in self.rows if k == "enq" or (
            k.startswith("q") and not k.startswith("qr"))]
        out = [f"| {new} / {base} (medians) | {new} | {base} | ratio | ranges |",
               "|---|---|---|---|---|"]
        for k in keys:
            a, b = self.results[k].get(new, []), self.results[k].get(base, [])
            if not a or not b:
                continue
            ma, mb = statistics.median(a), statistics.median(b)
            ratio = fmt_num(ma / mb) if mb else "—"
            apart = max(a) < min(b) or max(b) < min(a)
            out.append(f"| {self.labels[k]} | {fmt_num(ma)} | {fmt_num(mb)} | {ratio} | "
                       f"{'**apart**' if apart else 'overlap'} |")
        return out

    def ratio_table(self, names):
        """vigil's median over each anchor's, for the key numbers."""
        anchors = [s for s in names if s not in self.builds(names)]
        if "vigil" not in names or not anchors:
            return []
        big = self.big
        keys = [(f"start{big}", f"all {big} running"), (f"pss{big}", f"PSS, {big} services"),
                (f"cpu{big}", f"idle CPU, {big} services"),
                (f"wake{big}", f"idle wakeups, {big} services"),
                (f"status{big}", f"status of {big}"), (f"stop{big}", f"stop of {big}"),
                ("period", "restart period")]
        out = ["| vigil / anchor (medians; < 1: vigil is lower) | " + " | ".join(anchors) + " |",
               "|---|" + "---|" * len(anchors)]
        for k, label in keys:
            if k not in self.results:
                continue
            v = median_or_none(self.results[k].get("vigil", []))
            cells = []
            for a in anchors:
                m = median_or_none(self.results[k].get(a, []))
                cells.append("—" if v is None or not m else fmt_num(v / m))
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        return out

    def target_table(self, names):
        """vigil against the targets of issue 9 (each build, if two ran)."""
        builds = self.builds(names)

        def med(k, sup):
            who = f"{sup}/bare" if k.startswith("qr") else sup
            return median_or_none(self.results.get(k, {}).get(who, []))

        big, kn = self.big, self.kill_n
        bare = median_or_none(self.results.get(f"floor{big}", {}).get("bare spawn loop", []))
        floor = "" if bare is None else f" (a bare loop: {fmt_num(bare)})"
        rows = [
            (f"all {big} running{floor}", "≤ 500 ms", f"start{big}", lambda v: v <= 500),
            (f"PSS with {big}", "≤ 5 MB", f"pss{big}", lambda v: v <= 5),
            (f"wakeups in {self.args.idle:g} s idle", "0", f"wake{big}", lambda v: v == 0),
            (f"status of {big}", "≤ 10 ms", f"status{big}", lambda v: v <= 10),
            (f"stop of {big}", "≤ 300 ms", f"stop{big}", lambda v: v <= 300),
            ("restart overhead", "≤ 2 ms", "overhead", lambda v: v <= 2),
        ]
        rows += [(f"alive 1 s after SIGKILL ({kn})", "0", "k9alive", lambda v: v == 0),
                 ("copies after its restart", f"{kn}", "k9copies", lambda v: v == kn)]
        for c in (1, 2, 8):
            rows.append((f"queue at concurrency {c}, % of the bare loop", "≥ 70 %", f"qr{c}",
                         lambda x: x >= 70))
        out = ["| vigil target (issue 9, set for 1000 services) | target | "
               + " | ".join(f"{s} (median) | met" for s in builds) + " |",
               "|---|---|" + "---|---|" * len(builds)]
        for label, target, k, ok in rows:
            vals = [med(k, s) for s in builds]
            if vals[0] is None:
                continue
            cells = ["— | —" if v is None else f"{fmt_num(v)} | {'yes' if ok(v) else '**no**'}"
                     for v in vals]
            out.append(f"| {label} | {target} | " + " | ".join(cells) + " |")
        return out

METHOD = [
    "all running: the latest start time of the N service processes minus the "
    "supervisor's (field 22 of /proc/PID/stat, in 10 ms ticks); the floor is "
    "spawnloop.c with C = 0 (posix_spawnp of the same N `sleep`, one after the "
    "other, nothing else), measured the same way next to each size; the "
    "wall-clock row polls /proc every 5–20 ms from the start. The scan directories "
    "of runit, s6 and daemontools are aged 1 min first (runsvdir waits until its "
    "directory is 1 s old, which would add 1 s to every start).",
    "PSS and idle: /proc/PID/smaps_rollup, utime + stime and voluntary_ctxt_switches "
    "summed over the supervisor's own processes: vigild; supervisord's python; "
    "runsvdir + each runsv; s6-svscan + each s6-supervise; svscan + each supervise. "
    "The idle window starts 1 s after all are running.",
    "status: `vigilctl status`, `supervisorctl status`, `sv status DIR/*`, "
    "`s6-svstat DIR` for each service in one `sh` loop (it has no \"all\"), "
    "`svstat DIR/*`; the wall time of one call after an untimed one.",
    "stop all: SIGTERM to vigild, supervisord and s6-svscan; SIGHUP to runsvdir "
    "(TERM to each runsv, which stops its service and exits); `svc -dx DIR/*` then "
    "SIGTERM to svscan; until the last service process is gone.",
    "restart: the service is stamp.c, which records its start and exits 1 "
    "(≥ 5 s and ≥ 7 starts). vigil: restart_delay at its default 100 ms, "
    "restart_delay_max pinned to it so that it does not double; supervisord: "
    "startsecs=0, autorestart=true, startretries=1000000; runit, s6 and "
    "daemontools have a fixed 1 s pause. vigil's overhead: from an exit to the "
    "next exec, minus the delay vigild logged for that restart (it has ±10 % jitter).",
    "SIGKILL: SIGKILL to the supervisor's main process; the services alive 1 s "
    "later; then the same supervisor on the same directories, counted once it runs "
    "N services of its own, or once the count has not changed for 2 s and 6 s "
    "have passed (svscan and runsvdir rescan every 5 s).",
    "queue: N messages enqueued with `vigilctl enqueue --direct`, then vigild "
    "started; from just before `vigilctl start --no-wait q` to the end of the "
    "last run in `vigilctl --json history q` (wall clock), once `vigilctl --json "
    "queue q`, asked every 100 ms, shows none left; the bare loop is spawnloop.c "
    "(posix_spawn + waitpid of `true`, the same N and concurrency).",
]

BASE_METHOD = (
    "two vigil builds: the base build (--base-vigild) runs each vigil workload "
    "right next to the current one in every repetition, the current build first "
    "in odd repetitions and second in even ones; each queue run has its own bare "
    "loop run next to it. In the table of medians, \"apart\" means the min–max "
    "ranges of the two builds do not overlap; \"overlap\" means the difference is "
    "within this run's spread."
)


def rep_order(chosen, rep):
    """Return the supervisors in their order for repetition rep.

    On even repetitions the two vigil builds (with --base-vigild) swap
    places, so that neither always runs first.
    """
    order = list(chosen)
    idx = [i for i, cls in enumerate(order) if issubclass(cls, Vigil)]
    if len(idx) == 2 and rep % 2 == 0:
        a, b = idx
        order[a], order[b] = order[b], order[a]
    return order


def read_lines(path):
    """Return the complete lines of path (none if it does not exist)."""
    try:
        with open(path) as f:
            data = f.read()
    except OSError:
        return []
    return [line for line in data.split("\n")[:-1] if line.strip()]


def vigil_delays(logfile):
    """Return, in order, the restart delays (ms) vigild logged."""
    units = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    out = []
    for line in read_lines(logfile):
        m = re.search(r"restarting in ([0-9.]+)(us|ms|s) ", line)
        if m:
            out.append(float(m.group(1)) * units[m.group(2)])
    return out


def queue_left(vigilctl, sock):
    """Return the messages of queue job q not yet done (-1 if unknown)."""
    import json

    rc, _, out = run_cmd([vigilctl, "-s", sock, "--json", "queue", "q"], 10)
    if rc != 0:
        return -1
    q = json.loads(out)["queues"][0]
    return q["available"] + q["delayed"] + q["running"]


def last_run_end(vigilctl, sock, conc):
    """Return when the last run of q ended (wall clock s), from its history."""
    import json

    rc, _, out = run_cmd([vigilctl, "-s", sock, "--json", "history", "-n",
                          str(conc + 8), "q"], 10)
    if rc != 0:
        return None
    ends = [r["ended_us"] for r in json.loads(out)["runs"] if r.get("ended_us")]
    return max(ends) / 1e6 if ends else None


def loadavg():
    """Return the 1-minute load average, as text."""
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def fs_type(path):
    """Return the file system type of the mount that holds path."""
    best, kind = "", "?"
    with open("/proc/mounts") as f:
        for line in f:
            mnt, typ = line.split()[1:3]
            inside = path == mnt or path.startswith(mnt.rstrip("/") + "/")
            if inside and len(mnt) >= len(best):
                best, kind = mnt, typ
    return kind


def machine_line(bench, names):
    """Describe the machine and the versions measured, in one paragraph."""
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    try:
        with open("/etc/debian_version") as f:
            debian = "Debian " + f.read().strip()
    except OSError:
        debian = "not Debian"
    versions = []
    two = len(bench.builds(names)) > 1
    for cls in bench.classes:
        if cls.name not in names:
            continue
        if issubclass(cls, Vigil):
            vigild = bench.vigil_bins(cls)[0]
            rc, _, out = run_cmd([vigild, "--version"])
            what = out.strip() if rc == 0 else "vigild"
            versions.append(f"{cls.name}: {what} ({vigild})" if two else what)
        else:
            rc, _, out = run_cmd(["dpkg-query", "-W", "-f", "${Version}", cls.package])
            versions.append(f"{cls.package} {out.strip()}" if rc == 0 else cls.package)
    a = bench.args
    loads = bench.loads + [float(loadavg())]
    load = "1-min load average %.2f before the run, median %.2f and max %.2f during it" % (
        loads[0], statistics.median(loads), max(loads))
    return (
        f"Machine: {os.cpu_count()} × {model}, {mem_kb / 1048576:.1f} GiB RAM, "
        f"Linux {os.uname().release}, {debian}; {load}. Measured {time.strftime('%Y-%m-%d')} "
        f"with {', '.join(versions)}; {a.reps} repetition{'s' if a.reps > 1 else ''}, "
        f"median (min–max). Services are `sleep 100000.<token>` (runit, s6 and "
        f"daemontools through a `#!/bin/sh` run script that execs it); every "
        f"supervisor runs with its defaults, in the foreground, in a private directory "
        f"under {os.path.dirname(bench.root)} ({fs_type(bench.root)})."
    )


# ---------------------------------------------------------- install


POLICY_RC = "/usr/sbin/policy-rc.d"


def install_anchors(bench):
    """apt-get install the anchors, with no service started by the install.

    A policy-rc.d that denies every start is put in place unless one is
    already there (then it is left as it is), and removed afterwards.
    Recommends are not installed (runit's would pull in runit-run, which
    hooks runsvdir into the init system).  Failures become notes.
    """
    if os.geteuid() != 0:
        bench.note("--install needs root: anchors not installed")
        return
    ours = not os.path.exists(POLICY_RC)
    if not ours:
        with open(POLICY_RC, errors="replace") as f:
            if "exit 101" not in f.read():
                bench.note(f"{POLICY_RC} exists and may allow starts: the install "
                           "could start system-wide anchors (the harness does not use them)")
    if ours:
        with open(POLICY_RC, "w") as f:
            f.write("#!/bin/sh\n# vigil bench.py: no service starts during the install."
                    "\nexit 101\n")
        os.chmod(POLICY_RC, 0o755)
    env = dict(clean_env(), DEBIAN_FRONTEND="noninteractive")
    try:
        cmd = ["apt-get", "install", "-y", "--no-install-recommends"]
        rc, _, out = run_cmd(cmd + ANCHOR_PACKAGES, 900, env=env)
        if rc != 0:
            run_cmd(["apt-get", "update"], 900, env=env)
            for pkg in ANCHOR_PACKAGES:
                rc, _, out = run_cmd(cmd + [pkg], 900, env=env)
                if rc != 0:
                    bench.note(f"apt-get install {pkg} failed: {out.strip()[-200:]}")
    finally:
        if ours:
            os.unlink(POLICY_RC)


SYSTEM_NAMES = ("runsvdir", "runsv", "supervisord", "s6-svscan", "s6-supervise",
                "svscan", "supervise")


def system_instances(root):
    """Return "pid comm" of anchor processes that are not the harness's own."""
    mine = set(leftovers(root))
    out = []
    for pid in all_pids():
        st = proc_stat(pid)
        if st and st["comm"] in SYSTEM_NAMES and pid not in mine and st["state"] not in "ZX":
            out.append(f"{pid} {st['comm']}")
    return out


def check_system(bench, before):
    """Note system-wide anchor instances (left alone) and systemd units."""
    now = system_instances(bench.root)
    new = [p for p in now if p not in before]
    if before:
        bench.note("system-wide instances found before the run, left alone: " + ", ".join(before))
    if new:
        bench.note("anchor processes appeared during the run, not the harness's: " + ", ".join(new))
    if os.path.isdir("/run/systemd/system"):
        rc, _, out = run_cmd(["systemctl", "is-active", "supervisor.service",
                              "runit.service", "daemontools.service"])
        if "active\n" in out.replace("inactive", ""):
            bench.note("systemctl is-active: " + " ".join(out.split()))


# ---------------------------------------------------------- main


def parse_args(argv):
    """Parse the command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vigild", default=os.path.join(HERE, "../../supervisord/vigild"))
    ap.add_argument("--vigilctl", default=os.path.join(HERE, "../../supervisord/vigilctl"))
    ap.add_argument("--base-vigild", metavar="PATH",
                    help="a second vigil build (e.g. main before a change): its "
                    "vigild runs every vigil workload too, next to --vigild")
    ap.add_argument("--base-vigilctl", metavar="PATH", help="that build's vigilctl")
    ap.add_argument("--base-label", metavar="TEXT", default="vigil (base)",
                    help='its column heading (default "vigil (base)")')
    ap.add_argument("--conf", metavar="LINE", action="append",
                    help="a line of vigil.conf for --vigild (repeatable)")
    ap.add_argument("--base-conf", metavar="LINE", action="append",
                    help="a line of vigil.conf for --base-vigild (repeatable): "
                    "with the same binary, compares two settings")
    ap.add_argument("--install", action="store_true",
                    help="apt-get install supervisor runit s6 daemontools first (root)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: N = 10,100, 1 repetition, 5 s idle, 200 messages")
    ap.add_argument("--reps", type=int, default=3, help="repetitions (default 3)")
    ap.add_argument("--only", help="comma-separated: vigil,supervisord,runit,s6,daemontools")
    ap.add_argument("--sizes", default="10,100,1000", help="service counts (10,100,1000)")
    ap.add_argument("--idle", type=float, default=20.0, help="idle window in s (20)")
    ap.add_argument("--flap", type=float, default=5.0,
                    help="seconds of restarts to watch (5; at least 7 starts)")
    ap.add_argument("--kill-n", type=int, default=0,
                    help="services for the SIGKILL test (default: the largest size)")
    ap.add_argument("--queue-messages", type=int, default=1000)
    ap.add_argument("--no-queue", action="store_true", help="skip the queue workload")
    ap.add_argument("--output", help="also write the markdown to this file")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--tmpdir", help="where the private directories go (default /dev/shm, "
                    "a tmpfs as /run is, else $TMPDIR or /tmp)")
    args = ap.parse_args(argv)
    if bool(args.base_vigild) != bool(args.base_vigilctl):
        ap.error("--base-vigild and --base-vigilctl go together")
    if args.base_label in [cls.name for cls in SUPERVISORS] + ["bare spawn loop"]:
        ap.error(f"--base-label {args.base_label!r} is taken")
    if args.tmpdir is None and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        args.tmpdir = "/dev/shm"
    if args.quick:
        args.reps, args.sizes, args.idle, args.queue_messages = 1, "10,100", 5.0, 200
    return args


def main(argv):
    """Run the benchmark and print the report; exit 0 unless nothing ran."""
    args = parse_args(argv)
    bench = Bench(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        if args.install:
            install_anchors(bench)
        before = system_instances(bench.root)
        names = bench.run()
        check_system(bench, before)
    finally:
        bench.cleanup_all()
    if args.keep:
        log(f"work directory kept: {bench.root}")
    text = bench.report(names)
    sys.stdout.write(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    return 0 if bench.results else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
