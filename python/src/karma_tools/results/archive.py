"""Results archives: one `.tar.xz` of a campaign directory or a folder of results, read wherever
the tools read a directory (`ARCHIVE/results/x.json` names a file inside). Format 1
(docs/campaigns.md): GNU tar in xz, the index `karma-archive.json` first, then each distinct
content once (a job's `environment/` files as `environment/<sha256>`), owners, modes and times
fixed: the same folder, the same bytes."""

import functools
import hashlib
import io
import json
import lzma
import os
import pathlib
import re
import tarfile

from karma_tools import schemas
from karma_tools.core import (MAX_DEPTH, ToolError, atomic_write, read_input_file, too_deep,
                              unreadable)
from karma_tools.campaign import jobs as jobs_mod
from karma_tools.results.validate import parse_json

SUFFIX = ".tar.xz"
FORMAT = 1
INDEX = "karma-archive.json"
# A karma-bundle's checksums (bundle.py), read in place of the index.
BUNDLE_MANIFEST = "MANIFEST.sha256"
ENVIRONMENT = "environment"
# A fixed time for every member (2026-01-01): the same input, the same bytes.
MTIME = 1767225600
# Decompressed, no committed archive comes near this; a hostile file stops here.
MAX_BYTES = 2 << 30
# xz's 64 MiB dictionary: a campaign's near-alike environment captures (5 to 20
# MB together) are more than preset 6's 8 MiB window sees at once.
XZ_PRESET = 9 | lzma.PRESET_EXTREME


def is_archive_name(path):
    return str(path).endswith(SUFFIX)


def folder_files(folder):
    """Sorted relative paths of the regular files under folder (no hidden ones, no links)."""
    return sorted(os.path.relpath(p, folder).replace(os.sep, "/")
                  for p in walk_files(folder, archives=False))


def _job_entries(folder, manifest, files, by_path):
    """The index's jobs: where the files of each job's results folder are in the archive."""
    jobs = []
    for entry in manifest["jobs"]:
        prefix = os.path.relpath(entry["results_dir"], os.path.abspath(folder))
        prefix = prefix.replace(os.sep, "/") + "/"
        mine = {f[len(prefix):]: f for f in files if f.startswith(prefix)}  # {rel: path}
        code = by_path.get(prefix + jobs_mod.EXIT_CODE_FILE)
        env = sorted((rel.removeprefix(ENVIRONMENT + "/"), hashlib.sha256(by_path[f]).hexdigest())
                     for rel, f in mine.items() if rel.startswith(ENVIRONMENT + "/"))
        logs = [f for rel, f in mine.items() if rel.startswith("job") and rel.endswith(".out")]
        jobs.append({"name": entry["name"], "log": logs[0] if logs else None,
                     "exit_code": None if code is None else jobs_mod.exit_code_of(code),
                     "environment": hashlib.sha256(json.dumps(env).encode()).hexdigest()
                     if env else None,
                     "results": [f for rel, f in mine.items() if rel.endswith(".json")
                                 and "/" not in rel]})
    return jobs


def write(folder, out, kind, name=None, manifest=None):
    """Writes folder's archive to out atomically (a campaign's with its manifest); its bytes."""
    if not is_archive_name(out):
        raise ToolError(f"{out}: an archive's name ends in {SUFFIX}", 2)
    files = folder_files(folder)
    if INDEX in files:
        raise ToolError(f"{folder}: holds a {INDEX} of its own; not a folder of results", 2)
    by_path, stored, entries, members = {}, {}, [], {}
    for rel in files:
        try:
            data = by_path[rel] = pathlib.Path(folder, rel).read_bytes()
        except OSError as e:
            raise unreadable(os.path.join(folder, rel), e) from None
        digest = hashlib.sha256(data).hexdigest()
        # A job's environment/ files (not a top-level environment/) are stored by content.
        in_environment = f"/{ENVIRONMENT}/" in f"/{rel}" and not rel.startswith(f"{ENVIRONMENT}/")
        member = f"{ENVIRONMENT}/{digest}" if in_environment else stored.get(digest, rel)
        members.setdefault(member, data)
        stored.setdefault(digest, member)
        entries.append({"path": rel, "member": member, "sha256": digest, "size": len(data)})
    index = {"karma_archive": FORMAT, "kind": kind,
             "name": name or os.path.basename(os.path.normpath(folder)), "files": entries}
    if kind == "campaign":
        index["jobs"] = _job_entries(folder, manifest, files, by_path)
    body = (json.dumps(index, indent=1, sort_keys=True) + "\n").encode()
    data = tar_xz([(INDEX, body)] + sorted(members.items()))
    atomic_write(out, data)
    _read_archive.cache_clear()
    return data


