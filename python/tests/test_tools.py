"""What every tool shares: --help, --version, and working from the build's
bin/ and once installed (PREFIX/bin beside the mini-apps, links into the
tools' environment in PREFIX/lib/karma/python)."""

import glob
import os
import re
import subprocess

import pytest

from conftest import DATA, ROOT, SAMPLES, build_bin, built, entry_points, load_json, tool

TOOLS = ("karma-batch", "karma-compare", "karma-report", "karma-envcapture")


def project_version():
    """CMake's version and its suffix (-dev between releases)."""
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        text = f.read()
    suffix = re.search(r'set\(KARMA_VERSION_SUFFIX "([^"]*)"\)', text)
    return re.search(r"project\(karma VERSION ([0-9.]+)", text).group(1) + \
        (suffix.group(1) if suffix else "")


@pytest.mark.parametrize("name", TOOLS)
def test_help_and_version(name):
    r = tool(name, "--help")
    assert r.returncode == 0 and r.stdout.startswith(f"usage: {name}"), r.stderr
    assert "exit status" in r.stdout
    r = tool(name, "--version")
    assert r.returncode == 0 and r.stdout.strip() == f"{name} {project_version()}"


@pytest.mark.parametrize("name", sorted(entry_points()))
def test_every_entry_point_answers_version(name):
    r = tool(name, "--version")
    assert r.returncode == 0 and r.stdout.strip() == f"{name} {project_version()}", r.stderr


def programs():
    """What a build's bin/ and PREFIX/bin hold: every tool's entry point
    (pyproject.toml's [project.scripts]) and every mini-app
    (karma_add_miniapp in miniapps/<app>/CMakeLists.txt)."""
    apps = set()
    for path in glob.glob(os.path.join(ROOT, "miniapps", "*", "CMakeLists.txt")):
        with open(path) as f:
            apps.update(re.findall(r"^karma_add_miniapp\((\w+)", f.read(), re.M))
    assert {"stream", "microbench"} <= apps, apps
    return set(entry_points()) | {f"karma-{app}" for app in apps}


