"""Makes the Python environment of karma's tools: a venv that sees the
system's packages (Debian's python3-*) and those of the Python that makes
it, with karma-tools installed into it by pip from this folder, without a
package index. CMake runs it for the build tree (editable, so the sources
are what runs) and for `cmake --install`.

usage: python3 make-env.py ENV [--editable] [--packages DIR] [--link-scripts BIN]
  --packages DIR      .whl or .deb files of the tools' modules, for a node
                      whose Python lacks them and that cannot install them
  --link-scripts BIN  links every entry point into BIN (PREFIX/bin)"""

import argparse
import glob
import os
import shutil
import site
import subprocess
import sys
import tempfile
import tomllib
import venv

HERE = os.path.dirname(os.path.abspath(__file__))
NEEDED = ("ruamel.yaml", "jsonschema")


def fail(message):
    print(f"make-env: error: {message}", file=sys.stderr)
    sys.exit(3)


def site_packages(python):
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()


def make_venv(env):
    venv.EnvBuilder(system_site_packages=True, with_pip=False, clear=True,
                    symlinks=True).create(env)
    python = os.path.join(env, "bin", "python3")
    # Where this Python is itself a venv (an offline node's), its packages too.
    with open(os.path.join(site_packages(python), "karma-parent.pth"), "w") as f:
        f.write("\n".join(site.getsitepackages()) + "\n")
    return python


def add_packages(python, folder):
    wheels = sorted(glob.glob(os.path.join(folder, "*.whl")))
    debs = sorted(glob.glob(os.path.join(folder, "*.deb")))
    if not wheels and not debs:
        fail(f"{folder}: no .whl or .deb files")
    if wheels:
        pip(python, "install", "--no-deps", *wheels)
    target = site_packages(python)
    for deb in debs:  # pure-Python modules: their files are the install
        with tempfile.TemporaryDirectory() as unpacked:
            subprocess.run(["dpkg-deb", "-x", deb, unpacked], check=True)
            for found in glob.glob(os.path.join(unpacked, "usr", "lib", "python3*",
                                                "dist-packages")):
                shutil.copytree(found, target, dirs_exist_ok=True)


def pip(python, *args):
    r = subprocess.run([python, "-m", "pip", *args[:1], "-q", "--no-index",
                        "--disable-pip-version-check", *args[1:]])
    if r.returncode:
        fail(f"pip {args[0]} failed (exit {r.returncode}); the tools need pip and setuptools "
             "(Debian: python3-pip python3-setuptools)")


def link_scripts(env, bin_dir):
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        names = tomllib.load(f)["project"]["scripts"]
    os.makedirs(bin_dir, exist_ok=True)
    for name in names:
        link = os.path.join(bin_dir, name)
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(os.path.relpath(os.path.join(env, "bin", name), bin_dir), link)


def main():
    p = argparse.ArgumentParser(prog="make-env.py")
    p.add_argument("env")
    p.add_argument("--editable", action="store_true")
    p.add_argument("--packages")
    p.add_argument("--link-scripts")
    args = p.parse_args()
    env = os.path.abspath(args.env)
    python = make_venv(env)
    if args.packages:
        add_packages(python, args.packages)
    if args.editable:
        pip(python, "install", "--no-build-isolation", "--no-deps", "-e", HERE)
    else:
        with tempfile.TemporaryDirectory() as copy:  # no build/ left in the sources
            for part in ("pyproject.toml", "README.md", "src"):
                source = os.path.join(HERE, part)
                (shutil.copytree if os.path.isdir(source) else shutil.copy)(
                    source, os.path.join(copy, part))
            pip(python, "install", "--no-build-isolation", "--no-deps", "--no-compile", copy)
    if args.link_scripts:
        link_scripts(env, args.link_scripts)
    missing = [m for m in NEEDED
               if subprocess.run([python, "-c", f"import {m}"], capture_output=True).returncode]
    if missing:
        print(f"make-env: warning: the tools' environment cannot import {' '.join(missing)}: "
              "install python3-ruamel.yaml python3-jsonschema (Debian), or name their files "
              "in KARMA_PYTHON_PACKAGES", file=sys.stderr)
    print(os.path.join(env, "bin"))


if __name__ == "__main__":
    main()
