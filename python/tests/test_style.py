"""scripts/check-style.sh fails where it should: on a small tree with the
project's .clang-format, .flake8 and .shellcheckrc, one misformatted C++ file,
one shell script with a shellcheck finding, one Python file with a flake8
finding, one function over 100 lines in miniapps/ or common/, or one Python
file of python/src over 700 lines or with a function over 100 makes it exit 1
naming that file; the same tree clean passes. Files
are found by extension and by shebang, in a git checkout (tracked files) and
in a tree without git (a tarball: build directories left out). A missing tool
fails, naming its Debian package."""

import os
import shutil
import subprocess

import pytest

from conftest import ROOT

CHECK = os.path.join(ROOT, "scripts", "check-style.sh")
CONFIGS = (".clang-format", ".flake8", ".shellcheckrc")
TOOLS = {"clang-format": "format", "shellcheck": "shell", "flake8": "python"}

CLEAN = {
    "src/kernel.cpp": '#include "kernel.hpp"\n\nint twice(int x) { return 2 * x; }\n',
    "src/kernel.hpp": "#pragma once\n\nint twice(int x);\n",
    "src/device.cu": "__global__ void zero(double* x) { x[threadIdx.x] = 0.0; }\n",
    "tools/run.sh": '#!/bin/sh\nset -e\necho "$1"\n',
    "tools/launch": '#!/usr/bin/env bash\nset -euo pipefail\nprintf \'%s\\n\' "$@"\n',
    "tools/report.py": "import sys\n\n\ndef main():\n    print(sys.argv)\n",
    "tools/karma-thing": "#!/usr/bin/env python3\nimport sys\n\nprint(sys.argv)\n",
    # Longer than flake8's default 79 columns, within the project's 100.
    "tools/wide.py": "WIDE = " + repr("x" * 85) + "\n",
    "notes.txt": "neither C++, shell nor Python: not checked $1\n",
}

BROKEN = [
    # (file, text, check, what the output names besides the file)
    ("src/kernel.cpp", "int twice(int x){return 2*x;}\n", "format", "clang-format-violations"),
    ("src/kernel.hpp", "#pragma once\nint   twice(int x);\n", "format", "clang-format-violations"),
    ("src/device.cu", "__global__ void zero(double *x){x[threadIdx.x]=0.0;}\n", "format",
     "clang-format-violations"),
    ("tools/run.sh", "#!/bin/sh\necho $1\n", "shell", "SC2086"),
    ("tools/launch", "#!/usr/bin/env bash\ncd $(dirname $0)\n", "shell", "SC2046"),
    ("tools/report.py", "import os\nimport sys\n\nprint(sys.argv)\n", "python", "F401"),
    ("tools/karma-thing", "#!/usr/bin/env python3\nl = 1\n", "python", "E741"),
    ("tools/wide.py", "WIDE = " + repr("x" * 100) + "\n", "python", "E501"),
]


def make_tree(path, files=CLEAN):
    for name in CONFIGS:
        shutil.copy(os.path.join(ROOT, name), path / name)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return path


def check(tree, *args, env=None):
    r = subprocess.run(["bash", CHECK, "--root", str(tree), *args], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120, env=env,
                       stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout


def git(tree, *args):
    subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True)


def test_a_clean_tree_passes(tmp_path):
    code, out = check(make_tree(tmp_path))
    assert code == 0, out
    assert "format: 3 C++ files clean" in out
    assert "shell: 2 shell scripts clean" in out
    assert "python: 3 Python files clean" in out
    assert "passed: format shell python size" in out


@pytest.mark.parametrize("name, text, which, finding", BROKEN, ids=[b[0] for b in BROKEN])
def test_one_finding_fails_naming_the_file(tmp_path, name, text, which, finding):
    tree = make_tree(tmp_path, dict(CLEAN, **{name: text}))
    code, out = check(tree)
    assert code == 1, out
    assert name in out and finding in out, out
    assert out.splitlines()[-1] == f"check-style: FAILED: {which}", out  # the others passed


