"""The documentation: karma-docs keeps docs/results-format.md and the mini-app
READMEs' deck tables in step with the results schema and the mini-apps'
--help=json, and the schema's `app` with the checkout's mini-apps; the
README stays a landing page; every relative link of the top-level pages
resolves."""

import glob
import json
import os
import re
import shutil

from conftest import ROOT, SRC, build_bin, entry_points, tool

from karma_tools import APPS
from karma_tools.core import miniapp_folders, miniapps_with_decks
from karma_tools.docgen import APPS_DATA, SCHEMA_IN_REPO

PAGES = ["README.md", "CONTRIBUTING.md"] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def test_the_committed_docs_are_up_to_date():
    r = tool("karma-docs", "--check", "--root", ROOT, "--bin-dir", build_bin())
    assert r.returncode == 0, r.stderr


def test_the_results_format_is_up_to_date_without_mini_apps():
    r = tool("karma-docs", "--check", "--only", "results", "--root", ROOT)
    assert r.returncode == 0, r.stderr


def _copy_of_the_docs(tmp_path):
    """The parts of the checkout karma-docs reads and writes, in tmp_path."""
    root = tmp_path / "karma"
    shutil.copytree(os.path.join(ROOT, "docs"), root / "docs")
    for app in APPS:
        (root / "miniapps" / app).mkdir(parents=True)
        shutil.copy(os.path.join(ROOT, "miniapps", app, "README.md"),
                    root / "miniapps" / app / "README.md")
    (root / "python").mkdir()
    shutil.copy(os.path.join(ROOT, "python", "pyproject.toml"), root / "python")
    return root


def test_a_stale_deck_table_fails_the_check_and_is_rewritten(tmp_path):
    bin_dir = build_bin()
    root = _copy_of_the_docs(tmp_path)
    # In step with this build first, whatever the committed tables say (a
    # build folder names its bin/).
    assert tool("karma-docs", "--root", root, "--bin-dir", os.path.dirname(bin_dir)).returncode == 0
    assert tool("karma-docs", "--check", "--root", root, "--bin-dir", bin_dir).returncode == 0
    readme = root / "miniapps" / "stream" / "README.md"
    good = readme.read_text()
    stale = re.sub(r"^(\| `run\.warmup` \| [^|]+\| )`2`", r"\1`3`", good, count=1, flags=re.M)
    assert stale != good, "the stream README's deck table names run.warmup's default"
    readme.write_text(stale)
    line = stale.split("\n").index(next(x for x in stale.split("\n") if "`run.warmup`" in x)) + 1
    r = tool("karma-docs", "--check", "--root", root, "--bin-dir", bin_dir)
    assert r.returncode == 1, r.stderr
    assert f"stale: miniapps/stream/README.md:{line}: expected" in r.stderr, r.stderr
    assert "hexgrad" not in r.stderr and readme.read_text() == stale  # --check writes nothing
    r = tool("karma-docs", "--root", root, "--bin-dir", bin_dir)
    assert r.returncode == 0 and "wrote miniapps/stream/README.md" in r.stdout, r.stderr
    assert readme.read_text() == good
    assert tool("karma-docs", "--check", "--root", root, "--bin-dir", bin_dir).returncode == 0


def test_a_stale_deck_schema_of_the_tools_fails_the_check_and_is_rewritten(tmp_path):
    """The tools' copy of each mini-app's --help=json (package data, read
    where no mini-app is at hand) is a generated file like the READMEs'
    tables: stale, --check names it; karma-docs writes it back."""
    root = _copy_of_the_docs(tmp_path)
    data = root / APPS_DATA
    data.parent.mkdir(parents=True, exist_ok=True)
    shipped = open(os.path.join(ROOT, APPS_DATA), encoding="utf-8").read()
    data.write_text(shipped.replace('"minimum": 1,', '"minimum": 2,', 1))
    assert data.read_text() != shipped
    r = tool("karma-docs", "--check", "--root", root, "--only", "decks", "--bin-dir", build_bin())
    assert r.returncode == 1, r.stderr
    assert f"stale: {APPS_DATA}:" in r.stderr and "mgs" not in r.stderr, r.stderr
    r = tool("karma-docs", "--root", root, "--only", "decks", "--bin-dir", build_bin())
    assert r.returncode == 0 and f"wrote {APPS_DATA}" in r.stdout, r.stderr
    assert json.loads(data.read_text()) == json.loads(shipped)


