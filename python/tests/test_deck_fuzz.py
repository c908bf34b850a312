"""A seeded fuzzer of the deck reader, through the mini-apps themselves.

The committed small decks (inputs/<app>/small.yaml) get a few hundred random
mutations: flipped and inserted bytes, deleted, duplicated and swapped lines,
CR/LF changes, control bytes, quotes, `~`, `---`, huge, negative and
wrongly-typed values, unknown keys, truncation, and odd `--set` overrides.
Each mutated deck is run as `karma-<app> DECK --output FILE --quiet`, and
every run must:

- exit 0, 1, 2 or 3: never a signal, never another code, never hang;
- write no results file on exit 2 or 3 (exit 1 writes one by design: the
  results record the failed verification);
- on exit 2, print one error line that says where: `DECK:LINE:COL: `,
  `DECK (default value): ` (a key the deck left out) or `--set ...: `;
- where one mutation alone decides the answer, give it: a lone CR, a mixture
  of line breaks, a control byte, invalid UTF-8, a second document, an
  unclosed or a numeric quote, a key with no value must be refused (exit 2);
  CRLF throughout, or a byte order mark at the start, must still pass.

A mutation may be valid and name a long run (a deleted `n:` line brings back
the default size, `repetitions: 2^62` is a number like any other). Such runs
are capped by the timeout rather than shrunk: after a timeout the deck is run
once more with an --output in a missing directory, which the mini-app refuses
right after reading the deck (before any work). If the deck was read and
accepted in time, the long run is the deck's own meaning and is counted as
capped; if the reader did not answer in time, the timeout is a failure, and
if it refused the deck, the run is made once more with the reader's longer
limit and judged by that (a loaded machine can start a process slowly; a
hang comes back). The contact deck is lowered before mutating (n 16 -> 4,
steps 30 -> 4, sweeps 100 -> 2): as committed, one valid run takes a minute.

KARMA_FUZZ_SEED and KARMA_FUZZ_COUNT change the seed and the number of
mutations, KARMA_FUZZ_SLOWDOWN multiplies the time limits; a failure prints
the seed, the mutation and the deck.
"""

import collections
import concurrent.futures
import json
import os
import random
import re
import subprocess
import time

import pytest

from conftest import ROOT, miniapp

SEED = int(os.environ.get("KARMA_FUZZ_SEED", "17"))
COUNT = int(os.environ.get("KARMA_FUZZ_COUNT", "400"))
# Sanitized builds run several times slower: they scale both limits.
SLOWDOWN = float(os.environ.get("KARMA_FUZZ_SLOWDOWN", "1"))
TIMEOUT_S = 4.0 * SLOWDOWN  # a valid run of a small deck takes about half a second here
PROBE_TIMEOUT_S = 10.0 * SLOWDOWN  # reading a deck takes a tenth of a second
APPS = ["stream", "mgs", "hexgrad", "matvec", "contact", "microbench"]
# Lower sizes first where the committed small deck itself is slow.
LOWER = {"contact": [("n: 16", "n: 4"), ("steps: 30", "steps: 4"), ("sweeps: 100", "sweeps: 2")]}

# One process, no MPI launcher: an isolated singleton with only the self
# transport starts in a tenth of a second instead of half a second. Each run
# gets its own Open MPI session directory: two isolated singletons at once
# may otherwise pick the same one and fail in MPI_Init ("File exists").
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false",
           OMPI_MCA_ess_singleton_isolated="1", OMPI_MCA_btl="self", OMPI_MCA_pml="ob1",
           KARMA_PROGRESS="off")


def base_deck(app):
    with open(os.path.join(ROOT, "inputs", app, "small.yaml"), "rb") as f:
        text = f.read()
    for old, new in LOWER.get(app, []):
        assert old.encode() in text, f"inputs/{app}/small.yaml no longer has '{old}'"
        text = text.replace(old.encode(), new.encode(), 1)
    return text


def key_paths(text):
    """section.key for every `  key:` line under a top-level `section:`."""
    paths, section = [], None
    for line in text.decode(errors="replace").splitlines():
        if re.match(r"^[a-z_]+:\s*(#.*)?$", line):
            section = line.split(":")[0]
        elif section and (m := re.match(r"^  ([a-z_]+):", line)):
            paths.append(f"{section}.{m.group(1)}")
    return paths


