#!/usr/bin/env python3
"""karma-stream's energy figures from a fake powercap tree (ctest
stream.energy.rapl): a writer thread advances a package and a DRAM counter at
a known constant power, wrapping during the run, and every kernel must report
that power; the windows must end on time beside a busy neighbour process;
then the same run with run.energy=off, and with a powercap root that does not
exist, must pass without figures.

usage: energy_run_test.py KARMA_STREAM KARMA_VALIDATE_RESULTS DECK [KARMA_CONTACT CONTACT_DECK]
       energy_run_test.py --device KARMA_STREAM KARMA_VALIDATE_RESULTS DECK

With karma-contact, its rebuild, statistics and whole-step kernels too (their energy
windows are made outside the harness's loop). --device (ctest
stream.energy.device, GPU builds): the device's own counter, with a second
karma-stream launching kernels on the same device throughout; only the
loaded run."""

import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

PERIOD_S = 0.005  # the writer's step; GPU counters step every 20-100 ms
LIMIT_S = 120  # a hang fails


class Zone:
    """One RAPL domain: `watts` from `start_uj`, wrapping at `range_uj`."""

    def __init__(self, directory, name, watts, range_uj, start_uj):
        self.directory, self.watts, self.range_uj, self.start_uj = (
            directory, watts, range_uj, start_uj)
        self.laps = 0
        self.wraps = []  # monotonic times the counter wrapped
        os.makedirs(directory)
        for key, value in (("name", name), ("max_energy_range_uj", range_uj)):
            with open(os.path.join(directory, key), "w") as f:
                f.write(f"{value}\n")
        self.write(0.0)

    def write(self, seconds):
        total = self.start_uj + self.watts * seconds * 1e6
        laps = int(total // self.range_uj)
        if laps > self.laps:
            self.laps = laps
            self.wraps.append(time.monotonic())
        # Renamed into place: a reader never sees a half-written file.
        path = os.path.join(self.directory, "energy_uj")
        with open(path + ".new", "w") as f:
            f.write(f"{int(total % self.range_uj)}\n")
        os.replace(path + ".new", path)


class Writer(threading.Thread):
    """Advances the zones every PERIOD_S from the time since it started. A
    daemon thread: it cannot outlive the test, however the test ends."""

    def __init__(self, zones):
        super().__init__(daemon=True)
        self.zones, self.halt = zones, threading.Event()

    def run(self):
        start = time.monotonic()
        while not self.halt.wait(PERIOD_S):
            for zone in self.zones:
                zone.write(time.monotonic() - start)


failures = []


def check(condition, problem):
    if not condition:
        failures.append(problem)
    return condition


def close(a, b, rel):
    return abs(a - b) <= rel * abs(b)


def run(case, stream, validate, deck, work, root, *args, app="stream"):
    """Runs karma-<app> (`stream`, the executable) on `deck` with
    KARMA_POWERCAP_ROOT=`root` (the device's own counter where None); returns
    (results document, stdout, start, end) or None when it failed."""
    output = os.path.join(work, f"{case}.json")
    command = [stream, deck, "--output", output, *args]
    env = dict(os.environ, **({"KARMA_POWERCAP_ROOT": root} if root else {}))
    start = time.monotonic()
    p = subprocess.run(command, capture_output=True, text=True, timeout=LIMIT_S, env=env,
                       stdin=subprocess.DEVNULL)
    end = time.monotonic()
    print(f"--- {case}: {' '.join(command)} (exit {p.returncode}, {end - start:.1f} s)")
    print(p.stdout + p.stderr)
    if not check(p.returncode == 0, f"{case}: exit {p.returncode}, expected 0"):
        return None
    v = subprocess.run([sys.executable, validate, output, "--app", app, "--ranks", "1",
                        "--result", "PASSED"], capture_output=True, text=True, timeout=LIMIT_S)
    check(v.returncode == 0, f"{case}: the results do not validate:\n{v.stdout}{v.stderr}")
    with open(output) as f:
        return json.load(f), p.stdout, start, end


def check_measured(doc, out, start, end, zones, app="stream"):
    watts = sum(z.watts for z in zones)
    rank = doc["energy"]["ranks"][0]
    check(rank["status"] == "measured" and rank["source"] == "rapl"
          and rank["counter"] == "package-0 + dram", f"measured: energy.ranks[0] is {rank}")
    check(close(rank["idle_power_W"], watts, 0.1),
          f"measured: idle power {rank['idle_power_W']} W, the writer's is {watts} W")
    for z in zones if app == "stream" else ():  # the counters wrap during the first run
        check(any(start <= t <= end for t in z.wraps),
              f"measured: {z.directory} did not wrap during the run (wraps at {z.wraps}, "
              f"run {start:.2f} to {end:.2f})")
    lines = out.splitlines()
    per_watt = {}
    for i, line in enumerate(lines):
        m = re.fullmatch(rf"FOM_PER_WATT: app={app} kernel=(\S+) value=(\S+) units=(\S+) "
                         r"watts=(\S+) ranks=1", line)
        if m:
            per_watt[m[1]] = (float(m[2]), m[3], float(m[4]))
            check(i > 0 and lines[i - 1].startswith(f"FOM: app={app} kernel={m[1]} "),
                  f"measured: '{line}' does not follow its kernel's FOM line")
    for k in doc["kernels"]:
        name, e = k["name"], k["energy"]
        if not check(e["status"] == "measured", f"measured: {name}'s energy is {e}"):
            continue
        power = e["average_power_W"]
        check(close(power, watts, 0.1), f"measured: {name} at {power} W, not {watts} W: {e}")
        check(e["source"] == "rapl" and e["counters"] == 1 and e["executions"] >= 1
              and e["window_s"] >= 10 * e["counter_step_s"] > 0, f"measured: {name}: {e}")
        check(close(e["joules_per_execution"], power * k["time_s"]["median"], 1e-9),
              f"measured: {name}: joules_per_execution is not power x median time")
        check(close(e["fom_per_watt"]["value"], k["fom"]["value"] / power, 1e-9)
              and e["fom_per_watt"]["units"] == k["fom"]["units"] + "/W",
              f"measured: {name}: fom_per_watt {e['fom_per_watt']}")
        printed = per_watt.get(name)
        if check(printed is not None, f"measured: no FOM_PER_WATT line for {name}"):
            check(close(printed[0], e["fom_per_watt"]["value"], 1e-5)
                  and printed[1] == e["fom_per_watt"]["units"] and close(printed[2], power, 1e-5),
                  f"measured: {name}'s FOM_PER_WATT line {printed} disagrees with {e}")


class Neighbour:
    """A second karma-stream launching kernels on the same device, or keeping
    the host's cores busy, for as long as it is open: runs of random length
    one after the other, so the load comes and goes."""

    def __init__(self, stream, deck, work):
        self.command = [stream, deck, "--quiet", "--output", os.path.join(work, "neighbour.json"),
                        "--set", "run.energy=off", "--set", "stream.shape=[2^22]",
                        "--set", "run.warmup=0"]
        self.halt, self.runs = threading.Event(), 0
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        rng = random.Random(2026)
        while not self.halt.is_set():
            repetitions = rng.choice([20, 200, 2000])
            p = subprocess.Popen([*self.command, "--set", f"run.repetitions={repetitions}"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 stdin=subprocess.DEVNULL)
            while p.poll() is None and not self.halt.wait(0.05):
                pass
            if p.poll() is None:
                p.kill()
            p.wait()
            self.runs += 1

    def __enter__(self):
        self.thread.start()
        time.sleep(1)  # under way before the measured run starts
        return self

    def __exit__(self, *exc):
        self.halt.set()
        self.thread.join()


def check_on_time(case, doc, window_s):
    """Each kernel's executions ran by the clock for the longer of
    run.energy_window and 12 counter steps and ended within 1 s of it; the
    whole window, with the reads that date its two edges, ended within what
    those reads may wait; a figure only with at least 10 steps."""
    step = max(r.get("counter_step_s", 0) for r in doc["energy"]["ranks"])
    target = max(window_s, 12 * step)
    # An edge waits for a counter change read in a narrow bracket; on a loaded
    # host it may skip preempted reads for up to 3 steps and 1 s (next_step).
    edges = 2 * (3 * step + 1)
    for k in doc["kernels"]:
        name, e = k["name"], k["energy"]
        if not check("wall_s" in e and "counter_steps" in e, f"{case}: {name}'s energy is {e}"):
            continue
        check(target * 0.999 <= e["window_s"] <= target + 1.0
              and e["wall_s"] <= target + edges + 1.0,
              f"{case}: {name}'s window took {e['wall_s']:.3f} s ({e['window_s']:.3f} s of "
              f"executions) for a target of {target:.3f} s and edges of at most {edges:.3f} s")
        if e["status"] == "measured":
            check(e["counter_steps"] >= 10, f"{case}: {name} kept a figure with {e}")
            check((e["counter_steps"] < 12) == ("cut_short" in e),
                  f"{case}: {name}: cut_short does not follow its steps: {e}")
        else:
            check(e["status"] == "unavailable" and e["counter_steps"] < 10
                  and "fewer than the 10" in e["reason"], f"{case}: {name}'s energy is {e}")


def loaded(stream, validate, deck, work, root):
    """A measured run beside a busy neighbour: the windows end on time."""
    with Neighbour(stream, deck, work) as neighbour:
        result = run("loaded", stream, validate, deck, work, root, "--set", "run.energy=on")
    print(f"--- the neighbour ran {neighbour.runs} time(s) beside it")
    check(neighbour.runs >= 1, "loaded: the neighbour never finished a run")
    if result:
        check_on_time("loaded", result[0], result[0]["energy"]["window_s"])
        rank = result[0]["energy"]["ranks"][0]
        check(rank["status"] == "measured", f"loaded: the counter was not read: {rank}")


def check_without(case, doc, out, status, reason):
    check("FOM_PER_WATT" not in out, f"{case}: a FOM_PER_WATT line was printed")
    for k in doc["kernels"]:
        e = k["energy"]
        check(e["status"] == status and reason in e.get("reason", reason),
              f"{case}: {k['name']}'s energy is {e}, expected {status} ({reason})")
    rank = doc["energy"]["ranks"][0]
    check(rank["status"] == "unavailable" and reason in rank.get("reason", ""),
          f"{case}: energy.ranks[0] is {rank}")


def work_directory():
    """On a memory file system where there is one: a powercap tree is never
    on disk, and a fake one there can stall its writer or its reader behind
    the disk's other writes (the CI's builds) for longer than a window."""
    shm = "/dev/shm"
    on_memory = os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK)
    return tempfile.TemporaryDirectory(prefix="karma_energy_", dir=shm if on_memory else None)


def main():
    if sys.argv[1] == "--device":
        stream, validate, deck = sys.argv[2:5]
        with work_directory() as work:
            loaded(stream, validate, deck, work, None)
        return report()
    stream, validate, deck = sys.argv[1:4]
    with work_directory() as work:
        root = os.path.join(work, "powercap")
        package = os.path.join(root, "intel-rapl:0")
        # 40 W in all. Each counter wraps about 1 s after the start, during the
        # run, and not again for 100 s: the harness, as RAPL's users, undoes
        # only one wrap between two reads, and its windows read only at their ends.
        zones = [Zone(package, "package-0", 30, 3_000_000_000, 2_970_000_000),
                 Zone(os.path.join(package, "intel-rapl:0:0"), "dram", 10, 1_000_000_000,
                      990_000_000)]
        writer = Writer(zones)
        writer.start()
        try:
            # The small decks measure no energy unless asked (their comment says why).
            result = run("measured", stream, validate, deck, work, root, "--set", "run.energy=on")
            if result:
                check_measured(*result, zones)
                check_on_time("measured", result[0], result[0]["energy"]["window_s"])
            loaded(stream, validate, deck, work, root)
            if len(sys.argv) > 5:
                # A short contact run: few steps and sweeps, every storage.
                result = run("contact", sys.argv[4], validate, sys.argv[5], work, root,
                             "--set", "contact.steps=3", "--set", "contact.sweeps=5",
                             "--set", "run.energy=on", app="contact")
                if result:
                    check_measured(*result, zones, app="contact")
                    names = [k["name"] for k in result[0]["kernels"]]
                    check(len(names) == 9 and all(n.endswith((".build", ".stats", ".step"))
                                                  for n in names),
                          f"contact: kernels {names}")
            result = run("off", stream, validate, deck, work, root, "--set", "run.energy=off")
            if result:
                # Only the kernels say "off"; the run's section says why there is no counter.
                check_without("off", *result[:2], "off", "run.energy is off")
        finally:
            writer.halt.set()
            writer.join()
        missing = os.path.join(work, "no-such-powercap")
        result = run("unavailable", stream, validate, deck, work, missing, "--set", "run.energy=on")
        if result:
            check_without("unavailable", *result[:2], "unavailable", missing)
    return report()


def report():
    for f in failures:
        print(f"FAILED: {f}")
    print("energy_run_test: " + ("FAILED" if failures else "PASSED"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