def test_a_stale_or_missing_results_format_fails_the_check(tmp_path):
    root = _copy_of_the_docs(tmp_path)
    page = root / "docs" / "results-format.md"
    text = page.read_text()
    assert "| `mpi.nodes` | integer |" in text
    page.write_text(text.replace("| `mpi.nodes` | integer |", "| `mpi.nodes` | number |"))
    r = tool("karma-docs", "--check", "--only", "results", "--root", root)
    assert r.returncode == 1 and "stale: docs/results-format.md:" in r.stderr, r.stderr
    page.unlink()
    r = tool("karma-docs", "--check", "--only", "results", "--root", root)
    assert r.returncode == 1 and "stale: docs/results-format.md: missing" in r.stderr, r.stderr
    r = tool("karma-docs", "--only", "results", "--root", root)
    assert r.returncode == 0 and page.read_text() == \
        open(os.path.join(ROOT, "docs", "results-format.md")).read()


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    root = _copy_of_the_docs(tmp_path)
    readme = root / "miniapps" / "mgs" / "README.md"
    readme.write_text(readme.read_text().replace("<!-- karma-docs: deck table end -->", ""))
    not_an_app = tmp_path / "bin" / "karma-stream"
    not_an_app.parent.mkdir()
    not_an_app.write_text("#!/bin/sh\necho 'not json'\n")
    not_an_app.chmod(0o755)
    for args, message in [
            (["--frobnicate"], "unrecognized arguments: --frobnicate"),
            (["--root", tmp_path], "not inside a karma checkout"),
            (["--root", root, "--bin-dir", tmp_path / "none"], "not a folder"),
            (["--root", root, "--only", "decks", "--bin-dir", root],
             "no executable karma-stream there nor in its bin/"),
            (["--root", root, "--only", "decks", "--bin-dir", not_an_app.parent],
             "--help=json: not JSON")]:
        r = tool("karma-docs", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.splitlines()) == 1 and message in r.stderr, (args, r.stderr)
    r = tool("karma-docs", "--root", root, "--only", "decks", "--bin-dir", build_bin())
    assert r.returncode == 2 and "mgs/README.md: needs one line" in r.stderr, r.stderr
    assert "wrote" not in r.stdout  # nothing written before the error


def _checkout_with(tmp_path, new_app):
    """The parts of the checkout karma-docs reads for the results format,
    in tmp_path, with a mini-app `new_app` added: its folder and its decks."""
    root = tmp_path / "karma"
    shutil.copytree(os.path.join(ROOT, "docs"), root / "docs")
    (root / SCHEMA_IN_REPO).parent.mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, SCHEMA_IN_REPO), root / SCHEMA_IN_REPO)
    shutil.copy(os.path.join(ROOT, "python", "pyproject.toml"), root / "python")
    for app in miniapp_folders(ROOT) + [new_app]:
        (root / "miniapps" / app).mkdir(parents=True)
        (root / "miniapps" / app / "CMakeLists.txt").write_text(f"karma_add_miniapp({app})\n")
    for app in miniapps_with_decks(ROOT) + [new_app]:
        (root / "inputs" / app).mkdir(parents=True)
        (root / "inputs" / app / "small.yaml").write_text(f"{app}:\n")
    (root / "miniapps" / "common").mkdir()  # shared code, no CMakeLists.txt: not a mini-app
    return root


def test_karma_docs_names_a_new_mini_app_in_the_results_schema(tmp_path):
    root = _checkout_with(tmp_path, "aardvark")
    r = tool("karma-docs", "--check", "--only", "results", "--root", root)
    assert r.returncode == 1, r.stderr
    assert f"stale: {SCHEMA_IN_REPO}:" in r.stderr and "stale: docs/results-format.md:" in r.stderr
    r = tool("karma-docs", "--only", "results", "--root", root)
    assert r.returncode == 0, r.stderr
    app = json.loads((root / SCHEMA_IN_REPO).read_text())["properties"]["app"]
    # The suite's order kept, the new one after it; the description names it.
    assert app["x-karma-apps"] == list(APPS) + ["aardvark"]
    assert app["description"].startswith(
        "the mini-app: `stream`, `hexgrad`, `matvec`, `mgs`, `contact`, `microbench` or "
        "`aardvark` (")
    assert "`aardvark`" in (root / "docs" / "results-format.md").read_text()
    assert tool("karma-docs", "--check", "--only", "results", "--root", root).returncode == 0
    # Its folder gone again: the schema is the suite's as committed.
    shutil.rmtree(root / "miniapps" / "aardvark")
    assert tool("karma-docs", "--only", "results", "--root", root).returncode == 0
    with open(os.path.join(SRC, "karma_tools", "schemas", "results.schema.json")) as f:
        assert (root / SCHEMA_IN_REPO).read_text() == f.read()