def tar_xz(members):
    """The xz tar of [(name, bytes)] in that order, owners, modes and times fixed."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for member, data in members:
            info = tarfile.TarInfo(member)  # owner root, mode 0644: TarInfo's defaults
            info.size, info.mtime = len(data), MTIME
            tar.addfile(info, io.BytesIO(data))
    return xz(raw.getvalue())


def xz(data):
    """The compressed bytes of an archive, a bundle or the measurement list."""
    return lzma.compress(data, format=lzma.FORMAT_XZ, preset=XZ_PRESET)


class Archive:
    """An archive read whole: its index and {path: bytes} of the folder."""

    def __init__(self, path):
        self.path = path
        members = read_members(path)

        def bad(why):
            raise ToolError(f"{path}: {why}; not a karma results archive of format {FORMAT}", 2)

        if INDEX not in members:
            if BUNDLE_MANIFEST not in members:
                bad(f"no {INDEX} (nor a karma-bundle's {BUNDLE_MANIFEST})")
            self._read_bundle(members, bad)
            return
        index, why = parse_json(members[INDEX])
        if why:
            bad(f"{INDEX}: not JSON ({why})")
        found = schemas.problems(schemas.load("archive.schema.json"), index)
        if found:
            bad(f"{INDEX}: {found[0]}")
        self.index = index
        self.files = {}
        for i, e in enumerate(index["files"]):
            data = members.get(e["member"])
            if data is None:
                bad(f"{e['path']}: member {e['member']} missing")
            if hashlib.sha256(data).hexdigest() != e["sha256"]:
                bad(f"{e['path']}: member {e['member']}: sha256 differs from the index")
            if not safe_path(e["path"]):
                bad(f"{INDEX}: files[{i}]: path {e['path']!r} leaves the archive")
            if e["path"] in self.files:
                bad(f"{INDEX}: files[{i}]: path {e['path']!r} is listed twice")
            self.files[e["path"]] = data
        both = sorted(self.files.keys() & self.dirs)
        if both:
            bad(f"{INDEX}: {both[0]!r} is both a file and a folder")

    @functools.cached_property
    def dirs(self):
        """The folders of the archive's files, "" its top."""
        return {""} | {p.rsplit("/", i)[0] for p in self.files for i in range(1, p.count("/") + 1)}

    def _read_bundle(self, members, bad):
        """A karma-bundle read as the folder it packs, once its manifest holds."""
        listed, problems = manifest_check(members)
        if problems:
            where, why = problems[0]
            bad(f"{where}: {why} (karma-bundle check lists every problem)")
        unsafe = [p for p in members if not safe_path(p)]
        if unsafe:
            bad(f"member {unsafe[0]!r} leaves the bundle")
        self.index = {"karma_archive": FORMAT, "kind": "bundle", "name": None,
                      "files": [{"path": p, "member": p, "sha256": listed[p], "size": len(d)}
                                for p, d in sorted(members.items()) if p != BUNDLE_MANIFEST]}
        self.files = dict(members)  # MANIFEST.sha256 too: the bundle as packed


def safe_path(rel):
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and ".." not in parts and "" not in parts


