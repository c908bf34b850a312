"""Whether two results ran the same code: each kernel's code version, as recorded or derived
again from the sources (--source, a git commit)."""

from karma_tools.results import codeversion


class SourceAt:
    """The kernels' source hashes at a git revision (karma-compare --source LABEL=REV)."""

    def __init__(self, repo, revision):
        self.repo, self.revision = repo, revision
        self.hashes = {}

    def source(self, app, symbols):
        """(source hash, None) of the symbols at the revision, or (None, the first it lacks)."""
        if app not in self.hashes:
            files = codeversion.git_sources(self.repo, self.revision, app) or {}
            self.hashes[app] = codeversion.source_hashes(files)
        hashes = self.hashes[app]
        missing = next((symbol for symbol in symbols if symbol not in hashes), None)
        return (None, missing) if missing else \
            (codeversion.combine([hashes[q] for q in symbols], {})[0], None)


def code_info(group, kernel):
    """{versions (None: a run without), schemes, code: one run's `code`} of a kernel's runs."""
    entries = [r.kernels[kernel]["entry"] for r in group.runs if kernel in r.kernels]
    versions = {e.get("code_version") for e in entries}
    code = next((e["code"] for e in entries if "code" in e), None)
    schemes = {codeversion.scheme_of(e.get("code")) for e in entries if "code_version" in e}
    return {"versions": versions, "code": code, "schemes": schemes}


def _current(info):
    """Whether every run recorded a code version of this module's scheme."""
    return None not in info["versions"] and info["schemes"] == {codeversion.SCHEME}


def _source_now(app, info, at, symbols):
    """One side's (source hash of `symbols` in this scheme, a symbol the revision lacks, from
    where): recorded, else derived at its --source revision, else Nones."""
    code = info["code"] or {}
    if _current(info) and code.get("symbols") == symbols and "source" in code:
        return code["source"], None, None
    if at is None:
        return None, None, None
    derived, missing = at.source(app, symbols)
    return derived, missing, f"source at {at.revision}"


def code_status(app, base, other):
    """('same code' | 'code changed' | 'code version unknown', detail) of base and other, each
    (code info, SourceAt or None): code versions of one scheme, else source hashes, compare."""
    (a, a_src), (b, b_src) = base, other
    recorded = [None not in x["versions"] for x in (a, b)]
    if all(recorded) and len(a["schemes"] | b["schemes"]) == 1:
        if a["versions"] == b["versions"] and len(a["versions"]) == 1:
            return "same code", ""
        return "code changed", f"code_version {'/'.join(sorted(a['versions']))} vs " \
            f"{'/'.join(sorted(b['versions']))}"
    codes = [x["code"] for x in sorted((a, b), key=_current, reverse=True)
             if x["code"] and "symbols" in x["code"]]
    found = [_source_now(app, x, at, codes[0]["symbols"]) if codes else (None, None, None)
             for x, at in ((a, a_src), (b, b_src))]
    for (_, missing, _), at in zip(found, (a_src, b_src)):
        if missing:
            return "code changed", f"{missing} is not defined at {at.revision}"
    if None in (found[0][0], found[1][0]):
        older = sorted({str(n) for x in (a, b) for n in x["schemes"]} - {str(codeversion.SCHEME)})
        if older:
            return "code version unknown", f"code versions of scheme {'/'.join(older)}, not " \
                f"{codeversion.SCHEME}: --source derives them"
        return "code version unknown", \
            "one side recorded none" if any(recorded) else "neither side recorded one"
    where = " and ".join(w for _, _, w in found if w)
    if found[0][0] != found[1][0]:
        return "code changed", f"{where} {found[0][0]} vs {found[1][0]} (source only: the " \
            "launch shape of a side without a code version of this scheme is unknown)"
    return "same code", f"{where} (source only)"