def test_the_build_bin_holds_every_program(tmp_path):
    """build/<preset>/bin: every mini-app and tool, as PREFIX/bin once
    installed; karma-batch run from there finds the mini-apps beside it."""
    bin_dir = build_bin()
    assert set(os.listdir(bin_dir)) == programs()
    for name in programs():
        assert os.access(os.path.join(bin_dir, name), os.X_OK), name
    r = subprocess.run([os.path.join(bin_dir, "karma-validate-results"), "--version"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == \
        f"karma-validate-results {project_version()}", r.stderr
    out = tmp_path / "jobs"
    r = subprocess.run([os.path.join(bin_dir, "karma-batch"), "generate",
                        os.path.join(DATA, "campaigns", "example.yaml"), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    job = load_json(out / "campaign.json")["jobs"][0]
    assert job["executable"] == os.path.join(bin_dir, "karma-stream")


def test_installed_tools_work(tmp_path):
    """cmake --install into a scratch prefix: PREFIX/bin holds every mini-app
    and tool; the tools work from there."""
    build = built("KARMA_BUILD_DIR", "a configured build directory")
    prefix = tmp_path / "prefix"
    r = subprocess.run(["cmake", "--install", build, "--prefix", prefix],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert set(os.listdir(prefix / "bin")) == programs()
    for name in programs():
        assert os.access(prefix / "bin" / name, os.X_OK), name
    for name in TOOLS:
        r = subprocess.run([str(prefix / "bin" / name), "--version"], capture_output=True,
                           text=True)
        assert r.returncode == 0 and r.stdout.strip() == f"{name} {project_version()}"
    package = list(prefix.glob("lib/karma/python/lib/python3*/site-packages/karma_tools"))
    assert len(package) == 1 and (package[0] / "campaign" / "campaign.py").is_file(), package
    for schema in ("results", "campaign"):
        assert (package[0] / "schemas" / f"{schema}.schema.json").is_file()
    assert (prefix / "share" / "karma" / "spack" / "package.py").is_file()
    # The installed karma-batch finds the installed decks and the mini-apps
    # beside it, and writes job scripts that call them and the installed
    # karma-envcapture.
    out = tmp_path / "jobs"
    env = {k: v for k, v in os.environ.items() if k != "KARMA_INPUTS"}
    r = subprocess.run([str(prefix / "bin" / "karma-batch"), "generate",
                        os.path.join(DATA, "campaigns", "example.yaml"), "-o", str(out)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    script = (out / "jobs" / "stream-scaling.weak.n1x4.sbatch").read_text()
    assert f"{prefix}/bin/karma-envcapture --output" in script
    assert f" {prefix}/bin/karma-stream {prefix}/share/karma/inputs/stream/" in script
    r = subprocess.run([str(prefix / "bin" / "karma-compare"),
                        os.path.join(SAMPLES, "machine-a"), os.path.join(SAMPLES, "machine-b")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "# karma comparison" in r.stdout
    # The installed karma-score scores against the reference installed beside it, and
    # finds the release file installed there too: a bundle of that release is of record.
    shipped = prefix / "share" / "karma" / "campaigns" / "procurement" / "reference.json"
    released = load_json(os.path.join(ROOT, "campaigns", "procurement", "release.json"))["version"]
    bundle = min(glob.glob(os.path.join(ROOT, "results", "procurement",
                                        f"h200-{released}*.tar.xz")))
    r = subprocess.run([str(prefix / "bin" / "karma-score"), bundle],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and f"(`{shipped}`)" in r.stdout, r.stdout + r.stderr
    assert "UNOFFICIAL" not in r.stdout, r.stdout


# Bad input is exit 2 and one line naming it; a failure at run time (an
# output that cannot be written) is exit 3; either way nothing is written.
A = os.path.join(SAMPLES, "machine-a")
B = os.path.join(SAMPLES, "machine-b")
SMALL_DECK = os.path.join(ROOT, "inputs", "stream", "small.yaml")
SPACK = os.path.join(ROOT, "scripts", "spack", "spack.yaml")
CAMPAIGN = os.path.join(ROOT, "results", "campaigns", "h200", "contact-gpu.tar.xz")
BUNDLE = os.path.join(ROOT, "results", "procurement", "h200.tar.xz")

# (karma-WORD ..., its arguments with @M@ for a file that is not there and
# @OUT@ where it writes)
MISSING_INPUTS = [
    ("batch generate", ["generate", "@M@.yaml", "-o", "@OUT@/o"]),
    ("batch status", ["status", "@M@"]),
    ("batch reference-result", ["reference-result", "babelstream", "--input", "@M@.csv",
                                "--app", "stream", "--deck", SMALL_DECK, "--output",
                                "@OUT@/r.json"]),
    ("compare SET", [A, "@M@", "--json", "@OUT@/c.json"]),
    ("compare --weights", [A, B, "--weights", "@M@.txt", "--json", "@OUT@/c.json"]),
    ("compare --campaign", ["--campaign", "@M@", "--json", "@OUT@/c.json"]),
    ("compare --implementations", ["--implementations", "karma:raw", "@M@", "--json",
                                   "@OUT@/c.json"]),
    ("report RESULTS", ["@M@", "-o", "@OUT@/r.md"]),
    ("report --comparison", [A, "-o", "@OUT@/r.md", "--comparison", "@M@.json"]),
    ("report --intro", [A, "-o", "@OUT@/r.md", "--intro", "@M@.md"]),
    ("report --compare-from", [A, "-o", "@OUT@/r.md", "--compare-from", "@M@.yaml"]),
    ("power-check --nvidia-smi", [os.path.join(A, "stream-1d-2p16-r1.json"), "--nvidia-smi",
                                  "@M@.csv", "--markdown", "@OUT@/p.md"]),
    ("validate-results", ["@M@.json"]),
    ("spack-check", ["@M@.yaml"]),
    ("spack-check --recipe", ["--recipe", "@M@.py", SPACK]),
    ("archive list", ["list", "@M@.tar.xz"]),
    ("archive extract", ["extract", "@M@.tar.xz", "@OUT@/x"]),
    ("archive write", ["write", "@M@", "-o", "@OUT@/x.tar.xz"]),
    ("score SET", ["@M@", "--json", "@OUT@/s.json"]),
    ("score --reference", [A, "--reference", "@M@.json", "--json", "@OUT@/s.json"]),
    ("score --weights", [A, "--weights", "@M@.txt", "--json", "@OUT@/s.json"]),
    ("score reference", ["reference", "@M@", "-o", "@OUT@/ref.json"]),
    ("bundle check", ["check", "@M@.tar.xz"]),
    ("docs --root", ["--root", "@M@", "--only", "results"]),
]


@pytest.mark.parametrize("case,args", MISSING_INPUTS, ids=[c for c, _ in MISSING_INPUTS])
def test_a_missing_input_is_exit_2_and_one_line(tmp_path, case, args):
    (tmp_path / "out").mkdir()
    args = [a.replace("@M@", str(tmp_path / "missing")).replace("@OUT@", str(tmp_path / "out"))
            for a in args]
    r = tool("karma-" + case.split()[0], *args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert len(r.stderr.splitlines()) == 1 and str(tmp_path / "missing") in r.stderr, r.stderr
    assert not os.listdir(tmp_path / "out")


# (tool, arguments whose last output, under @GONE@, cannot be written)
TWO_OUTPUTS = [
    ("karma-compare", [A, B, "--markdown", "@OUT@/c.md", "--csv", "@OUT@/c.csv",
                       "--json", "@GONE@/c.json"]),
    ("karma-compare", ["--campaign", CAMPAIGN, "--markdown", "@OUT@/c.md",
                       "--json", "@GONE@/c.json"]),
    ("karma-score", [BUNDLE, "--json", "@OUT@/s.json", "--page", "@GONE@/p.md"]),
    ("karma-report", [A, "--plots-dir", "@OUT@/plots", "-o", "@GONE@/r.md"]),
]


@pytest.mark.parametrize("name,args", TWO_OUTPUTS,
                         ids=[f"{n} {a[0] if a[0].startswith('-') else ''}".strip()
                              for n, a in TWO_OUTPUTS])
def test_outputs_are_written_all_or_none(tmp_path, name, args):
    """The user asked for several files and one cannot be written (its
    folder is not there): exit 2, as in the mini-apps, and none of the
    others is there (an older one is left as it was)."""
    out = tmp_path / "out"
    (out / "plots").mkdir(parents=True)
    (out / "plots" / "old.svg").write_text("an older report's plot")
    args = [a.replace("@OUT@", str(out)).replace("@GONE@", str(tmp_path / "gone"))
            for a in args]
    r = tool(name, *args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert f"error: cannot write {tmp_path / 'gone'}" in r.stderr, r.stderr
    assert sorted(os.listdir(out)) == ["plots"], os.listdir(out)
    assert os.listdir(out / "plots") == ["old.svg"]


def test_write_all_moves_folders_between_files(tmp_path, monkeypatch):
    """karma_tools.write_all (karma_tools.core's): every file through a
    temporary one; the folders (a report's plots) moved into place before
    the files; a failure on any file leaves nothing of the others, not even
    a temporary."""
    import karma_tools
    import karma_tools.core

    staged = tmp_path / ".plots.tmp"
    staged.mkdir()
    (staged / "new.svg").write_text("new")
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "old.svg").write_text("old")
    karma_tools.write_all([(str(tmp_path / "r.md"), "report"), (str(tmp_path / "r.png"), b"\x89")],
                          [(str(staged), str(tmp_path / "plots"))])
    assert sorted(os.listdir(tmp_path)) == ["plots", "r.md", "r.png"]
    assert os.listdir(tmp_path / "plots") == ["new.svg"]
    assert (tmp_path / "r.png").read_bytes() == b"\x89"

    def full(path, mode="r", *rest):  # the second file meets a full disk
        if "b.md" in str(path):
            raise OSError(28, "No space left on device")
        return open(path, mode, *rest)

    monkeypatch.setattr(karma_tools.core, "open", full, raising=False)
    with pytest.raises(karma_tools.ToolError) as e:
        karma_tools.write_all([(str(tmp_path / "a.md"), "a"), (str(tmp_path / "b.md"), "b"),
                               (str(tmp_path / "r.md"), "changed")])
    assert e.value.code == 3 and str(e.value) == \
        f"cannot write {tmp_path / 'b.md'}: No space left on device"
    assert sorted(os.listdir(tmp_path)) == ["plots", "r.md", "r.png"]
    assert (tmp_path / "r.md").read_text() == "report"
