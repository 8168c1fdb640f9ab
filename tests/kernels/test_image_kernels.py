"""HE, binarisation and Sobel against their numpy/scipy/scikit-image references."""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from skimage import data as samples
from skimage import exposure, filters

from ndpkit.errors import NdpkitError, SpecError
from ndpkit.kernels import Kernel, KernelMismatchError, get_kernel, run_in_memory
from ndpkit.kernels.binarize import Binarize, BinaryImages, otsu_thresholds, unpack
from ndpkit.kernels.he import apply_luts
from ndpkit.kernels.images import histograms, load_image, load_images
from ndpkit.kernels.sobel import sobel_magnitude

N_IMAGES = 5
KERNELS: dict[str, Kernel] = {
    "he": get_kernel("he"),
    "he-remap": get_kernel("he-remap"),
    "binarize": get_kernel("binarize"),
    "binarize-otsu": Binarize("otsu"),
    "sobel": get_kernel("sobel"),
}
SAMPLES = {name: getattr(samples, name)() for name in ("camera", "coins", "moon", "page", "text")}
RATIO = {"he": 32, "he-remap": 1, "binarize": 8, "binarize-otsu": 65536 / 8193, "sobel": 1}


def _data(kernel: Kernel, seed: int, n_images: int = N_IMAGES) -> np.ndarray:
    return kernel.generate(n_images * kernel.record_bytes, seed)


def _run(kernel: Kernel, data: np.ndarray, chunk: int) -> Any:
    params = kernel.params(0)
    result = run_in_memory(kernel, data, params, chunk)
    kernel.check(result, kernel.reference(data, params))
    return result


