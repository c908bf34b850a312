"""What all of karma's tools share: version, mini-apps, ToolError, whole writes, tables."""

import contextlib
import json
import os
import pathlib
import shutil
import stat

# Kept equal to project(VERSION) in the top-level CMakeLists.txt (a test checks).
__version__ = "1.1.0"

# The package's folder (its schemas/ is package data) and the checkout holding it, if any.
PACKAGE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.join(PACKAGE, "..", "..", "..")


def miniapp_folders(root):
    """The mini-apps CMake builds, sorted: miniapps/<app>/CMakeLists.txt."""
    folder = os.path.join(root, "miniapps")
    return sorted(name for name in os.listdir(folder)
                  if os.path.isfile(os.path.join(folder, name, "CMakeLists.txt")))


def miniapps_with_decks(root):
    """The mini-apps that take a deck and write karma results (with inputs/<app>/), sorted."""
    return [app for app in miniapp_folders(root)
            if os.path.isdir(os.path.join(root, "inputs", app))]


# The results schema's `app` names, in order (an installed package has no miniapps/ to list).
APPS = tuple(json.loads(pathlib.Path(PACKAGE, "schemas", "results.schema.json").read_text(
    encoding="utf-8"))["properties"]["app"]["x-karma-apps"])

# Deeper nesting is refused: no karma file comes near it; recursion would give out first.
MAX_DEPTH = 64


class ToolError(Exception):
    """An error the user can fix; `code` is the exit status (2 bad input, 3 run-time)."""

    def __init__(self, message, code=2):
        super().__init__(message)
        self.code = code


def describe(value):
    """A JSON value for a message: its kind, and a short quote of a scalar."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    if isinstance(value, (int, float)):
        return "the number " + shortened(repr(value), 24)
    return "the string " + repr(shortened(value, 40))


def shortened(text, limit=60):
    """text (str() of it) cut to at most `limit` characters for a message."""
    text = str(text)
    return text if len(text) <= limit else text[:limit - 4] + "..."


def too_deep(value, limit=MAX_DEPTH):
    """Whether a JSON value nests deeper than `limit`; iterative: no stack."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > limit:
                return True
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return False


def atomic_write(path, content):
    """Writes text or bytes to path through a synced temporary file and a rename."""
    write_all([(path, content)])


def write_all(outputs, directories=()):
    """Writes every (path, content) of outputs, or none, through synced temporary files;
    `directories` [(staged, place)] are moved in first (a report after the plots it links)."""
    done, where = [], None
    try:
        for path, content in outputs:
            where = path
            directory = os.path.dirname(os.path.abspath(path))
            temporary = os.path.join(directory, f".{os.path.basename(path)}.tmp.{os.getpid()}")
            done.append((temporary, path))
            with open(temporary, "wb") as f:
                f.write(content.encode("utf-8") if isinstance(content, str) else content)
                f.flush()
                os.fsync(f.fileno())
            if os.path.isdir(path):  # the rename would fail after others were made
                raise IsADirectoryError(21, "Is a directory")
        for staged, place in directories:
            where = place
            aside = staged + ".old"
            if os.path.exists(place):
                os.rename(place, aside)
            os.rename(staged, place)
            shutil.rmtree(aside, ignore_errors=True)
        for temporary, path in done:
            where = path
            os.replace(temporary, path)
    except OSError as e:
        for temporary, _ in done:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise unwritable(where, e) from None


def write_folder(out, files, executable=(), what=None):
    """Writes {relative path: text or bytes} as the folder out (replacing it), whole or
    absent; `executable` paths get mode 0755, `what` names out in an error."""
    place = os.path.abspath(out)
    staging = os.path.join(os.path.dirname(place), f".{os.path.basename(place)}.tmp.{os.getpid()}")
    try:
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        for rel, content in files.items():
            target = pathlib.Path(staging, *rel.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
            if rel in executable:
                target.chmod(0o755)
        write_all([], [(staging, place)])
    except OSError as e:
        raise unwritable(out, e, what) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# Bad input (exit 2): an input not there, not a file or not the user's; other failures, 3.
_NOT_THERE = (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError)


def unreadable(path, error):
    """The ToolError for an input that could not be read: exit 2 if not there, else 3."""
    return ToolError(f"{path}: cannot read ({error.strerror or error})",
                     2 if isinstance(error, _NOT_THERE) else 3)


# No input comes near this; /dev/zero would otherwise be read until memory ran out.
MAX_INPUT_BYTES = 256 << 20


def read_input_file(path, what="file"):
    """The input file's bytes; ToolError (2) for a directory, device, empty or oversized file."""
    if os.path.isdir(path):
        raise ToolError(f"{path}: is a directory; name a {what}", 2)
    try:
        with open(path, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                raise ToolError(f"{path}: is a device, not a {what}", 2)
            data = f.read(MAX_INPUT_BYTES + 1)
    except OSError as e:
        raise unreadable(path, e) from None
    if not data:
        raise ToolError(f"{path}: is empty; name a {what}", 2)
    if len(data) > MAX_INPUT_BYTES:
        raise ToolError(f"{path}: is larger than {MAX_INPUT_BYTES >> 20} MiB; not a {what}", 2)
    return data


def unwritable(path, error, what=None):
    """The ToolError for an output not written: 2 for a bad folder, else 3 (as the mini-apps)."""
    return ToolError(f"cannot write {what or path}: {error.strerror or error}",
                     2 if isinstance(error, _NOT_THERE + (FileExistsError,)) else 3)


def md_cell(text):
    """A Markdown table cell: its pipes escaped (the tools' one escaping)."""
    return str(text).replace("|", "\\|")


def md_table(head, rows=()):
    """The lines of the tools' one Markdown table: head, then a line per row, cells escaped."""
    lines = ["| " + " | ".join(map(md_cell, row)) + " |" for row in [head, *rows]]
    return lines[:1] + ["|" + "---|" * len(head)] + lines[1:]
