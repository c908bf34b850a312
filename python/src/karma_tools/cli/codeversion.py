"""The build's code tables, standard library only: CMake (KarmaMiniapp.cmake) runs `python3
-m karma_tools.cli.codeversion ROOT APP OUT.hpp`; the work is results.codeversion's."""

import sys

from karma_tools.results.codeversion import write_table


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3:
        print("usage: python3 -m karma_tools.cli.codeversion SOURCE_ROOT APP OUT.hpp",
              file=sys.stderr)
        return 2
    write_table(*argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