# --- mutations ----------------------------------------------------------------------------
#
# Each takes (rng, deck bytes) and returns (new bytes, extra --set arguments, what the reader
# must make of a deck mutated this way alone: REFUSED, SAME as the small deck, or None for
# "anything within the rules").

REFUSED, SAME = "refused", "same"

HUGE = [b"2^62", b"2^63", b"9223372036854775807", b"99999999999999999999", b"1e308", b"1e999",
        b"2^40", b"10^15", b"4294967296", b"-2^62", b"0", b"-1", b"2^-1", b"0x10", b"1_000"]
WRONG = [b"[1, 2]", b"[]", b"{a: 1}", b"true", b"abc", b"1.5", b"''", b'""', b"[[1]]", b"-",
         b"[1, ~]", b"!!str 5", b"&a 5", b"*a", b"|", b">", b"'1003'", b'"2"', b"[2^3, '4']",
         b"nan", b".inf", b"no", b"yes", b"on", b"null", b"~", b""]
CONTROL = [bytes([c]) for c in list(range(0, 9)) + [11, 12] + list(range(14, 32)) + [127]]
SET_VALUES = ["", "~", "null", "'5'", '"abc', "abc'", "1e999", "[1,", "[1, 2", "{", "!!int 5",
              "&a 1", "*a", "a\rb", "a\x01b", "a\tb", "---", "...", "- 1", "2^64", "-7",
              "[" * 300, "|", "caf\udce9", "'a'", "[]", "{}", "left", "true"]  # \udce9: byte 0xE9


def lines(text):
    return text.split(b"\n")


def pick_line(rng, text):
    ls = lines(text)
    return ls, rng.randrange(len(ls))


def m_flip_bit(rng, t):
    if not t:
        return t, [], None
    i = rng.randrange(len(t))
    return t[:i] + bytes([t[i] ^ (1 << rng.randrange(8))]) + t[i + 1:], [], None


def m_set_byte(rng, t):
    if not t:
        return t, [], None
    i = rng.randrange(len(t))
    return t[:i] + bytes([rng.randrange(256)]) + t[i + 1:], [], None


def m_insert_bytes(rng, t):
    junk = rng.choice([b"\xff", b"\xc3", b"\xe2\x80\xa8", b"\xc2\x85", b"\xef\xbb\xbf", b"\t",
                       b":", b"-", b"[", b"]", b"{", b"}", b"#", b"&", b"*", b"!", b"%", b"@",
                       b"`", b"|", b">", b",", b"?", b" ", b"\\"])
    i = rng.randrange(len(t) + 1)
    # Invalid UTF-8, NEL, U+2028 and a byte order mark after the start are refused anywhere.
    bom = junk == b"\xef\xbb\xbf"
    bad = junk in (b"\xff", b"\xc3", b"\xe2\x80\xa8", b"\xc2\x85") or (bom and i > 0)
    return t[:i] + junk + t[i:], [], REFUSED if bad else (SAME if bom else None)


def m_control(rng, t):
    i = rng.randrange(len(t) + 1)
    return t[:i] + rng.choice(CONTROL) + t[i:], [], REFUSED


def m_delete_line(rng, t):
    ls, i = pick_line(rng, t)
    del ls[i]
    return b"\n".join(ls), [], None


def m_duplicate_line(rng, t):
    ls, i = pick_line(rng, t)
    ls.insert(i, ls[i])
    return b"\n".join(ls), [], None


def m_swap_lines(rng, t):
    ls, i = pick_line(rng, t)
    j = rng.randrange(len(ls))
    ls[i], ls[j] = ls[j], ls[i]
    return b"\n".join(ls), [], None


def m_line_breaks(rng, t):
    how = rng.randrange(6)
    if how == 0:
        return t.replace(b"\n", b"\r"), [], REFUSED  # classic Mac: the original bug
    if how == 1:
        return t.replace(b"\n", b"\r\n"), [], SAME  # Windows: reads as LF does
    positions = [k for k, c in enumerate(t) if c == 10]
    if not positions:  # after another mutation took them all
        return t + b"\r", [], REFUSED
    if how == 2:
        k = rng.choice(positions)
        return t[:k] + b"\r\n" + t[k + 1:], [], REFUSED  # one CRLF among LFs
    if how == 3:
        k = rng.choice(positions)
        return t[:k] + b"\r" + t[k + 1:], [], REFUSED  # one CR
    if how == 4:
        k = rng.choice(positions)
        return t[:k] + t[k + 1:], [], None  # two lines joined
    crlf = t.replace(b"\n", b"\r\n")
    k = rng.choice([k for k, c in enumerate(crlf) if c == 13])
    return crlf[:k] + crlf[k + 1:], [], REFUSED  # one lone CR among CRLFs


