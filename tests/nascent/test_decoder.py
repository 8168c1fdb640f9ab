"""The dictionary decoder against the spec's Fig. 9 vectors (§13.5) and a Python reference."""

import numpy as np
import pytest

from ndpkit.errors import ModelError, SpecError
from ndpkit.nascent.decoder import Location, decode, default_lanes, dictionary_table

COUNTRIES = ["USA", "IRAN", "CROATIA", "BRAZIL", "GHANA"]


def test_fig9_table_index_memory_and_eq5() -> None:
    t = dictionary_table(COUNTRIES, l_max=8)
    assert [r.tobytes() for r in t.rows] == [b"USAIRANC", b"ROATIABR", b"AZILGHAN", b"A" + bytes(7)]
    assert list(zip(t.addresses.tolist(), t.lengths.tolist(), strict=True)) == [
        (0, 3),
        (3, 4),
        (7, 7),
        (14, 6),
        (20, 5),
    ]
    assert t.locate(3) == Location(row=1, offset=6, length=6)  # 14 >> 3, 14 & 7
    assert t.locate(0) == Location(0, 0, 3)
    assert t.locate(2) == Location(0, 7, 7)  # straddles rows 0-1
    assert t.locate(4) == Location(2, 4, 5)  # straddles rows 2-3
    assert dictionary_table(COUNTRIES).l_max == 8  # the longest value, 7, rounded up


def test_decode_brazil_and_the_output_buffer() -> None:
    d = decode(COUNTRIES, np.array([3], dtype=np.uint8), l_max=8)
    assert d.values() == [b"BRAZIL"]
    d = decode(COUNTRIES, np.array([3, 0], dtype=np.uint8), l_max=8)
    assert d.data.tobytes() == b"BRAZILUSA"
    c = d.counts
    assert (c.buffers, c.full_flushes, c.partial_flushes) == (8, 1, 1)  # BRAZILUS, then A
    assert (c.cycles, c.row_reads, c.input_bytes, c.output_bytes) == (2, 4, 2, 9)
    assert d.offsets is not None and d.offsets.tolist() == [0, 6, 9]


def test_mixed_case_values_decode_in_both_key_widths() -> None:
    names = ["USA", "Iran", "Croatia", "Brazil", "Ghana"]
    for dtype in (np.uint8, np.uint16, np.uint32):
        d = decode(names, np.array([3, 0, 2, 4, 1], dtype=dtype))
        assert d.values() == [b"Brazil", b"USA", b"Croatia", b"Ghana", b"Iran"]
        assert d.counts.input_bytes == 5 * np.dtype(dtype).itemsize


def test_random_pages_match_a_python_reference() -> None:
    rng = np.random.default_rng(11)
    for case in range(20):
        values = [rng.bytes(int(rng.integers(0, 90))) for _ in range(int(rng.integers(1, 400)))]
        keys = rng.integers(0, len(values), 2000).astype(np.uint16)
        d = decode(values, keys)
        expected = b"".join(values[k] for k in keys)
        assert d.data.tobytes() == expected, case
        b = d.counts.buffers
        assert b == min(d.counts.l_max, 64)
        assert (d.counts.full_flushes, d.counts.partial_flushes) == (
            len(expected) // b,
            int(len(expected) % b != 0),
        )


def test_fixed_length_mode_lanes() -> None:
    values = [np.float32(v).tobytes() for v in (1.5, -2.0, 3.25)]
    keys = np.array([2, 0, 1, 1, 0, 2, 2], dtype=np.uint8)
    d = decode(values, keys, mode="fixed")
    assert np.frombuffer(d.data, dtype=np.float32).tolist() == [
        3.25,
        1.5,
        -2.0,
        -2.0,
        1.5,
        3.25,
        3.25,
    ]
    assert d.offsets is None
    assert (d.counts.table_copies, d.counts.cycles) == (10, 1)  # O7: 10 lanes for 1-byte keys
    assert default_lanes(1) == 10 and default_lanes(2) == 5
    d16 = decode(values, keys.astype(np.uint16), mode="fixed")
    assert (d16.counts.table_copies, d16.counts.cycles) == (5, 2)
    assert decode(values, keys, mode="fixed", lanes=3).counts.cycles == 3


def test_bad_input() -> None:
    with pytest.raises(ModelError, match="longer than L_Max"):
        dictionary_table(COUNTRIES, l_max=4)
    with pytest.raises(ModelError, match="longer than L_Max"):
        decode(COUNTRIES, np.array([0], dtype=np.uint8), l_max=4)
    with pytest.raises(SpecError, match="l_max"):
        decode(COUNTRIES, np.array([0], dtype=np.uint8), l_max=6)
    with pytest.raises(ModelError, match="64-bit"):
        decode(COUNTRIES, np.array([0], dtype=np.uint64))
    with pytest.raises(ModelError, match="int8"):
        decode(COUNTRIES, np.array([0], dtype=np.int8))
    with pytest.raises(ModelError, match="no entry"):
        decode(COUNTRIES, np.array([0, 5], dtype=np.uint8))
    with pytest.raises(ModelError, match="fixed-length"):
        decode(COUNTRIES, np.array([0], dtype=np.uint8), mode="fixed")
    with pytest.raises(SpecError, match="mode"):
        decode(COUNTRIES, np.array([0], dtype=np.uint8), mode="fast")  # type: ignore[arg-type]


def test_a_dictionary_given_as_one_string_is_refused() -> None:
    """decode("USA", …) took the string for the dictionary of its letters and decoded key
    0 to b'U' without a word (as `expand("knn")` took the apps k, n and n)."""
    keys = np.array([0], dtype=np.uint8)
    for one in ("USA", b"USA"):
        with pytest.raises(SpecError, match=r"values: must be a list of dictionary values"):
            decode(one, keys)  # type: ignore[arg-type]
        with pytest.raises(SpecError, match=r"give \["):
            dictionary_table(one)  # type: ignore[arg-type]
    assert decode(["USA"], keys).values() == [b"USA"]
