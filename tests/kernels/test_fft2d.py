"""2-D FFT (RANS/RFNS §8.1) against numpy's complex128 FFT, on generated and real images."""

from __future__ import annotations

import numpy as np
import pytest
from skimage import data as samples

from ndpkit.kernels import KernelMismatchError, run_in_memory
from ndpkit.kernels.fft2d import SIDE, Spectra, kernels, spectra, spectrum

KERNEL = kernels()["fft2d"]
IMAGE_BYTES = SIDE * SIDE * 3


@pytest.fixture(scope="module")
def images():
    return {seed: KERNEL.generate(5 * IMAGE_BYTES, seed) for seed in (0, 1, 2)}


@pytest.fixture(scope="module")
def photos():
    """Bundled scikit-image samples cropped to 256 × 256 RGB (no download)."""
    crops = [samples.astronaut()[:SIDE, :SIDE], samples.astronaut()[200:456, 150:406]]
    crops.append(samples.chelsea()[:SIDE, 100 : 100 + SIDE])
    stacked = np.stack(crops)
    assert stacked.shape == (3, SIDE, SIDE, 3) and stacked.dtype == np.uint8
    return stacked


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("chunk_records", [1, 2, 1 << 30])
def test_matches_numpy_fft2(images, seed, chunk_records):
    data = images[seed]
    result = run_in_memory(KERNEL, data, KERNEL.params(seed), chunk_records)
    assert result.dtype == np.complex64 and result.shape == (5, 3, SIDE, SIDE)
    KERNEL.check(result, KERNEL.reference(data, {}))


def test_real_photographs(photos):
    result = run_in_memory(KERNEL, photos, {}, 2)
    expected = KERNEL.reference(photos, {})
    KERNEL.check(result, expected)
    per_channel = np.fft.fft2(photos[1, :, :, 2].astype(np.float64))
    np.testing.assert_allclose(
        result[1, 2], per_channel, rtol=0, atol=1e-6 * np.abs(per_channel).max()
    )


def test_error_is_far_inside_the_tolerance(photos):
    result = run_in_memory(KERNEL, photos, {}, 3)
    expected = KERNEL.reference(photos, {})
    error = np.abs(result - expected).max(axis=(2, 3))
    norm = np.sqrt((np.abs(expected) ** 2).sum(axis=(2, 3)))
    assert (error / norm).max() < 1e-7


def test_rows_then_columns():
    """The device's order of 1-D passes: rows (axis 1 of a channel), then columns."""
    image = KERNEL.generate(IMAGE_BYTES, 4)[0]
    out = np.empty((1, 3, SIDE, SIDE), dtype=np.complex64)
    spectrum(image[None], out)
    channel = image[:, :, 1].astype(np.float64)
    rows_first = np.fft.fft(np.fft.fft(channel, axis=1), axis=0)
    np.testing.assert_allclose(out[0, 1], rows_first, rtol=0, atol=1e-6 * np.abs(rows_first).max())


def test_batches_of_images_equal_one_image_at_a_time():
    images = KERNEL.generate(7 * IMAGE_BYTES, 5)  # one batch of 4, then 3
    one_by_one = np.empty((7, 3, SIDE, SIDE), dtype=np.complex64)
    for i, image in enumerate(images):
        spectrum(image[None], one_by_one[i : i + 1])
    assert np.array_equal(spectra(images), one_by_one)


def test_chunking_and_sharding_are_bitwise_invariant(images):
    data = np.concatenate([images[0], images[1]])
    baseline = run_in_memory(KERNEL, data, {}, len(data))
    for chunk_records, bounds in [(1, [0, 3, 3, 10]), (3, [0, 1, 7, 10]), (4, [0, 10])]:
        np.testing.assert_array_equal(
            run_in_memory(KERNEL, data, {}, chunk_records, bounds), baseline
        )


