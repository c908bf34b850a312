"""Deck values as the mini-apps read them (deck.cpp), for the tools that
resolve decks and check campaign values without running a mini-app."""

import re

DECIMAL = re.compile(r"^[-+]?[0-9]+$")


def deck_integer(text):
    """deck.cpp's parse_integer: [+-]digits or base^exponent in 64 bits."""
    low, high = -2**63, 2**63 - 1
    base, caret, exponent = text.partition("^")
    if not DECIMAL.match(base) or (caret and not DECIMAL.match(exponent)):
        return None
    if any(len(t.lstrip("+-").lstrip("0")) > 20 for t in (base, exponent)):
        return None  # beyond 64 bits (and int() of thousands of digits is refused)
    b = int(base)
    if not caret:
        return b if low <= b <= high else None
    e = int(exponent)
    if not low <= b <= high or e < 0:
        return None
    if b == 0:
        return 1 if e == 0 else 0
    if b == 1:
        return 1
    if b == -1:
        return -1 if e % 2 else 1
    if e > 63:  # |base| >= 2 overflows 64 bits by then
        return None
    v = b ** e
    return v if low <= v <= high else None


def deck_value(value):
    """A deck value as the mini-apps resolve it: integers written base^exp
    (2^25) become numbers, recursively in lists and mappings."""
    if isinstance(value, dict):
        return {k: deck_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deck_value(v) for v in value]
    if isinstance(value, str):
        number = deck_integer(value)
        return value if number is None else number
    return value
