"""The commands the documentation shows, run as they stand: every ```sh
block of the top-level pages (docs/*.md, README.md, CONTRIBUTING.md) that
follows the line `<!-- runnable on CPU -->` (a comment: GitHub shows the
block alone) runs under `bash -e` in a folder of its own that holds the
checkout's inputs/, campaigns/ and results/, with the tools (KARMA_TOOLS_BIN)
and the build's bin/ (KARMA_BUILD_DIR) first in PATH. A block that
runs a mini-app (karma-<app>, karma-batch submit) is skipped without a build.
Mark only blocks that take seconds on a CPU: small decks, committed results."""

import os
import re
import subprocess

import pytest

from conftest import ROOT, TOOLS_BIN, built

APPS = ("stream", "hexgrad", "matvec", "mgs", "contact", "microbench")
MARK = "<!-- runnable on CPU -->"
PAGES = ["README.md", "CONTRIBUTING.md"] + sorted(
    os.path.join("docs", p) for p in os.listdir(os.path.join(ROOT, "docs")) if p.endswith(".md"))
# What a block may read of the checkout, linked into its folder.
SHARED = ("inputs", "campaigns", "results")


def marked_blocks(text):
    """[(line of the block's fence, its text)] of the ```sh blocks right
    after a MARK line; ValueError for a mark before anything else."""
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        if line.strip() != MARK:
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() != "```sh":
            raise ValueError(f"line {i + 1}: {MARK} is not right before a ```sh block")
        end = lines.index("```", i + 2)
        found.append((i + 2, "\n".join(lines[i + 2:end]) + "\n"))
    return found


BLOCKS = [(page, line, block) for page in PAGES
          for line, block in marked_blocks(open(os.path.join(ROOT, page)).read())]


def needs_mini_apps(block):
    return bool(re.search(r"\bkarma-(%s)\b|karma-batch submit" % "|".join(APPS), block))


def test_the_docs_mark_runnable_blocks():
    """The campaigns, running and score pages each show one; a mark that is
    not right before a ```sh block is refused."""
    pages = {page for page, _, _ in BLOCKS}
    assert pages >= {"docs/campaigns.md", "docs/running.md", "docs/score.md"}
    assert marked_blocks(f"{MARK}\n```sh\nls\n```\n") == [(2, "ls\n")]
    with pytest.raises(ValueError, match="line 1: "):
        marked_blocks(f"{MARK}\n\n```sh\nls\n```\n")


@pytest.mark.parametrize("page,line,block", BLOCKS, ids=[f"{p}:{n}" for p, n, _ in BLOCKS])
def test_a_runnable_block_runs(tmp_path, page, line, block):
    path = [TOOLS_BIN]
    if needs_mini_apps(block):
        build = built("KARMA_BUILD_DIR", "the mini-apps of a build")
        path.append(os.path.join(build, "bin"))  # the mini-apps and the tools of the build
    for name in SHARED:
        os.symlink(os.path.join(ROOT, name), tmp_path / name)
    env = dict(os.environ, PATH=os.pathsep.join(path + [os.environ["PATH"]]),
               KARMA_INPUTS=os.path.join(ROOT, "inputs"))
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"{page}:{line}: exit {r.returncode}\n{r.stdout[-3000:]}\n" \
        f"{r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr, r.stderr