def m_quote(rng, t):
    ls, i = pick_line(rng, t)
    line = ls[i]
    q = rng.choice([b"'", b'"'])
    if b": " in line and not line.lstrip().startswith(b"#") and rng.random() < 0.5:
        key, value = line.split(b": ", 1)
        value = value.split(b"#")[0].strip()
        if value and rng.random() < 0.5:
            ls[i] = key + b": " + q + value  # unclosed: it used to swallow the lines after it
            return b"\n".join(ls), [], REFUSED
        ls[i] = key + b": " + q + value + q
        # A quoted number is a string, refused where a number belongs.
        number = re.fullmatch(rb"[-+]?\d+(\.\d*)?|\d+\^\d+|true|false", value)
        return b"\n".join(ls), [], REFUSED if number else None
    k = rng.randrange(len(line) + 1)
    ls[i] = line[:k] + q + line[k:]
    return b"\n".join(ls), [], None


def value_lines(t):
    ls = lines(t)
    return ls, [k for k, line in enumerate(ls) if re.match(rb"^\s+[a-z_]+:\s*\S", line)
                and not line.lstrip().startswith(b"#")]


def replace_value(rng, t, new):
    """The deck with one key's value replaced, and that key."""
    ls, candidates = value_lines(t)
    if not candidates:
        return t, None
    i = rng.choice(candidates)
    key = ls[i].split(b":")[0]
    ls[i] = key + b": " + new
    return b"\n".join(ls), key.strip()


def replace_number(rng, t, new):
    spans = [m.span() for m in re.finditer(rb"(?<![\w.])\d+(?![\w.])", t)]
    spans = [s for s in spans if not t[:s[0]].rsplit(b"\n", 1)[-1].lstrip().startswith(b"#")]
    if not spans:
        return t
    a, b = rng.choice(spans)
    return t[:a] + new + t[b:]


def m_null(rng, t):
    new, key = replace_value(rng, t, rng.choice([b"~", b"", b"null", b"  # nothing", b"Null"]))
    # A key with no value is refused, and so is a section with no keys.
    return new, [], REFUSED if key is not None else None


def m_empty_section(rng, t):
    """A section left with no keys: `name: ~`, or every key commented out."""
    ls = t.split(b"\n")
    headers = [i for i, line in enumerate(ls) if re.fullmatch(rb"\s*\w+:\s*", line)]
    if not headers:
        return t, [], None
    i = rng.choice(headers)
    indent = len(ls[i]) - len(ls[i].lstrip())
    end = i + 1
    while end < len(ls) and (not ls[end].strip() or ls[end].lstrip().startswith(b"#") or
                             len(ls[end]) - len(ls[end].lstrip()) > indent):
        end += 1
    if rng.random() < 0.5:
        ls[i:end] = [ls[i].rstrip() + b" ~"]
    else:
        ls[i + 1:end] = [b"#" + line for line in ls[i + 1:end]]
    return b"\n".join(ls), [], REFUSED


def m_document(rng, t):
    ls, i = pick_line(rng, t)
    marker = rng.choice([b"---", b"...", b"--- # a", b"%YAML 1.2"])
    content = [bool(re.match(rb"\s*[^#\s]", line)) for line in ls]
    ls.insert(i, marker)
    # A marker between two parts of the deck starts a second document (or, for a
    # directive, is a syntax error); before any content it is harmless.
    between = any(content[:i]) and any(content[i:])
    return b"\n".join(ls), [], REFUSED if between else None


def m_huge(rng, t):
    return replace_number(rng, t, rng.choice(HUGE)), [], None


def m_negative(rng, t):
    spans = [m.span() for m in re.finditer(rb"(?<![\w.])\d+(?![\w.])", t)]
    if not spans:
        return t, [], None
    a, _ = rng.choice(spans)
    return t[:a] + b"-" + t[a:], [], None