def read_members(path, problems=None, what="karma results archive"):
    """{member name: bytes} of a .tar.xz's regular files; problems gets (name, why) of bad ones."""
    members, total = {}, 0
    try:
        with tarfile.open(path, "r:xz") as tar:
            for info in tar:
                if not info.isfile():
                    if problems is not None and not info.isdir():
                        problems.append((info.name, "not a regular file (a link or device)"))
                    continue
                total += info.size
                if total > MAX_BYTES:
                    raise ToolError(f"{path}: more than {MAX_BYTES >> 30} GiB inside; not a "
                                    f"{what}", 2)
                if problems is not None and not safe_path(info.name):
                    problems.append((info.name, "a path that leaves the bundle"))
                elif problems is not None and info.name in members:
                    problems.append((info.name, "in the bundle twice"))
                members[info.name] = tar.extractfile(info).read()
    except OSError as e:  # without an errno: the data, not the file
        raise unreadable(path, e) if e.strerror else \
            ToolError(f"{path}: cannot read ({e})", 2) from None
    except (tarfile.TarError, lzma.LZMAError, EOFError) as e:
        raise ToolError(f"{path}: not a readable .tar.xz ({e})", 2) from None
    return members


def open_archive(path):
    """The Archive at path, read once per process while it stays unchanged."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise unreadable(path, e) from None
    return _read_archive(path, os.path.abspath(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=4)
def _read_archive(path, where, mtime, size):  # cached by where it is and its stamp
    return Archive(path)


def split(path):
    """(archive, path inside it) when path is or runs through one, else None."""
    text = os.fspath(path)
    if SUFFIX not in text:
        return None
    parts = os.path.normpath(text).split(os.sep)
    for i in range(1, len(parts) + 1):
        head = os.sep.join(parts[:i]) or os.sep
        if head.endswith(SUFFIX) and os.path.isfile(head):
            return head, "/".join(parts[i:])
    return None


def _inside(path):
    """(Archive, path inside it) when path is or runs through an archive, else None."""
    where = split(path)
    return (open_archive(where[0]), where[1]) if where else None


def isfile(path):
    at = _inside(path)
    return os.path.isfile(path) if at is None else at[1] in at[0].files


def isdir(path):
    at = _inside(path)
    return os.path.isdir(path) if at is None else at[1] in at[0].dirs


def exists(path):
    return os.path.lexists(path) if _inside(path) is None else isfile(path) or isdir(path)


def read_bytes(path):
    """The bytes of a file, on disk or inside an archive (OSError as open()'s if absent)."""
    at = _inside(path)
    if at is None:
        return pathlib.Path(path).read_bytes()
    if at[1] not in at[0].files:
        raise FileNotFoundError(2, "No such file or directory in the archive", path)
    return at[0].files[at[1]]


def listdir(path):
    at = _inside(path)
    if at is None:
        return sorted(os.listdir(path))
    prefix = at[1] + "/" if at[1] else ""  # a file's path names every folder above it
    return sorted({p[len(prefix):].split("/")[0] for p in at[0].files if p.startswith(prefix)})


def job_logs(folder):
    """The texts of a job folder's logs: job*.out (Slurm's job-<id>.out, others' job.out)."""
    return [read_bytes(os.path.join(folder, name)).decode("utf-8", "replace")
            for name in listdir(folder) if name.startswith("job") and name.endswith(".out")]


def walk_files(path, suffix="", onerror=None, archives=True):
    """Sorted paths of the non-hidden files under path ending in suffix, an archive walked as
    its folder (archives False: a file, links left out)."""
    at = _inside(path) if archives else None
    if at is not None:
        a, inner = at
        if inner in a.files:
            return [path]
        prefix = inner + "/" if inner else ""
        return [os.path.join(a.path, *p.split("/")) for p in sorted(a.files)
                if p.startswith(prefix) and p.endswith(suffix)
                and not any(part.startswith(".") for part in p[len(prefix):].split("/"))]
    if os.path.isfile(path):
        return [path]
    found = []
    for root, dirs, files in os.walk(path, onerror=onerror):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))  # links not walked
        for name in sorted(files):
            full = os.path.join(root, name)
            if name.startswith(".") or not archives and (os.path.islink(full)
                                                         or not os.path.isfile(full)):
                continue
            if archives and is_archive_name(name) and os.path.isfile(full):
                found.extend(walk_files(full, suffix))
            elif name.endswith(suffix):
                found.append(full)
    return found


def archive_of(path):
    """The file on disk that holds path: the archive for a path inside one."""
    where = split(path)
    return where[0] if where else path