def test_a_schema_without_app_names_is_bad_input(tmp_path):
    root = _checkout_with(tmp_path, "aardvark")
    schema = json.loads((root / SCHEMA_IN_REPO).read_text())
    schema["properties"]["app"]["description"] = "which program"
    (root / SCHEMA_IN_REPO).write_text(json.dumps(schema, indent=2) + "\n")
    r = tool("karma-docs", "--check", "--only", "results", "--root", root)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "properties.app: needs x-karma-apps and a description" in r.stderr, r.stderr


def test_the_readme_is_a_landing_page():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert len(lines) - 1 <= 200, f"README.md has {len(lines) - 1} lines; the limit is 200"


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def anchors(path):
    """The anchors GitHub makes of a Markdown file's headings."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"^```.*?^```", "", f.read(), flags=re.M | re.S)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, re.M)}


def broken_links(page, root=ROOT):
    """'page:line: target' for each relative link of the Markdown page whose
    file or folder does not exist, or whose #anchor names no heading of a
    Markdown file (code blocks and spans left out)."""
    out, fenced = [], False
    with open(os.path.join(root, page), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if fenced:
                continue
            for target in _LINK.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"[a-z][a-z0-9+.-]*:", target):
                    continue  # another site
                path, _, anchor = target.partition("#")
                where = os.path.join(root, os.path.normpath(
                    os.path.join(os.path.dirname(page), path or os.path.basename(page))))
                if not os.path.exists(where) or anchor and where.endswith(".md") and \
                        anchor not in anchors(where):
                    out.append(f"{page}:{number}: {target}")
    return out


def test_every_relative_link_resolves():
    assert "docs/building.md" in PAGES and "docs/results-format.md" in PAGES
    broken = [b for page in PAGES for b in broken_links(page)]
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_link_check_finds_a_broken_link(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "there.md").write_text("## A `b`, c!\n")
    (tmp_path / "page.md").write_text(
        "# Top\n[ok](docs/there.md#a-b-c) [web](https://example.org/x) [here](#top)\n"
        "`[code](nowhere.md)`\n```\n[block](nowhere.md)\n```\n"
        "[gone](docs/missing.md) and [up](../elsewhere/x.md)\n"
        "[no such heading](docs/there.md#d) [nor here](#bottom)\n")
    assert broken_links("page.md", str(tmp_path)) == [
        "page.md:7: docs/missing.md", "page.md:7: ../elsewhere/x.md",
        "page.md:8: docs/there.md#d", "page.md:8: #bottom"]


def archive_paths(page, root=ROOT):
    """'page:line: path' for each path into a results archive that the page
    quotes (`results/x.tar.xz/y.json`; relative to the page's folder under
    results/) and that is not there."""
    from karma_tools.results import archive

    out = []
    with open(os.path.join(root, page), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            for path in re.findall(r"[\w./-]+\.tar\.xz/[\w./-]*\w", line):
                here = os.path.join(root, os.path.dirname(page)) \
                    if page.startswith("results/") and not path.startswith("results/") else root
                if not archive.exists(os.path.join(here, path)):
                    out.append(f"{page}:{number}: {path}")
    return out


def test_every_path_into_an_archive_exists():
    """A path inside an archive is no link, so the link check cannot see it:
    docs/campaigns.md and results/README.md once showed a file that is not
    in team-dots.tar.xz."""
    missing = [m for page in PAGES + ["results/README.md"] for m in archive_paths(page)]
    assert not missing, "paths into archives that are not there:\n" + "\n".join(missing)


def test_the_tools_are_all_listed():
    """docs/building.md names every tool the package installs."""
    text = open(os.path.join(ROOT, "docs", "building.md"), encoding="utf-8").read()
    listed = text[text.index("### The tools' environment"):]
    assert not [t for t in entry_points() if f"`{t}`" not in listed]
