"""Numbers as a user writes them on the command line: the digits 0-9 only.

Python's int() and float() also take '１２' (full-width), '١٨' (Arabic-Indic) and '1_000', and
str.isdigit() takes '²'; the option parser read '0_05' as 5. ndpkit's quantities refuse all
of them (`ndpkit.units`), and so does every other number through these checks. Kept apart
from `ndpkit.units`, which imports pint (0.2 s), so that every command can use them."""

from __future__ import annotations

import re


def ascii_digits(text: str) -> bool:
    """Whether `text` is one or more of the digits 0-9: str.isdigit() also takes '١٨', '１２'
    and '²' (which int() then refuses), so a check with it alone lets other scripts through."""
    return text.isascii() and text.isdigit()


def plain_number(text: str) -> bool:
    """Whether `text` is written in ASCII without '_': int(), float() and the option
    parser would take '0_05' (as 5, in the parser's case), '１２' or '1_000' as numbers, where
    sizes and every other quantity refuse them."""
    return text.isascii() and "_" not in text


def signed_whole(text: str) -> bool:
    """Whether `text` is a whole number as the command line takes one: an optional sign, then
    the digits 0-9 (no second sign, no '_', no other script's digits)."""
    return re.fullmatch(r"[+-]?[0-9]+", text) is not None