def is_measurement(data):
    """Whether JSON bytes are a karma results document or a Google Benchmark file."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and ("schema_version" in doc and "app" in doc
                                      or "benchmarks" in doc and "context" in doc)


# A list entry's digest: the sha256's first 16 hex digits, as code versions are. The list
# guards against lost or changed files, not forgery; the full digest, all entropy, made
# nine tenths of the list's bytes.
DIGEST_DIGITS = 16


def measurement_digest(data):
    return hashlib.sha256(data).hexdigest()[:DIGEST_DIGITS]


def read_measurements(path):
    """{path: digest} of a list of measurements (`digest  path` lines, xz; the digest is the
    sha256's first DIGEST_DIGITS hex digits), in its order."""
    listed = {}
    try:
        with lzma.open(path, "rt", encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                digest, sep, rel = line.rstrip("\n").partition("  ")
                if not sep or not re.fullmatch(f"[0-9a-f]{{{DIGEST_DIGITS}}}", digest):
                    raise ToolError(f"{path}:{number}: not a `digest  path` line (the digest: "
                                    f"a sha256's first {DIGEST_DIGITS} hex digits)", 2)
                listed[rel] = digest
    except (OSError, lzma.LZMAError, EOFError, UnicodeDecodeError) as e:
        raise ToolError(f"{path}: not a list of measurements ({e})", 2)
    return listed


def register(list_path, archives):
    """Appends the archives' measurements that list_path lacks; (added, listed)."""
    base = os.path.dirname(os.path.dirname(os.path.abspath(list_path)))
    listed = read_measurements(list_path) if os.path.exists(list_path) else {}
    before = len(listed)
    for given in archives:
        full = os.path.abspath(given)
        if not is_archive_name(full) or not os.path.isfile(full):
            raise ToolError(f"{given}: not an archive (*{SUFFIX})", 2)
        if os.path.relpath(full, base).startswith(".."):
            raise ToolError(f"{given}: not under {base}, where the list's paths start", 2)
        for p in walk_files(full, ".json"):
            data = read_bytes(p)
            rel = os.path.relpath(p, base)
            if rel not in listed and is_measurement(data):
                listed[rel] = measurement_digest(data)
    text = "".join(f"{digest}  {rel}\n" for rel, digest in listed.items())
    atomic_write(list_path, xz(text.encode("utf-8")))
    return len(listed) - before, len(listed)


def read_json(path):
    """The JSON document at path; ToolError (2) for bad JSON or nesting deeper than MAX_DEPTH."""
    try:
        data = read_bytes(path) if split(path) else read_input_file(path, "JSON file")
    except OSError as e:
        raise unreadable(path, e) from None
    doc, why = parse_json(data)
    if why:
        raise ToolError(f"{path}: not valid JSON ({why})", 2)
    if too_deep(doc):
        raise ToolError(f"{path}: nested more than {MAX_DEPTH} levels deep; no karma file is", 2)
    return doc


def manifest_check(files):
    """({path: sha256} BUNDLE_MANIFEST lists, [(path, why)] against the files present)."""
    if BUNDLE_MANIFEST not in files:
        return {}, [(BUNDLE_MANIFEST, "missing")]
    listed, out = {}, []
    lines = files[BUNDLE_MANIFEST].decode("utf-8", "replace").splitlines()
    for n, line in enumerate(lines, 1):
        m = re.fullmatch(r"([0-9a-f]{64}) [ *](.+)", line)
        if not m:
            out.append((f"{BUNDLE_MANIFEST}:{n}", "not 'SHA256  PATH'"))
        elif m.group(2) in listed:
            out.append((f"{BUNDLE_MANIFEST}:{n}", f"{m.group(2)} listed twice"))
        else:
            listed[m.group(2)] = m.group(1)
    if list(listed) != sorted(listed):
        out.append((BUNDLE_MANIFEST, "not sorted by path"))
    present = set(files) - {BUNDLE_MANIFEST}
    out += [(p, f"in the bundle but not in {BUNDLE_MANIFEST}")
            for p in sorted(present - set(listed))]
    out += [(p, f"in {BUNDLE_MANIFEST} but not in the bundle")
            for p in sorted(set(listed) - present)]
    out += [(p, f"sha256 differs from {BUNDLE_MANIFEST}: changed after packing")
            for p in sorted(present & set(listed))
            if hashlib.sha256(files[p]).hexdigest() != listed[p]]
    return listed, out