def test_files_named_on_the_command_line_only(tmp_path):
    tree = make_tree(tmp_path, dict(CLEAN, **{"tools/run.sh": "#!/bin/sh\necho $1\n"}))
    code, out = check(tree, "--only", "shell", "tools/launch")
    assert code == 0 and "1 shell scripts clean" in out, out
    code, out = check(tree, "--only", "shell", "tools/launch", "tools/run.sh")
    assert code == 1 and "tools/run.sh" in out, out


def test_without_git_build_directories_are_left_out(tmp_path):
    bad = "int twice(int x){return 2*x;}\n"
    tree = make_tree(tmp_path, dict(CLEAN, **{"build/default/gen.cpp": bad,
                                              "obj/CMakeCache.txt": "",
                                              "obj/gen.cpp": bad,
                                              "src/__pycache__/x.py": "import os\n"}))
    code, out = check(tree)
    assert code == 0, out
    assert "format: 3 C++ files clean" in out


def test_in_a_git_checkout_the_tracked_files(tmp_path):
    tree = make_tree(tmp_path)
    git(tree, "init", "-q")
    git(tree, "add", ".")
    (tree / "scratch.py").write_text("import os\n")  # not tracked: not checked
    code, out = check(tree)
    assert code == 0, out
    git(tree, "add", "scratch.py")
    code, out = check(tree)
    assert code == 1 and "scratch.py:1:1: F401" in out, out
    (tree / "scratch.py").unlink()  # deleted, not yet from the index
    code, out = check(tree)
    assert code == 0, out


def test_a_missing_tool_fails_naming_its_package(tmp_path):
    (tmp_path / "tree").mkdir()
    tree = make_tree(tmp_path / "tree")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            hidden = name.startswith(tuple(TOOLS))
            if not hidden and not os.path.lexists(bin_dir / name):
                (bin_dir / name).symlink_to(os.path.join(d, name))
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "LC_ALL": "C"}
    code, out = check(tree, env=env)
    assert code == 1, out
    for package in TOOLS:
        assert f"{package} is missing" in out and f"apt-get install {package}" in out, out
    assert "FAILED: format shell python" in out


def function_of(name, lines, indent=""):
    """C++ text of a function `name` of `lines` lines, signature to brace."""
    body = [f"{indent}  x += {i};" for i in range(lines - 3)]
    return "\n".join([f"{indent}int {name}(int x) {{", *body, f"{indent}  return x;",
                      f"{indent}}}"]) + "\n"


# Braces that are not a function's body, around the functions measured: a
# class, a constructor's member initialisers, a lambda, an initialiser list,
# a template head, a macro's body, a branch of #if that is not read.
TRICKY = """namespace karma {{
struct Holder {{
  Holder(int a) : a_{{a}}, b_(a) {{}}
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {{ a_ + i; }}
  int a_{{0}}, b_;
{member}}};
const int table[] = {{1, 2, 3}};
template <class T, class = std::enable_if_t<(sizeof(T) > 1)>>
std::function<void()> launcher(const T& t) {{
  return [=] {{
    if (t) {{
    }}
  }};
}}
#if KARMA_HAVE_CUDA
{twice}#else
{twice}#endif
TEST(Suite, Name) {{ EXPECT_EQ(1, 1); }}
{free}}}  // namespace karma
"""


@pytest.mark.parametrize("where", ["miniapps/demo/main.cpp", "common/include/karma/demo.hpp"])
def test_size_a_function_over_100_lines_fails(tmp_path, where):
    tree = make_tree(tmp_path)
    path = tree / where
    path.parent.mkdir(parents=True)
    fits = TRICKY.format(member=function_of("member", 100, "  "), twice=function_of("twice", 100),
                         free=function_of("free_one", 100))
    path.write_text(fits)
    code, out = check(tree, "--only", "size")
    assert code == 0 and "size: 1 C++ files clean" in out, out
    for name, member, free in (("member", 101, 100), ("free_one", 100, 101)):
        path.write_text(TRICKY.format(member=function_of("member", member, "  "),
                                      twice=function_of("twice", 100),
                                      free=function_of("free_one", free)))
        code, out = check(tree, "--only", "size")
        line = 1 + path.read_text().split("\n").index(
            next(s for s in path.read_text().split("\n") if f" {name}(int x)" in s))
        assert code == 1, out
        assert f"{where}:{line}: function {name} is 101 lines (at most 100)" in out, out
        assert out.count("function ") == 1, out  # no other finding
    # #if's later branches are not read: a longer definition there counts not.
    path.write_text(fits.replace("#else\n" + function_of("twice", 100),
                                 "#else\n" + function_of("twice", 200)))
    assert check(tree, "--only", "size")[0] == 0