def test_merge_is_associative_and_commutative(images):
    data = images[2]
    a, b, c = (KERNEL.device(data[lo:hi], {}, lo) for lo, hi in [(0, 2), (2, 3), (3, 5)])
    groupings = [
        KERNEL.merge([a, b, c]),
        KERNEL.merge([KERNEL.merge([a, b]), c]),
        KERNEL.merge([a, KERNEL.merge([b, c])]),
        KERNEL.merge([c, KERNEL.merge([b, a])]),
    ]
    answers = [KERNEL.host(m, {})[0] for m in groupings]
    for answer in answers[1:]:
        np.testing.assert_array_equal(answer, answers[0])


def test_host_refuses_missing_images(images):
    data = images[0]
    pieces = KERNEL.merge([KERNEL.device(data[:2], {}, 0), KERNEL.device(data[3:], {}, 3)])
    with pytest.raises(ValueError, match="missing"):
        KERNEL.host(pieces, {})


def test_deterministic_by_seed():
    first = KERNEL.generate(2 * IMAGE_BYTES + 5, 11)
    assert first.shape == (2, SIDE, SIDE, 3) and first.dtype == np.uint8
    np.testing.assert_array_equal(first, KERNEL.generate(2 * IMAGE_BYTES, 11))
    assert not np.array_equal(first, KERNEL.generate(2 * IMAGE_BYTES, 12))
    assert KERNEL.params(11) == {}


def test_edge_cases_are_exact():
    zero = np.zeros((1, SIDE, SIDE, 3), dtype=np.uint8)
    result = run_in_memory(KERNEL, zero, {}, 1)
    assert not result.any()
    KERNEL.check(result, KERNEL.reference(zero, {}))
    flat = np.full((1, SIDE, SIDE, 3), 7, dtype=np.uint8)
    result = run_in_memory(KERNEL, flat, {}, 1)
    assert result[0, :, 0, 0] == pytest.approx([7 * SIDE * SIDE] * 3)
    KERNEL.check(result, KERNEL.reference(flat, {}))
    none = run_in_memory(KERNEL, zero[:0], {}, 4)
    assert none.shape == (0, 3, SIDE, SIDE)


def test_check_rejects_corrupted_results(photos):
    good = run_in_memory(KERNEL, photos, {}, 3)
    expected = KERNEL.reference(photos, {})
    KERNEL.check(good, expected)
    one_bin = good.copy()
    one_bin[1, 0, 17, 40] += 1e-4 * np.sqrt((np.abs(expected[1, 0]) ** 2).sum())
    corrupted = [
        one_bin,
        good[:, ::-1].copy(),
        good.transpose(0, 1, 3, 2).copy(),
        np.conjugate(good),
        good[:2],
        np.where(np.arange(SIDE) == 5, np.nan, good),  # NaN: its error compares as False
        np.full_like(good, np.nan),
    ]
    for bad in corrupted:
        with pytest.raises(KernelMismatchError):
            KERNEL.check(bad, expected)


def test_reduction_ratio(images):
    """u8 in, complex64 out: 8 times more bytes leave the device, α = 1/8 exactly (the
    rows' order says where they belong); the paper prints 8, the same factor the other way
    round."""
    data = images[0]
    partial = KERNEL.device(data, {}, 0)
    assert isinstance(partial[0], Spectra)
    assert KERNEL.output_bytes(partial) == 8 * data.nbytes
    assert data.nbytes / KERNEL.output_bytes(partial) == 1 / 8


def test_an_empty_shards_piece_merged_in_any_order(images):
    """An empty shard sends an empty piece at the offset of the next shard's first image;
    merged after that shard's piece (merging is commutative), it was taken for a gap:
    "fft2d: images 5..2 are missing"."""
    data = images[0]
    state = KERNEL.init({})
    head, empty, tail = (
        KERNEL.device(data[:2], state, 0),
        KERNEL.device(data[2:2], state, 2),
        KERNEL.device(data[2:], state, 2),
    )
    expected = KERNEL.reference(data, {})
    for order in ([head, empty, tail], [tail, empty, head], [head, tail, empty]):
        result, done = KERNEL.host(KERNEL.merge(order), state)
        assert done
        KERNEL.check(result, expected)
    whole, nothing = KERNEL.device(data, state, 0), KERNEL.device(data[:0], state, 0)
    result, _ = KERNEL.host(KERNEL.merge([whole, nothing]), state)
    KERNEL.check(result, expected)
