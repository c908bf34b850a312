"""A one-node Slurm cluster on this machine, for tests: munged with its own
key and socket, slurmctld and slurmd with a slurm.conf of their own, all
state in a temporary directory, loopback addresses and free ports only.

Debian's slurm-wlm and munge (22.05 on bookworm); run as root, which CI is.
Every wait has a time limit; stop() always ends what start() began, by
process id, after cancelling the cluster's jobs.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel")


class ClusterError(Exception):
    pass


def which(name):
    path = shutil.which(name)
    if path:
        return path
    for d in SBIN:
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


def missing_programs():
    return [p for p in PROGRAMS if which(p) is None]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    NODE = "karmanode"
    PARTITION = "karma"

    def __init__(self, gpus=2, max_life_s=900):
        self.gpus = gpus
        # Each daemon runs under timeout(1): should the test itself be killed
        # before it can stop them, they still end by themselves.
        self.max_life_s = max_life_s
        self.dir = None
        self.procs = {}
        self.env = None

    # -- lifecycle --------------------------------------------------------------

    def start(self, timeout=60):
        if os.geteuid() != 0:
            raise ClusterError("the Slurm test runs slurmd, which needs root (CI runs as root)")
        missing = missing_programs()
        if missing:
            raise ClusterError(f"not installed: {', '.join(missing)} (Debian: slurm-wlm munge; "
                               "scripts/bootstrap.sh installs them)")
        # munged insists that every directory above its socket be searchable.
        self.dir = tempfile.mkdtemp(prefix="karma-slurm-")
        os.chmod(self.dir, 0o755)
        for d in ("munge", "state", "spool", "log"):
            os.makedirs(os.path.join(self.dir, d))
        key = os.path.join(self.dir, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.socket = os.path.join(self.dir, "munge", "munge.socket")
        self.conf = os.path.join(self.dir, "slurm.conf")
        self._write_config()
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        for var in list(self.env):
            if var.startswith(("SLURM_", "SBATCH_", "SRUN_", "SQUEUE_")) and var != "SLURM_CONF":
                del self.env[var]  # an outer job's settings must not leak in

        deadline = time.monotonic() + timeout
        self._spawn("munged", [which("munged"), "--foreground", f"--key-file={key}",
                               f"--socket={self.socket}",
                               f"--pid-file={self.dir}/munge/munged.pid",
                               f"--seed-file={self.dir}/munge/munged.seed",
                               f"--log-file={self.dir}/log/munged.log", "--num-threads=4"])
        self._wait(lambda: os.path.exists(self.socket), deadline, "munged's socket")
        self._spawn("slurmctld", [which("slurmctld"), "-D", "-f", self.conf])
        self._spawn("slurmd", [which("slurmd"), "-D", "-f", self.conf, "-N", self.NODE])
        self._wait(self._node_idle, deadline, f"node {self.NODE} to be idle")

    def stop(self, timeout=30):
        """Cancels the cluster's jobs, ends the daemons, removes the state."""
        if self.env and "slurmctld" in self.procs:
            try:
                self.run("scancel", "--full", "--partition", self.PARTITION, timeout=10)
                end = time.monotonic() + 20
                while time.monotonic() < end:
                    q = self.run("squeue", "--noheader", "--format=%i", timeout=10)
                    if q.returncode != 0 or not q.stdout.strip():
                        break
                    time.sleep(0.5)
            except (subprocess.TimeoutExpired, OSError):
                pass
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.terminate()
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        for f in getattr(self, "_logs", {}).values():
            f.close()
        self.procs = {}

    def cleanup(self):
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    # -- helpers ----------------------------------------------------------------

    def run(self, program, *args, timeout=30):
        return subprocess.run([which(program), *args], capture_output=True, text=True,
                              timeout=timeout, env=self.env, stdin=subprocess.DEVNULL)

    def logs(self, lines=40):
        """The end of every daemon's log, for a failure message."""
        out = []
        if not self.dir:
            return ""
        for name in sorted(os.listdir(os.path.join(self.dir, "log"))):
            path = os.path.join(self.dir, "log", name)
            with open(path, errors="replace") as f:
                tail = f.read().splitlines()[-lines:]
            out.append(f"--- {name}\n" + "\n".join(tail))
        return "\n".join(out)

    def _spawn(self, name, argv):
        if not hasattr(self, "_logs"):
            self._logs = {}
        log = open(os.path.join(self.dir, "log", f"{name}.out"), "w")
        self._logs[name] = log
        argv = [which("timeout"), "--kill-after=10", str(self.max_life_s)] + argv
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=self.env,
                                            start_new_session=True)

    def _wait(self, ready, deadline, what):
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise ClusterError(f"{name} exited with status {p.returncode} while "
                                       f"waiting for {what}\n{self.logs()}")
            if ready():
                return
            time.sleep(0.2)
        raise ClusterError(f"timed out waiting for {what}\n{self.logs()}")

    def _node_idle(self):
        try:
            r = self.run("sinfo", "--noheader", "--nodes", self.NODE, "--format=%T", timeout=10)
        except subprocess.TimeoutExpired:
            return False
        return r.returncode == 0 and r.stdout.strip().rstrip("*") == "idle"

    def _write_config(self):
        host = socket.gethostname().split(".")[0]
        d = self.dir
        memory = 1000
        lines = [
            "# Written by python/tests/slurm_cluster.py for one test run.",
            "ClusterName=karmatest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/spool",
            f"SlurmctldPidFile={d}/slurmctld.pid",
            f"SlurmdPidFile={d}/slurmd.pid",
            f"SlurmctldLogFile={d}/log/slurmctld.log",
            f"SlurmdLogFile={d}/log/slurmd.log",
            "MailProg=/bin/true",
            # No cgroups: a container need not have them.
            "ProctrackType=proctrack/linuxproc",
            # CPU binding by sched_setaffinity (no cgroups): host jobs are bound.
            "TaskPlugin=task/affinity",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "ReturnToService=2",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "MessageTimeout=20",
            "KillWait=5",
            "MinJobAge=600",  # finished jobs stay visible to squeue for the test
        ]
        gres = ""
        if self.gpus:
            # GPUs by name only (no devices here): Slurm wants a character device per
            # GPU, and any will do for allocation and --gpus-per-task.
            lines.append("GresTypes=gpu")
            gres = f" Gres=gpu:{self.gpus}"
            devices = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                       "/dev/urandom"][:self.gpus]
            with open(os.path.join(d, "gres.conf"), "w") as f:
                f.write("AutoDetect=off\n")
                for dev in devices:
                    f.write(f"NodeName={self.NODE} Name=gpu File={dev}\n")
        lines += [
            f"NodeName={self.NODE} NodeHostname={host} NodeAddr=127.0.0.1 "
            f"CPUs={os.cpu_count() or 1} RealMemory={memory}{gres} State=UNKNOWN",
            f"PartitionName={self.PARTITION} Nodes={self.NODE} Default=YES MaxTime=30 State=UP",
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