def test_size_a_cpp_file_over_700_lines_fails(tmp_path):
    tree = make_tree(tmp_path)
    path = tree / "miniapps" / "demo" / "long.hpp"
    path.parent.mkdir(parents=True)
    path.write_text("// a line\n" * 700)
    assert check(tree, "--only", "size")[0] == 0
    path.write_text("// a line\n" * 701)
    code, out = check(tree, "--only", "size")
    assert code == 1 and "miniapps/demo/long.hpp: 701 lines (at most 700)" in out, out


def test_size_only_in_miniapps_and_common(tmp_path):
    tree = make_tree(tmp_path, dict(CLEAN, **{"src/long.cpp": function_of("long_one", 200)}))
    code, out = check(tree)
    assert code == 0 and "size: no C++ files in miniapps/ or common/" in out, out


def python_function(name, lines, indent=""):
    """Python text of a function `name` of `lines` lines, def to its last."""
    body = [f"{indent}    x += {i}" for i in range(lines - 2)]
    return "\n".join([f"{indent}def {name}(x):", *body, f"{indent}    return x"]) + "\n"


def test_size_python_functions_over_100_lines_fail(tmp_path):
    tree = make_tree(tmp_path)
    path = tree / "python" / "src" / "pkg" / "mod.py"
    path.parent.mkdir(parents=True)
    fits = ("class Thing:\n" + python_function("method", 100, "    ") + "\n\n"
            + python_function("free", 100))
    path.write_text(fits)
    code, out = check(tree, "--only", "size")
    assert code == 0 and "size: 1 Python files clean" in out, out
    for name, method, free in (("method", 101, 100), ("free", 100, 101)):
        path.write_text("class Thing:\n" + python_function("method", method, "    ") + "\n\n"
                        + python_function("free", free))
        code, out = check(tree, "--only", "size")
        line = 1 + path.read_text().split("\n").index(
            next(s for s in path.read_text().split("\n") if f"def {name}(x)" in s))
        assert code == 1, out
        assert f"python/src/pkg/mod.py:{line}: function {name} is 101 lines (at most 100)" \
            in out, out
        assert out.count("function ") == 1, out
    # Python elsewhere is not measured; nor is C++'s limit Python's.
    (tree / "tools" / "long.py").write_text(python_function("long_one", 300))
    path.write_text(fits)
    assert check(tree, "--only", "size")[0] == 0


def test_size_python_files_over_700_lines_fail(tmp_path):
    tree = make_tree(tmp_path)
    path = tree / "python" / "src" / "pkg" / "big.py"
    path.parent.mkdir(parents=True)
    functions = [python_function(f"f{i}", 5) for i in range(80)]
    text = "\n\n".join(functions)
    while text.count("\n") < 700:
        text += "# more\n"
    path.write_text(text)
    code, out = check(tree, "--only", "size")
    assert code == 0, out
    path.write_text(text + "# one too many\n")
    code, out = check(tree, "--only", "size")
    assert code == 1 and "python/src/pkg/big.py: 701 lines (at most 700)" in out, out
    (tree / "miniapps").mkdir()
    (tree / "miniapps" / "main.cpp").write_text(function_of("fits", 100))
    code, out = check(tree, "--only", "size")
    assert code == 1 and "size: FAILED" in out, out
    path.write_text(text)
    code, out = check(tree, "--only", "size")
    assert code == 0 and "size: 1 C++ files and 1 Python files clean" in out, out


def test_bad_usage_is_exit_2(tmp_path):
    assert check(tmp_path, "--only", "ruff")[0] == 2
    assert check(tmp_path, "--frobnicate")[0] == 2


def test_bootstrap_installs_the_tools():
    with open(os.path.join(ROOT, "scripts", "bootstrap.sh")) as f:
        text = f.read()
    packages = text.split("REQUIRED_PACKAGES=(\n", 1)[1].split("\n)\n", 1)[0]
    names = {line.split("#")[0].strip() for line in packages.splitlines()}
    assert set(TOOLS) <= names, names