def m_wrong_type(rng, t):
    return replace_value(rng, t, rng.choice(WRONG))[0], [], None


def m_unknown_key(rng, t):
    ls, i = pick_line(rng, t)
    new = rng.choice([b"  bogus: 1", b"bogus: 1", b"  shape: [8]", b"  n: 3", b"run:",
                      b"  repetitions: 1", b"    deep: 1", b"  : 5", b"  ? [a]\n  : 1",
                      b"  <<: {n: 1}", b"  \"n\": 7", b"  n : 7", b"  N: 7"])
    ls.insert(i, new)
    return b"\n".join(ls), [], None


def m_rename_key(rng, t):
    ls, candidates = value_lines(t)
    if not candidates:
        return t, [], None
    i = rng.choice(candidates)
    line = ls[i]
    colon = line.index(b":")
    k = rng.randrange(len(line[:colon].lstrip()) or 1) + (len(line) - len(line.lstrip()))
    ls[i] = line[:k] + rng.choice([b"x", b"", b"_", b"A"]) + line[k + 1:]
    return b"\n".join(ls), [], None


def m_truncate(rng, t):
    return t[:rng.randrange(len(t) + 1)], [], None


def m_nesting(rng, t):
    depth = rng.choice([50, 500, 5000])
    nested = rng.choice([b"[" * depth + b"1" + b"]" * depth, b"[" * depth,
                         b"{a: " * depth + b"1" + b"}" * depth])
    return replace_value(rng, t, nested)[0], [], REFUSED


def m_set(rng, t):
    paths = key_paths(t) or ["run.warmup"]
    path = rng.choice(paths + ["run.nothing", "bogus", "run", "stream.shape.x"])
    value = rng.choice(SET_VALUES)
    return t, ["--set", f"{path}={value}"], None


MUTATIONS = [m_flip_bit, m_set_byte, m_insert_bytes, m_control, m_delete_line, m_duplicate_line,
             m_swap_lines, m_line_breaks, m_line_breaks, m_quote, m_quote, m_null, m_document,
             m_huge, m_negative, m_wrong_type, m_wrong_type, m_unknown_key, m_rename_key,
             m_truncate, m_nesting, m_set, m_empty_section]


def mutations(seed, count):
    """(index, app, names, deck bytes, extra args, expectation), the same for the same seed."""
    rng = random.Random(seed)
    bases = {app: base_deck(app) for app in APPS}
    for index in range(count):
        app = APPS[index % len(APPS)]
        text, args, names, expects = bases[app], [], [], []
        for _ in range(1 if rng.random() < 0.75 else 2):
            op = rng.choice(MUTATIONS)
            text, more, expect = op(rng, text)
            args += more
            names.append(op.__name__[2:])
            expects.append(expect)
        # What one mutation must give; two may undo each other (a truncation after a CR).
        yield index, app, names, text, args, expects[0] if len(expects) == 1 else None


# --- running and judging ------------------------------------------------------------------

def run(command, timeout, cwd):
    """(exit code or None after the timeout, stdout, stderr)"""
    try:
        r = subprocess.run(command, capture_output=True, timeout=timeout, cwd=cwd,
                           env=dict(ENV, OMPI_MCA_orte_tmpdir_base=cwd),
                           stdin=subprocess.DEVNULL)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        return None, "", (e.stderr or b"").decode(errors="replace")


def located(stderr, app, deck):
    """The one error line of a refusal, and whether it says where."""
    errors = [line for line in stderr.splitlines() if line.startswith(f"karma-{app}: error: ")]
    if len(errors) != 1:
        return f"expected one 'karma-{app}: error:' line, got {len(errors)}"
    message = errors[0][len(f"karma-{app}: error: "):]
    d = re.escape(deck)
    if re.match(rf"{d}:\d+:\d+: |{d} \(default value\): |--set ", message):
        return None
    return f"the error does not say where (DECK:LINE:COL, '(default value)' or --set): {message}"


