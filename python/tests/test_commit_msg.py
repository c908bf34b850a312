"""scripts/hooks/commit-msg: a commit subject over 72 characters is refused
with one line saying why, one of 72 or fewer passes; comments and blank lines
before the subject are not the subject; git runs it through core.hooksPath."""

import os
import shutil
import subprocess

import pytest

from conftest import ROOT

HOOK = os.path.join(ROOT, "scripts", "hooks", "commit-msg")


def run_hook(tmp_path, message):
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return subprocess.run([HOOK, str(path)], capture_output=True, text=True, timeout=30)


def test_a_subject_over_72_characters_is_refused_in_one_line(tmp_path):
    r = run_hook(tmp_path, "x" * 73 + "\n\nThe body may be as long as it likes.\n")
    assert r.returncode != 0 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert "73 characters" in r.stderr and "72" in r.stderr, r.stderr


@pytest.mark.parametrize("message", [
    "hook: a good subject\n\nWhy, in the body.\n",
    "y" * 72 + "\n",
    "# a comment git strips, longer than the subject may be: " + "z" * 40 + "\n\nshort\n",
    "é" * 72 + "\n",  # characters, not bytes
    "",  # empty: git refuses it itself
])
def test_a_subject_of_72_characters_or_fewer_passes(tmp_path, message):
    r = run_hook(tmp_path, message)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stderr


def test_a_comment_is_not_the_subject(tmp_path):
    r = run_hook(tmp_path, "# Please enter the commit message\n\n" + "w" * 80 + "\n")
    assert r.returncode == 1 and "80 characters" in r.stderr, r.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_git_runs_it_through_core_hooks_path(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}

    def git(*args):
        return subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@example.org",
                               "-c", "commit.gpgsign=false", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)

    assert git("init", "-q").returncode == 0
    assert git("config", "core.hooksPath", os.path.dirname(HOOK)).returncode == 0
    long = git("commit", "-q", "--allow-empty", "-m", "v" * 73)
    assert long.returncode != 0 and "more than 72" in long.stderr, long.stderr
    good = git("commit", "-q", "--allow-empty", "-m", "a subject that fits")
    assert good.returncode == 0, good.stderr
    assert git("log", "--format=%s").stdout == "a subject that fits\n"
