"""A campaign's compare: section, checked: each comparison's sides select runs, implementations,
variants, kernels and deck values that the campaign has."""

import difflib
import fnmatch

from karma_tools.campaign import deck
from karma_tools.campaign.format import did_you_mean, item, strings, unique_name
from karma_tools.compare import sides
from karma_tools.core import APPS
from karma_tools.results import kerneltable


class Vocabulary:
    """What a campaign's comparisons can name: runs, mini-apps, deck and pairing keys, kernels."""

    def __init__(self, jobs, lister):
        self.apps = {}  # run name -> app
        self.keys = set(sides.PAIRING_KEYS)
        listed, unlisted = set(), set()
        for job in jobs:
            self.apps.setdefault(job.run, job.app)
            keys = lister.runs.get(job.run) if lister and not job.reference else None
            self.keys.update(keys or ())
            (listed if keys else unlisted).add(job.app)
        # Sections of unlisted keys pass unchecked; a site's own mini-app has any sections.
        self.open = unlisted - listed | ({"run"} if not listed else set())
        self.any_section = any(app not in APPS for app in unlisted)

    def check_key(self, check, node, path, key, at_key=False):
        """Fails where `key` (section.key) can be no key of a result of this campaign."""
        section = key.split(".")[0]
        if key in self.keys or section not in ("job", "mpi") and \
                (self.any_section or section in self.open):
            return
        # The key meant may be in a section whose keys are not listed here.
        meant = sorted(self.keys | {f"{s}.{key.split('.', 1)[1]}" for s in self.open - {section}})
        check.fail(node, path, f"'{key}' is not a deck key of {_programs(self.apps.values())} "
                   f"nor one of {', '.join(sides.PAIRING_KEYS)}{did_you_mean(key, meant)}",
                   at_key=at_key)

    def names(self, what, runs):
        """(the runs' apps, the `what` names their results can have (None: a site's own
        app), {name: app} of the other apps' names)."""
        apps = sorted({self.apps[r] for r in runs})
        tables = {app: kerneltable.of_app(app) for app in kerneltable.release(kerneltable.HEAD)}
        if any(app not in tables for app in apps):
            return apps, None, {}
        known = sorted({n for app in apps for n in tables[app].names(what)})
        elsewhere = {n: app for app in tables for n in tables[app].names(what) if n not in known}
        return apps, known, elsewhere


def _matching_none(check, node, where, patterns, known, what, elsewhere):
    """Fails at the first pattern matching none of known, naming the likeliest one meant."""
    for i, pattern in enumerate(patterns):
        if any(fnmatch.fnmatchcase(k, pattern) for k in known):
            continue
        near = difflib.get_close_matches(pattern, known + sorted(elsewhere), n=1, cutoff=0.6)
        hint = "" if not near else f"did you mean '{near[0]}'? " if near[0] in known else \
            f"'{near[0]}' is karma-{elsewhere[near[0]]}'s, which these runs are not; "
        check.fail(item(node, i), where, f"'{pattern}' matches no {what} ({hint}known: "
                   f"{', '.join(known)})")


def _selection(check, node, path, vocabulary):
    entries, out = node.value, {}
    for key, value in entries.items():
        if key == "deck":
            for k, v in value.value.items():
                vocabulary.check_key(check, v, f"{path}.deck.{k}", k, at_key=True)
            out[key] = {k: deck.value(v.plain()) for k, v in value.value.items()}
            continue
        out[key] = strings(value)
        if key == "run":
            _matching_none(check, value, f"{path}.run", out[key], list(vocabulary.apps),
                           "run of this campaign", {})
    runs = [r for r in vocabulary.apps if _matches_any(r, [out.get("run", ["*"])])]
    for key in ("implementation", "variant", "kernel"):
        if key in out:
            apps, known, elsewhere = vocabulary.names(key, runs)
            if known is not None:
                _matching_none(check, entries[key], f"{path}.{key}", out[key], known,
                               f"{key} of {_programs(apps)}", elsewhere)
    return out


def _programs(apps):
    return ", ".join(f"karma-{app}" for app in sorted(set(apps)))


def _matches_any(name, pattern_lists):
    return any(fnmatch.fnmatchcase(name, p) for patterns in pattern_lists for p in patterns)


def check_comparisons(check, node, vocabulary, several):
    """The `compare:` list as plain dicts (kept in the manifest); `several` names the runs
    of several processes a round, whose comparisons must say how those combine (per_round)."""
    out, seen = [], {}
    for i, item_node in enumerate(node.value):
        path, entries = f"compare[{i}]", item_node.value
        name = unique_name(check, entries["name"], path, seen)
        spec = {"name": name, "title": None, "metric": "fom.value", "higher_is_better": None,
                "match": [], "label": [], "same_variant": False, "same_kernel": False,
                "per_round": None, "aggregate": ["worst"]}
        spec.update({key: strings(value) if key in ("match", "label", "aggregate") else
                     value.text() if key in ("title", "metric") else value.value
                     for key, value in entries.items()
                     if key not in ("name", "numerator", "denominator")})
        for key in ("match", "label"):
            for j, k in enumerate(spec[key]):
                vocabulary.check_key(check, item(entries[key], j), f"{path}.{key}[{j}]", k)
        for side in ("numerator", "denominator"):
            spec[side] = _selection(check, entries[side], f"{path}.{side}", vocabulary)
        covered = [r for r in several if _matches_any(
            r, [spec[side].get("run", ["*"]) for side in ("numerator", "denominator")])]
        if covered and spec["per_round"] is None:
            check.fail(item_node, path, f"run {covered[0]} has several processes a round: say how "
                       "each side's results of a round combine (per_round: best or median)")
        out.append(spec)
    return out