def check(case, workdir):
    """Runs one mutation; returns (outcome, failure or None)."""
    index, app, names, text, args, expect = case
    directory = os.path.join(workdir, f"m{index:03d}")
    os.makedirs(directory)
    deck = os.path.join(directory, f"{app}-m{index:03d}.yaml")
    with open(deck, "wb") as f:
        f.write(text)
    output = os.path.join(directory, "results.json")
    command = [miniapp(app), deck, *args, "--output", output, "--quiet"]
    code, stdout, stderr = run(command, TIMEOUT_S, directory)
    written = os.path.exists(output)

    def failure(why):
        return (f"mutation {index} ({'+'.join(names)}) of inputs/{app}/small.yaml, seed {SEED}: "
                f"{why}\n  command: {' '.join(map(repr, command))}\n  stderr: {stderr.strip()}\n"
                f"  deck: {text!r}")

    if code is None:
        # Capped or hung: ask the reader alone, with an --output it must refuse.
        probe = [miniapp(app), deck, *args, "--output",
                 os.path.join(directory, "missing", "r.json"), "--quiet"]
        pcode, _, pstderr = run(probe, PROBE_TIMEOUT_S, directory)
        if pcode is None:
            return "hang", failure(f"the deck reader did not answer in {PROBE_TIMEOUT_S} s")
        if pcode == 2 and "--output " in pstderr and "does not exist" in pstderr:
            return "capped", None
        # The deck alone gives its answer in time, so the run had no long work
        # to do: either it hangs or a loaded machine started it slowly. A hang
        # comes back: run it once more with the reader's limit and judge that.
        if os.path.exists(output):
            os.remove(output)
        code, stdout, stderr = run(command, PROBE_TIMEOUT_S, directory)
        if code is None:
            return "hang", failure(f"ran past {TIMEOUT_S} s and then past {PROBE_TIMEOUT_S} s, "
                                   f"yet the deck alone gives exit {pcode}: {pstderr.strip()}")
        written = os.path.exists(output)
    if code not in (0, 1, 2, 3):
        return code, failure(f"exit code {code}" + (" (a signal)" if code < 0 else ""))
    if code in (2, 3) and written:
        return code, failure(f"exit {code} yet {output} was written")
    if code == 1 and not ("RESULT: FAILED reason=verification" in stdout and written):
        # Not a failed verification (that writes its results): MPI_Init failing, say.
        return code, failure(f"exit 1 without a failed verification: {stdout.strip()}")
    if code == 0:
        try:
            with open(output) as f:
                json.load(f)
        except (OSError, ValueError) as e:
            return code, failure(f"exit 0 but no readable results file: {e}")
    if code == 2:
        problem = located(stderr, app, deck)
        if problem:
            return code, failure(problem)
    if expect == REFUSED and code != 2:
        return code, failure(f"exit {code}: a deck mutated this way must be refused (exit 2)")
    if expect == SAME and code != 0:
        return code, failure(f"exit {code}: this mutation must change nothing (the small deck "
                             "passes)")
    return code, None


# The mutations in parts, each a test of its own, so that ctest can run them
# side by side (KARMA_TEST_SHARD, conftest.py).
PARTS = 12


@pytest.mark.parametrize("part", range(PARTS))
def test_deck_fuzz(tmp_path, part):
    start = time.monotonic()
    for app in APPS:
        miniapp(app)
    # The probe in check() relies on --output being checked right after the deck is read.
    code, _, stderr = run([miniapp("stream"), os.path.join(ROOT, "inputs", "stream",
                                                           "small.yaml"),
                           "--output", str(tmp_path / "missing" / "r.json"), "--quiet"], 30,
                          str(tmp_path))
    assert code == 2 and "does not exist" in stderr, (code, stderr)

    cases = [c for c in mutations(SEED, COUNT) if c[0] % PARTS == part]
    outcomes, failures = collections.Counter(), []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for outcome, problem in pool.map(lambda c: check(c, str(tmp_path)), cases):
            outcomes[str(outcome)] += 1
            if problem:
                failures.append(problem)
    seconds = time.monotonic() - start
    summary = (f"deck fuzz: seed {SEED}, part {part + 1} of {PARTS}: {len(cases)} mutations in "
               f"{seconds:.1f} s; outcomes "
               + ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())))
    print(summary)
    assert not failures, (f"{summary}\n{len(failures)} failures (rerun with KARMA_FUZZ_SEED="
                          f"{SEED}):\n" + "\n\n".join(failures[:20]))
