"""The suite's one list of mini-apps: the folders of miniapps/ (CMake builds
each, miniapps/CMakeLists.txt), those of them with decks in inputs/ (the
mini-apps that write karma results: karma_tools.APPS, the results schema's
`app`, which karma-docs writes from them), and every list the tools and
the build keep of them agree; adding a mini-app is adding its folder and
its decks."""

import glob
import json
import os
import re
import shutil

from conftest import ROOT, SRC, build_bin, tool

from karma_tools import APPS
from karma_tools.lib import miniapps

SCHEMA_IN_REPO = os.path.join("python", "src", "karma_tools", "schemas", "results.schema.json")


def app_of_main(path):
    """The name a mini-app's main.cpp gives its karma::App, or None."""
    with open(path, encoding="utf-8") as f:
        m = re.search(r"\bApp app\{\s*\"([a-z0-9_]+)\"", f.read())
    return m.group(1) if m else None


def test_the_apps_that_write_results_are_the_folders_with_decks():
    with_decks = miniapps.with_decks(ROOT)
    assert "stream" in with_decks and "microbench" not in with_decks
    assert sorted(APPS) == with_decks
    # Each is a karma::App of its folder's name; every App has its decks.
    apps = {os.path.basename(os.path.dirname(p)): app_of_main(p)
            for p in glob.glob(os.path.join(ROOT, "miniapps", "*", "main.cpp"))}
    assert {folder for folder, name in apps.items() if name} == set(with_decks)
    assert all(name in (None, folder) for folder, name in apps.items()), apps
    assert set(miniapps.built(ROOT)) == set(apps)  # every folder with a main.cpp is built


def test_the_schema_s_app_names_are_the_suite_s():
    """What karma-docs writes is what the checkout holds (tools.docs checks
    the file as a whole)."""
    path = os.path.join(ROOT, SCHEMA_IN_REPO)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert miniapps.with_app_names(text, miniapps.with_decks(ROOT), path) == text


def test_the_build_makes_every_mini_app():
    """miniapps/CMakeLists.txt adds every folder: each has its karma-<app>."""
    bin_dir = build_bin()
    for app in miniapps.built(ROOT):
        assert os.path.isfile(os.path.join(bin_dir, f"karma-{app}")), app


def _checkout_with(tmp_path, new_app):
    """The parts of the checkout karma-docs reads for the results format,
    in tmp_path, with a mini-app `new_app` added: its folder and its decks."""
    root = tmp_path / "karma"
    shutil.copytree(os.path.join(ROOT, "docs"), root / "docs")
    (root / SCHEMA_IN_REPO).parent.mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, SCHEMA_IN_REPO), root / SCHEMA_IN_REPO)
    shutil.copy(os.path.join(ROOT, "python", "pyproject.toml"), root / "python")
    for app in miniapps.built(ROOT) + [new_app]:
        (root / "miniapps" / app).mkdir(parents=True)
        (root / "miniapps" / app / "CMakeLists.txt").write_text(f"karma_add_miniapp({app})\n")
    for app in miniapps.with_decks(ROOT) + [new_app]:
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
    assert app["enum"] == list(APPS) + ["aardvark"]
    assert app["description"].startswith(
        "the mini-app: `stream`, `hexgrad`, `matvec`, `mgs`, `contact` or `aardvark` (")
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
    assert "properties.app: needs an enum and a description" in r.stderr, r.stderr