def _crop(image: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Top-left crop, edge-padded where the sample is smaller than a record."""
    height, width = shape
    padded = np.pad(
        image, ((0, max(0, height - image.shape[0])), (0, max(0, width - image.shape[1]))), "edge"
    )
    return padded[:height, :width]


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("chunk", [1, 2, N_IMAGES, N_IMAGES + 3])
def test_generated_images_match_the_reference(name: str, seed: int, chunk: int) -> None:
    kernel = KERNELS[name]
    data = _data(kernel, seed)
    assert data.shape == (N_IMAGES, 256, 256) and data.dtype == np.uint8
    _run(kernel, data, chunk)


@pytest.mark.parametrize("name", KERNELS)
def test_empty_data_gives_an_empty_result(name: str) -> None:
    kernel = KERNELS[name]
    result = _run(kernel, _data(kernel, 0, 0), 3)
    first = result.bits if isinstance(result, BinaryImages) else result
    assert len(first) == 0


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("sample", SAMPLES)
def test_real_images_of_any_size_match_the_reference(name: str, sample: str) -> None:
    _run(KERNELS[name], SAMPLES[sample][None], 1)


@pytest.mark.parametrize("name", KERNELS)
def test_real_images_cropped_to_records_match_the_reference(name: str) -> None:
    kernel = KERNELS[name]
    batch = np.stack([_crop(image, kernel.record_shape) for image in SAMPLES.values()])
    _run(kernel, batch, 2)


@pytest.mark.parametrize("name", KERNELS)
def test_merge_is_associative_and_commutative(name: str) -> None:
    kernel = KERNELS[name]
    data, state = _data(kernel, 3, 7), kernel.init(kernel.params(3))
    parts = [kernel.device(data[i : i + 2], state, i) for i in range(0, len(data), 2)]
    parts.append(kernel.device(data[7:], state, 7))  # an empty tail chunk
    whole = kernel.merge(parts)
    grouped = kernel.merge([kernel.merge(parts[:1]), kernel.merge(parts[1:3]), parts[3], parts[4]])
    shuffled = parts[:]
    random.Random(1).shuffle(shuffled)
    for other in (grouped, kernel.merge(shuffled)):
        assert sorted(other) == sorted(whole)
        for offset, arrays in whole.items():
            assert all(np.array_equal(a, b) for a, b in zip(arrays, other[offset], strict=True))
    kernel.check(kernel.host(grouped, state)[0], kernel.reference(data, kernel.params(3)))


@pytest.mark.parametrize("name", KERNELS)
def test_generator_is_deterministic_by_seed(name: str) -> None:
    kernel = KERNELS[name]
    assert np.array_equal(_data(kernel, 4), _data(kernel, 4))
    assert not np.array_equal(_data(kernel, 4), _data(kernel, 5))


@pytest.mark.parametrize("name", KERNELS)
def test_check_rejects_a_corrupted_result(name: str) -> None:
    kernel = KERNELS[name]
    data = _data(kernel, 6)
    params = kernel.params(6)
    result = run_in_memory(kernel, data, params, 2)
    expected = kernel.reference(data, params)
    if isinstance(result, BinaryImages):
        bits = result.bits.copy()
        bits[2, 100] ^= 0b100
        corrupted: Any = BinaryImages(bits, result.thresholds)
        shorter: Any = BinaryImages(result.bits[:-1], result.thresholds[:-1])
    else:
        corrupted = result.copy()
        corrupted[(2, 100, 7)[: corrupted.ndim]] ^= 1
        shorter = result[:-1]
    with pytest.raises(KernelMismatchError, match="differ"):
        kernel.check(corrupted, expected)
    with pytest.raises(KernelMismatchError, match="expected"):
        kernel.check(shorter, expected)


@pytest.mark.parametrize("name", KERNELS)
def test_output_bytes_gives_the_reduction_ratio(name: str) -> None:
    kernel = KERNELS[name]
    data = _data(kernel, 0)
    partial = kernel.device(data, kernel.init(kernel.params(0)), 0)
    assert data.nbytes / kernel.output_bytes(partial) == pytest.approx(RATIO[name])


@pytest.mark.parametrize("name", KERNELS)
def test_device_rejects_colour_or_wide_pixels(name: str) -> None:
    kernel = KERNELS[name]
    with pytest.raises(NdpkitError, match="8-bit grayscale"):
        kernel.device(np.zeros((2, 4, 4, 3), np.uint8), kernel.init(kernel.params(0)), 0)
    with pytest.raises(NdpkitError, match="8-bit grayscale"):
        kernel.device(np.zeros((2, 4, 4), np.uint16), kernel.init(kernel.params(0)), 0)


# --- HE -------------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES)
def test_he_agrees_with_scikit_image_after_its_cdf_min_shift(sample: str) -> None:
    """skimage maps v to cdf[v]/N; undoing the cdf_min shift leaves ≤ 1 grey level apart."""
    image = SAMPLES[sample]
    luts = _run(KERNELS["he"], image[None], 1)
    ours = apply_luts(image[None], luts)[0].astype(np.int16)
    theirs = exposure.equalize_hist(image, nbins=256)
    lowest = theirs.min()
    rescaled = np.floor(255 * (theirs - lowest) / (1 - lowest) + 0.5).astype(np.int16)
    assert np.abs(ours - rescaled).max() <= 1


def test_he_stretches_a_low_contrast_image_to_the_full_range() -> None:
    kernel = KERNELS["he"]
    data = _data(kernel, 8, 2)
    luts = _run(kernel, data, 1)
    equalised = apply_luts(data, luts)
    assert equalised.shape == data.shape
    for before, after in zip(data, equalised, strict=True):
        assert int(before.max()) - int(before.min()) < 128
        assert after.min() == 0 and after.max() == 255


@pytest.mark.parametrize("seed", [0, 1])
def test_he_remap_split_equals_the_lut_split_applied(seed: int) -> None:
    """The papers' split (device remaps, α = 1) gives the default split's LUTs applied."""
    data = _data(KERNELS["he"], seed, 6)
    luts = _run(KERNELS["he"], data, 4)
    equalised = _run(KERNELS["he-remap"], data, 4)
    assert equalised.shape == data.shape and equalised.dtype == np.uint8
    assert np.array_equal(
        equalised, np.take_along_axis(luts, data.reshape(6, -1), 1).reshape(data.shape)
    )


def test_he_leaves_a_constant_image_alone() -> None:
    image = np.full((1, 3, 5), 77, np.uint8)
    luts = _run(KERNELS["he"], image, 1)
    assert np.array_equal(apply_luts(image, luts), image)


@pytest.mark.parametrize("level", [0, 5, 255])
@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (7, 1), (4, 4)], ids=str)
def test_he_one_grey_level_is_kept_where_scikit_image_makes_it_white(
    level: int, shape: tuple[int, int]
) -> None:
    """The difference from scikit-image that docs/kernels.md states: a constant image (a
    1×1 one, all 0, all 255) keeps its levels here; `equalize_hist` maps it to 1.0."""
    image = np.full(shape, level, np.uint8)
    for name in ("he", "he-remap"):
        result = _run(KERNELS[name], image[None], 1)
        equalised = apply_luts(image[None], result) if name == "he" else result
        assert np.array_equal(equalised[0], image)
    assert np.all(exposure.equalize_hist(image, nbins=256) == 1.0)


def test_he_two_grey_levels_go_to_0_and_255_after_scikit_images_shift_is_undone() -> None:
    """Two levels, the bright one rare: this LUT sends them to 0 and 255; scikit-image maps
    the dark one to cdf/N (63/64 here), and equals this LUT only once that shift is undone."""
    image = np.full((8, 8), 10, np.uint8)
    image[3, 5] = 200
    luts = _run(KERNELS["he"], image[None], 1)
    ours = apply_luts(image[None], luts)[0]
    assert set(np.unique(ours).tolist()) == {0, 255}
    theirs = exposure.equalize_hist(image, nbins=256)
    lowest = theirs.min()
    assert lowest == np.count_nonzero(image == 10) / image.size
    undone = np.floor(255 * (theirs - lowest) / (1 - lowest) + 0.5)
    assert np.array_equal(ours, undone)


# --- binarisation ---------------------------------------------------------------------------


def test_otsu_thresholds_equal_scikit_image_on_awkward_histograms() -> None:
    rng = np.random.default_rng(9)
    images = [
        np.full((4, 4), 200, np.uint8),
        np.array([[0, 255]], np.uint8),
        rng.choice(np.array([3, 90, 91, 250], np.uint8), (9, 11)),
        np.clip(rng.normal(128, 0.7, (31, 17)), 0, 255).astype(np.uint8),
        *SAMPLES.values(),
    ]
    for image in images:
        found = otsu_thresholds(histograms(np.ascontiguousarray(image[None])))[0]
        assert found == filters.threshold_otsu(image)


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (13, 7), (8, 8)])
@pytest.mark.parametrize("threshold", [0, 127, 254, "otsu"])
def test_binarize_any_image_size_and_unpack(shape: tuple[int, int], threshold: Any) -> None:
    kernel = Binarize(threshold)
    data = np.random.default_rng(10).integers(0, 256, (5, *shape), dtype=np.uint8)
    result = _run(kernel, data, 2)
    assert result.bits.shape == (5, -(-shape[0] * shape[1] // 8))
    assert np.array_equal(unpack(result, shape), data > result.thresholds[:, None, None])


@pytest.mark.parametrize("shape", [(6, 7), (5, 6), (35,), (-5, -7)], ids=str)
def test_unpack_refuses_a_shape_the_bits_do_not_hold(shape: tuple[int, ...]) -> None:
    """(5, 7) images pack into 5 bytes each: unpacked as (6, 7) they got 7 made-up dark
    pixels, as (5, 6) they lost 5, without a word."""
    data = np.random.default_rng(3).integers(0, 256, (3, 5, 7), dtype=np.uint8)
    result = _run(Binarize(127), data, 2)
    with pytest.raises(NdpkitError, match=r"packed bytes each|an image shape \(height, width\)"):
        unpack(result, shape)  # type: ignore[arg-type]
    assert np.array_equal(unpack(result, (5, 7)), data > 127)


def test_binarize_rejects_a_threshold_outside_the_byte_range() -> None:
    for bad in (256, -1, "mean", True):
        message = f"binarize threshold must be 0..255 or 'otsu', got {bad!r}"
        with pytest.raises(NdpkitError, match=f"^{re.escape(message)}$"):
            Binarize(bad)


# --- Sobel ----------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES)
def test_sobel_agrees_with_scikit_image_to_one_grey_level(sample: str) -> None:
    image = SAMPLES[sample]
    ours = _run(KERNELS["sobel"], image[None], 1)[0].astype(np.int16)
    theirs = np.floor(255 * filters.sobel(image) + 0.5).astype(np.int16)
    assert np.abs(ours - theirs).max() <= 1


@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1), (2, 3), (37, 300)])
def test_sobel_any_image_size(shape: tuple[int, int]) -> None:
    data = np.random.default_rng(11).integers(0, 256, (3, *shape), dtype=np.uint8)
    assert _run(KERNELS["sobel"], data, 2).shape == data.shape


@pytest.mark.parametrize(("count", "shape"), [(700, (10, 10)), (2, (300, 700))])
def test_sobel_across_batches_and_spans(count: int, shape: tuple[int, int]) -> None:
    """Many small images fill several padded batches; a large image needs several spans."""
    data = np.random.default_rng(13).integers(0, 256, (count, *shape), dtype=np.uint8)
    _run(KERNELS["sobel"], data, count)


def test_sobel_extremes_map_to_0_and_202() -> None:
    """A flat image has no edges; a diagonal step (gx = 1020, gy = 510) is the strongest edge
    8-bit pixels can make, and round(sqrt((1020² + 510²) / 32)) = 202."""
    assert not sobel_magnitude(np.full((1, 6, 6), 200, np.uint8)).any()
    step = np.zeros((1, 5, 5), np.uint8)
    step[0, 1:4, 3] = step[0, 3, 2] = 255
    assert sobel_magnitude(step)[0, 2, 2] == 202
    noise = np.random.default_rng(12).integers(0, 2, (4, 64, 64), dtype=np.uint8) * 255
    assert sobel_magnitude(noise).max() == 202


# --- loading real images --------------------------------------------------------------------


def test_load_images_reads_png_and_jpeg_as_8_bit_grayscale(tmp_path: Path) -> None:
    camera = SAMPLES["camera"][:64, :80]
    Image.fromarray(camera).save(tmp_path / "gray.png")
    Image.fromarray(np.stack([camera] * 3, axis=-1)).save(tmp_path / "rgb.png")
    Image.fromarray(camera).save(tmp_path / "gray.jpg", quality=95)
    gray, rgb, jpeg = load_images(
        [tmp_path / "gray.png", tmp_path / "rgb.png", tmp_path / "gray.jpg"]
    )
    assert gray.dtype == np.uint8 and np.array_equal(gray, camera)
    assert np.abs(rgb.astype(int) - camera).max() <= 1
    assert jpeg.shape == camera.shape and np.abs(jpeg.astype(int) - camera).mean() < 4


def test_load_image_names_the_file_it_cannot_read(tmp_path: Path) -> None:
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not an image")
    with pytest.raises(NdpkitError, match=r"junk\.png: cannot read"):
        load_image(junk)
    with pytest.raises(NdpkitError, match=r"missing\.png"):
        load_image(tmp_path / "missing.png")
    Image.fromarray(np.zeros((4, 4), np.uint16) + 1000).save(tmp_path / "deep.png")
    with pytest.raises(NdpkitError, match=r"deep\.png: .*more than 8 bits"):
        load_image(tmp_path / "deep.png")


def test_load_image_reads_a_palette_png_with_a_transparent_colour(tmp_path: Path) -> None:
    """Pillow says "Palette images with Transparency expressed in bytes should be converted
    to RGBA images" as it converts one: where warnings are errors (as here), the file was not
    read but a bare UserWarning. It is read as `data import` reads it, alpha left out."""
    rgba = np.random.default_rng(3).integers(0, 256, (6, 9, 4), dtype=np.uint8)
    Image.fromarray(rgba).convert("P").save(tmp_path / "palette.png")
    with Image.open(tmp_path / "palette.png") as image:
        assert "transparency" in image.info  # the case pillow remarks on
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = np.asarray(image.convert("L"))
    assert np.array_equal(load_image(tmp_path / "palette.png"), expected)


def test_load_image_names_the_file_pillow_warns_is_a_decompression_bomb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where warnings are errors, pillow's DecompressionBombWarning (which names no file)
    came out of load_image bare."""
    Image.fromarray(np.zeros((4, 4), np.uint8)).save(tmp_path / "large.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10)  # 16 pixels: above it, not twice
    with pytest.raises(NdpkitError, match=r"large\.png: cannot read as an image \(Image size"):
        load_image(tmp_path / "large.png")


@pytest.mark.parametrize("path", [None, 3, ["x.png"]], ids=repr)
def test_load_image_of_no_path_names_the_argument(path: Any) -> None:
    """None was "'NoneType' object has no attribute 'read'"."""
    with pytest.raises(SpecError, match=r"path: must be a path \(a str or os.PathLike\), got"):
        load_image(path)


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("shape", [(2, 0, 5), (1, 0, 0)])
def test_images_without_pixels_match_their_reference(name: str, shape: tuple[int, ...]) -> None:
    kernel = KERNELS[name]
    params = kernel.params(0)
    images = np.zeros(shape, np.uint8)
    kernel.check(run_in_memory(kernel, images, params, 1), kernel.reference(images, params))
