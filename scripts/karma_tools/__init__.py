"""Shared code of karma's cluster tools: karma-batch, karma-compare,
karma-report and karma-envcapture (Python 3 standard library; matplotlib
only for plots)."""

# Kept equal to project(VERSION) in the top-level CMakeLists.txt (a test checks).
__version__ = "0.1.0"


class ToolError(Exception):
    """An error the user can fix; `code` is the exit status (2: bad input,
    3: run-time or environment problem), as the mini-apps use them."""

    def __init__(self, message, code=2):
        super().__init__(message)
        self.code = code


def atomic_write(path, text):
    """Writes text to path through a temporary file and a rename, so a
    reader never sees half a file."""
    import os

    directory = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(directory, f".{os.path.basename(path)}.tmp.{os.getpid()}")
    try:
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
    except OSError as e:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise ToolError(f"cannot write {path}: {e.strerror}", 3) from None


def main_wrapper(program, run):
    """Runs `run()` (which returns an exit status) and turns ToolError and
    Ctrl-C into a message on stderr and an exit status."""
    import sys

    try:
        return run()
    except ToolError as e:
        print(f"{program}: error: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print(f"{program}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
