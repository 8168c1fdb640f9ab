"""Arguments of the public Python API that once gave a wrong answer, or an error from deep
inside numpy or the binding, instead of a clear error naming the argument."""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import NdpkitError, SpecError
from ndpkit.kernels import Kernel, get_kernel, run_in_memory
from ndpkit.kernels.he import apply_luts
from ndpkit.kernels.images import histograms, load_images, pack_above, remap
from ndpkit.kernels.kmeans import KMeansKernel, assign_labels
from ndpkit.kernels.knn import Knn, distances_sq
from ndpkit.runtime import LocalExecutor, generate_dataset
from ndpkit.runtime.profiling import measure

POINTS = 1 << 14  # bytes of generated points


def _kmeans() -> tuple[Any, np.ndarray, dict[str, Any]]:
    kernel = get_kernel("kmeans")
    return kernel, kernel.generate(POINTS, 0), kernel.params(0)


@pytest.mark.parametrize("chunk", [-1, 0, 2.5, True])
def test_a_chunk_of_no_whole_records_is_refused(chunk: Any) -> None:
    """A negative chunk once processed no record: K-Means reported its initial centres as
    converged with zero counts, k-NN no neighbours."""
    kernel, data, params = _kmeans()
    with pytest.raises(SpecError, match="chunk_records: must be a whole number of records ≥ 1"):
        run_in_memory(kernel, data, params, chunk)
    with pytest.raises(
        SpecError, match=rf"^chunk_records: must be a whole number of records ≥ 1, got {chunk}"
    ):
        measure(kernel, data, params, chunk_records=chunk, counters=None, repeat=1)


@pytest.mark.parametrize(
    "bounds", [[0, 100, 90, None], [0, 100], [5, None], [0], [0, None, None, 7]], ids=str
)
def test_shard_bounds_that_skip_or_repeat_records_are_refused(bounds: list[Any]) -> None:
    kernel, data, params = _kmeans()
    n = len(data)
    given = [n if b is None else b for b in bounds]
    with pytest.raises(SpecError, match=rf"shard_bounds: must rise from 0 to len\(data\) = {n}"):
        run_in_memory(kernel, data, params, 100, shard_bounds=given)


def test_shard_bounds_may_hold_an_empty_shard() -> None:
    kernel, data, params = _kmeans()
    n = len(data)
    whole = run_in_memory(kernel, data, params, 100)
    split = run_in_memory(kernel, data, params, 100, shard_bounds=[0, 40, 40, n])
    assert split.counts.sum() == whole.counts.sum() == n


def test_a_scalar_is_no_data() -> None:
    kernel = get_kernel("lc")
    with pytest.raises(SpecError, match="data: must be an array of records"):
        run_in_memory(kernel, np.float32(1), kernel.params(0), 10)


@pytest.mark.parametrize(
    ("app", "shape", "axes"),
    [
        ("sobel", (256, 256), r"\(n, 256, 256\)"),
        ("fft2d", (256, 256, 3), r"\(n, 256, 256, 3\)"),
        ("lc", (8,), r"\(n, 8\)"),
        ("he", (2, 1, 256, 256), r"\(n, 256, 256\)"),
    ],
)
def test_run_in_memory_names_the_array_given_with_the_wrong_axes(
    app: str, shape: tuple[int, ...], axes: str
) -> None:
    """One image without `[None]` was cut into one-row chunks, and the kernel then named a
    (1, 256) chunk, not the array given (found by following the docs)."""
    kernel = get_kernel(app)
    data = np.zeros(shape, kernel.dtype)
    given = re.escape(str(shape))
    with pytest.raises(NdpkitError, match=rf"{app}: data of shape {given} .*need .*{axes}") as e:
        run_in_memory(kernel, data, kernel.params(0), 10)
    # `[None]` is suggested only where it helps: one record given alone.
    assert ("data[None]" in str(e.value)) == (len(shape) == len(kernel.record_shape))


@pytest.mark.parametrize(
    ("app", "shape", "want"),
    [
        ("knn2", (5, 3), r"\(n, 2\)"),
        ("knn8-topk", (9, 6), r"\(n, 8\)"),
        ("lc", (5, 3), r"\(n, 8\)"),
        ("kmeans", (20, 3), r"\(n, 8\)"),
        ("fft2d", (3, 128, 128, 3), r"\(n, 256, 256, 3\)"),
    ],
)
def test_run_in_memory_names_the_array_given_with_records_of_another_shape(
    app: str, shape: tuple[int, ...], want: str
) -> None:
    """The kernel's own check named the first chunk: (5, 3) points for knn2 in chunks of 2
    were 'data of shape (2, 3)', (3, 128, 128, 3) images 'data of shape (1, 128, 128, 3)'."""
    kernel = get_kernel(app)
    data = np.zeros(shape, kernel.dtype)
    given = re.escape(str(shape))
    with pytest.raises(NdpkitError, match=rf"{app}: data of shape {given} .*need .*{want}"):
        run_in_memory(kernel, data, kernel.params(0), 1)


@pytest.mark.parametrize("app", ["he", "he-remap", "sobel", "binarize"])
def test_grey_image_kernels_still_take_images_of_any_size(app: str) -> None:
    """Images of 3 x 5 pixels, not the generated 256 x 256, are taken and give the kernel's
    reference answer (np.histogram LUTs, scipy's Sobel, scikit-image's Otsu): the test only
    ran them, so any answer, or none, passed."""
    kernel = get_kernel(app)
    images = np.random.default_rng(3).integers(0, 256, (2, 3, 5), dtype=np.uint8)
    params = kernel.params(0)
    result = run_in_memory(kernel, images, params, 1)
    kernel.check(result, kernel.reference(images, params))
    # the reference really is of these images: all zeros would pass a constant kernel
    if app in ("he-remap", "sobel"):
        assert np.asarray(result).shape == images.shape and np.asarray(result).any()


def test_a_kernel_of_scalar_records_takes_an_array_of_any_shape() -> None:
    """A user's kernel that does not declare `record_shape` (the default, `()`) sums rows of
    (100, 4) as before: a review found the axis check refusing it."""

    class RowTotals(Kernel):
        name = "rowtotals"

        def generate(self, size_bytes: int, seed: int) -> np.ndarray:
            return np.ones((max(1, size_bytes // 16), 4), np.float32)

        def device(self, chunk: np.ndarray, state: Any, offset: int) -> Any:
            return float(chunk.sum())

        def merge(self, partials: list[Any]) -> Any:
            return sum(partials)

        def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
            return merged, True

        def reference(self, data: np.ndarray, params: dict[str, Any]) -> Any:
            return float(data.sum())

        def check(self, result: Any, expected: Any) -> None:
            assert result == expected

    kernel = RowTotals()
    assert run_in_memory(kernel, np.ones((100, 4), np.float32), {}, 7) == 400.0


@pytest.mark.parametrize("app", ["knn2", "knn2-topk"])
def test_knn_refuses_points_float32_cannot_hold(app: str) -> None:
    """float64 points 0.01 apart at 1e6 were rounded together: all three at distance 0."""
    kernel = get_kernel(app)
    near = [[1e6 + 0.03, 0], [1e6 + 0.01, 0], [1e6 + 0.02, 0]]
    points = np.array(near + [[1e6 + 100 + i, 0] for i in range(20)])
    params = {"query": np.array([1e6, 0], np.float32), "k": kernel.params(0)["k"]}
    with pytest.raises(NdpkitError, match="points of dtype float64 do not fit float32 exactly"):
        run_in_memory(kernel, points, params, 1000)
    with pytest.raises(NdpkitError, match="int64"):
        run_in_memory(kernel, points.astype(np.int64), params, 1000)


def test_knn_takes_points_float32_holds_exactly() -> None:
    kernel = get_kernel("knn2")
    points = np.random.default_rng(1).integers(-1000, 1000, (500, 2), dtype=np.int16)
    params = kernel.params(3)
    as_int = run_in_memory(kernel, points, params, 100)
    as_float = run_in_memory(kernel, points.astype(np.float32), params, 100)
    np.testing.assert_array_equal(as_int.indices, as_float.indices)
    kernel.check(as_int, kernel.reference(points, params))


def test_assign_labels_checks_the_centres_width() -> None:
    """(100, 8) points against 5-feature centres were read as 160 points."""
    with pytest.raises(NdpkitError, match="points have 8 features, the centres 5"):
        assign_labels(np.random.default_rng(0).random((100, 8)), np.zeros((3, 5)))


@pytest.mark.parametrize(
    ("lut", "needle"),
    [
        (np.minimum(np.arange(256) * 2, 300)[None], "whole numbers from 0 to 255, got int64"),
        ((np.arange(256) * 0.999)[None], "got float64"),
        (np.arange(256) - 1, r"shape \(1, 256\), got \(256,\)"),
        (np.zeros((2, 256), np.uint8), r"shape \(1, 256\), got \(2, 256\)"),
    ],
    ids=["above 255", "float", "one-dimensional", "two for one image"],
)
def test_luts_are_not_cast_silently(lut: np.ndarray, needle: str) -> None:
    """300 was wrapped to 44, 199.8 cut to 199."""
    image = np.array([[[1, 200]]], np.uint8)
    with pytest.raises(NdpkitError, match=needle):
        apply_luts(image, lut)


def test_binarize_without_a_threshold_names_it() -> None:
    kernel = get_kernel("binarize")
    images = kernel.generate(1 << 16, 0)
    with pytest.raises(NdpkitError, match="binarize: params have no 'threshold'"):
        run_in_memory(kernel, images, {}, 4)
    with pytest.raises(NdpkitError, match="params have no 'threshold'"):
        kernel.reference(images, {})


@pytest.mark.parametrize("args", [{"clusters": 0}, {"features": 0}, {"max_iter": 0}], ids=str)
def test_kmeans_needs_at_least_one_of_each(args: dict[str, int]) -> None:
    (name,) = args
    with pytest.raises(SpecError, match=rf"{name}: must be a whole number ≥ 1 \(K-Means\)"):
        KMeansKernel(**args)


@pytest.mark.parametrize("args", [(0, 10), (2, 0), (2, 1.5)], ids=str)
def test_knn_needs_whole_features_and_k(args: tuple[Any, Any]) -> None:
    with pytest.raises(SpecError, match=r"must be a whole number ≥ 1 \(k-NN\)"):
        Knn(*args)


@pytest.mark.parametrize(
    "query", [[1e6 + 0.0624, 0.0], [0.1, 0.2], np.array([1 / 3, 0])], ids=["far", "tenths", "third"]
)
def test_knn_refuses_a_query_float32_cannot_hold(query: Any) -> None:
    """A float64 query was rounded to float32 without a word: with points 0.125 apart at
    1e6 the nearest came out second."""
    kernel = get_kernel("knn2")
    points = np.array([[1e6, 0.001], [1e6 + 0.125, 0]] + [[1e6 + 9, i] for i in range(20)])
    with pytest.raises(NdpkitError, match="is not exact in float32"):
        run_in_memory(kernel, points.astype(np.float32), {"query": query, "k": 10}, 100)
    with pytest.raises(NdpkitError, match="is not exact in float32"):
        kernel.reference(points.astype(np.float32), {"query": query, "k": 10})


@pytest.mark.parametrize(
    "query",
    [[0.5, 0.25], [1, 2], np.float32([0.1, 0.2]), np.array([0.5, 0.25], dtype=object)],
    ids=str,
)
def test_knn_takes_a_query_float32_holds(query: Any) -> None:
    kernel = get_kernel("knn2")
    points = kernel.generate(1 << 12, 0)
    params = {"query": query, "k": 10}
    kernel.check(run_in_memory(kernel, points, params, 100), kernel.reference(points, params))


@pytest.mark.parametrize("app", ["knn8", "kmeans", "fft2d", "lc", "he"])
def test_every_generator_refuses_a_negative_size_alike(app: str) -> None:
    with pytest.raises(NdpkitError, match="size_bytes must be ≥ 0, got -1"):
        get_kernel(app).generate(-1, 0)


@pytest.mark.parametrize("seed", [-1, 1.5, True, "0"], ids=repr)
@pytest.mark.parametrize("app", ["knn8", "knn2-topk", "kmeans", "fft2d", "lc", "he", "sobel"])
def test_every_generator_refuses_a_seed_that_is_no_whole_number_alike(app: str, seed: Any) -> None:
    """numpy's own errors named no argument (-1: 'expected non-negative integer', 1.5:
    'SeedSequence expects int…', K-Means' 'seed must be integer'), and True was seed 1."""
    kernel = get_kernel(app)
    with pytest.raises(SpecError, match=r"seed: must be a whole number ≥ 0, got"):
        kernel.generate(1 << 16, seed)
    if app in ("knn8", "knn2-topk", "kmeans", "lc"):  # the apps whose params are seeded
        with pytest.raises(SpecError, match=r"seed: must be a whole number ≥ 0, got"):
            kernel.params(seed)


def test_a_generators_seed_may_be_any_whole_number_type() -> None:
    kernel = get_kernel("knn2")
    same = [kernel.generate(64, seed) for seed in (3, np.int64(3), np.uint8(3))]
    assert all(np.array_equal(same[0], other) for other in same[1:])
    assert len(kernel.generate(64, 2**70)) == 8  # numpy takes seeds of any size


@pytest.mark.parametrize("app", ["knn8", "kmeans", "fft2d", "lc", "he"])
def test_every_generator_refuses_a_size_that_is_no_whole_number(app: str) -> None:
    """1000.5 became a float shape: a TypeError from numpy."""
    needle = r"size_bytes must be a whole number of bytes, got 1000\.5"
    with pytest.raises(NdpkitError, match=needle):
        get_kernel(app).generate(1000.5, 0)  # type: ignore[arg-type]


@pytest.mark.parametrize("app", ["knn8", "kmeans", "lc"])
def test_every_generator_gives_a_record_for_a_few_bytes(app: str) -> None:
    assert len(get_kernel(app).generate(5, 0)) == 1


def test_fft2d_refuses_images_that_are_not_8_bit() -> None:
    """A float image with a NaN came back as 65,536 NaN bins and no error."""
    kernel = get_kernel("fft2d")
    images = kernel.generate(1, 0).astype(np.float32)
    images[0, 0, 0, 0] = np.nan
    with pytest.raises(NdpkitError, match=r"fft2d: need 8-bit images \(uint8\), got float32"):
        run_in_memory(kernel, images, {}, 4)
    with pytest.raises(NdpkitError, match="need 8-bit images"):
        kernel.reference(images, {})


def test_one_image_is_not_taken_for_many() -> None:
    """A (h, w) image was counted as h one-row images."""
    with pytest.raises(NdpkitError, match=r"need images of shape \(n, height, width\)"):
        histograms(np.zeros((4, 5), np.uint8))
    assert histograms(np.zeros((1, 4, 5), np.uint8))[0, 0] == 20


def test_out_arrays_that_are_not_c_contiguous_are_refused() -> None:
    """A transposed out (Fortran order) was written in the wrong order without a word."""
    images = np.random.default_rng(0).integers(0, 256, (2, 4, 8), dtype=np.uint8)
    with pytest.raises(NdpkitError, match="histograms: out must be C-contiguous, aligned"):
        histograms(images, np.zeros((256, 2), np.uint64).T)
    with pytest.raises(NdpkitError, match="pack_above: out must be C-contiguous"):
        pack_above(images, np.array([1, 1]), np.zeros((4, 2), np.uint8).T)
    with pytest.raises(NdpkitError, match="remap: out must be C-contiguous"):
        remap(images, np.zeros((2, 256), np.uint8), np.zeros((8, 4, 2), np.uint8).T)
    frozen = np.zeros((2, 256), np.uint64)
    frozen.flags.writeable = False
    with pytest.raises(NdpkitError, match="writeable"):
        histograms(images, frozen)


def test_out_arrays_of_another_dtype_are_named() -> None:
    images = np.zeros((2, 4, 8), np.uint8)
    with pytest.raises(NdpkitError, match="histograms: out must be a uint64 array, got int64"):
        histograms(images, np.zeros((2, 256), np.int64))
    with pytest.raises(NdpkitError, match="pack_above: out must be a uint8 array"):
        pack_above(images, np.array([1, 1]), np.zeros((2, 4), np.int8))
    with pytest.raises(NdpkitError, match="remap: out must be a uint8 array"):
        remap(images, np.zeros((2, 256), np.uint8), np.zeros((2, 4, 8), np.float32))
    points = np.zeros((3, 2), np.float32)
    with pytest.raises(NdpkitError, match="distances_sq: out must be a float32 array"):
        distances_sq(points, np.zeros(2, np.float32), np.zeros(3, np.float64))  # type: ignore[arg-type]


def test_load_images_wants_a_list() -> None:
    with pytest.raises(SpecError, match=r"takes a list of paths, got one: .x\.png."):
        load_images("x.png")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "args",
    [{"devices": np.int64(2)}, {"shard_bytes": np.int64(1 << 15)}, {"seed": np.uint8(3)}],
    ids=str,
)
def test_generate_dataset_takes_numpy_integers(tmp_path: Path, args: dict[str, Any]) -> None:
    """They passed the check, then failed in the manifest after every shard was written."""
    given = {"devices": 2, **args}
    ds = generate_dataset("lc", np.int64(1 << 16), given.pop("devices"), tmp_path / "d", **given)
    assert ds.devices == int(args.get("devices", 2))
    assert isinstance(ds.manifest.devices, int)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"devices": 2.5}, "devices: must be a whole number ≥ 1, got 2.5"),
        ({"devices": True}, "devices: must be a whole number ≥ 1, got True"),
        ({"shard_bytes": 10.5}, "shard_bytes: must be a whole number of bytes ≥ 1"),
        ({"size_bytes": "1MiB"}, "size_bytes: must be a whole number of bytes, got '1MiB'"),
        ({"seed": 1.5}, "seed: must be a whole number ≥ 0, got 1.5"),
        ({"seed": -1}, "seed: must be a whole number ≥ 0, got -1"),
    ],
    ids=str,
)
def test_generate_dataset_checks_its_numbers_first(
    tmp_path: Path, args: dict[str, Any], needle: str
) -> None:
    """A float or bool failed in the manifest, after every shard was written."""
    given = {"size_bytes": 1 << 16, "devices": 2, **args}
    with pytest.raises(SpecError, match=needle):
        generate_dataset(
            "lc", given.pop("size_bytes"), given.pop("devices"), tmp_path / "d", **given
        )
    assert list(tmp_path.iterdir()) == []


def test_run_names_a_path_or_app_name_given_for_a_dataset_or_kernel(tmp_path: Path) -> None:
    ds = generate_dataset("lc", 1 << 16, 2, tmp_path / "d")
    executor = LocalExecutor(1)
    kernel = get_kernel("lc")
    with pytest.raises(SpecError, match=r"dataset: must be a Dataset \(open_dataset\(path\)"):
        executor.run(kernel, str(ds.path), kernel.params(0))  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=r"kernel: must be a Kernel \(get_kernel\(name\)"):
        executor.run("lc", ds, kernel.params(0))  # type: ignore[arg-type]


def test_lc_refuses_weights_or_bias_float32_cannot_hold() -> None:
    """A float64 bias of -0.1 was rounded to float32 on the device and in the reference
    alike, so a point whose float64 score is +1.5e-9 was labelled 0 and passed its check."""
    kernel = get_kernel("lc")
    points = np.zeros((4, 8), np.float32)
    points[:, 0] = np.float32(0.1)
    weights = [1.0] + [0.0] * 7
    with pytest.raises(NdpkitError, match=r"lc: bias -0.1 \(float64\) is not exact in float32"):
        run_in_memory(kernel, points, {"weights": weights, "bias": -0.1}, 10)
    with pytest.raises(NdpkitError, match=r"lc: weights .* is not exact in float32"):
        kernel.reference(points, {"weights": [0.1] * 8, "bias": 0})
    exact = {"weights": weights, "bias": -0.5}
    kernel.check(run_in_memory(kernel, points, exact, 10), kernel.reference(points, exact))


@pytest.mark.parametrize("make", [lambda: Knn(np.int64(3)), lambda: get_kernel("knn2")])
def test_a_kernel_built_with_numpy_integers_makes_a_data_set(tmp_path: Path, make: Any) -> None:
    """Knn(np.int64(3)) kept numpy integers in its record shape, which the manifest refused
    after every shard was written."""
    kernel = make()
    ds = generate_dataset(kernel, 1 << 16, 2, tmp_path / "d")
    assert ds.record_shape == tuple(int(n) for n in kernel.record_shape)


def test_a_kernel_named_like_an_app_must_read_its_records(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="kernel 'kmeans' reads float32 records of shape \\(4,\\)"):
        generate_dataset(KMeansKernel(features=4), 1 << 16, 2, tmp_path / "d")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "bias",
    [2**64 + 1, 10**30, Fraction(2**60 + 1, 2**60), Decimal("0.50000000000000000001")],
    ids=["int 2^64+1", "int 10^30", "fraction", "decimal"],
)
def test_python_numbers_float32_cannot_hold_are_refused_as_given(bias: Any) -> None:
    """They went through float64 first, which rounded them to something float32 holds."""
    kernel = get_kernel("lc")
    params = {"weights": [1.0] * 8, "bias": bias}
    with pytest.raises(NdpkitError, match=rf"lc: bias .* \({type(bias).__name__}\) is not exact"):
        kernel.init(params)


def test_python_numbers_float32_holds_are_taken() -> None:
    kernel = get_kernel("lc")
    state = kernel.init({"weights": [Decimal("0.5"), Fraction(1, 4)] + [0] * 6, "bias": 2**70})
    assert state["weights"][:2].tolist() == [0.5, 0.25] and state["bias"] == 2.0**70


def test_nan_given_as_an_object_is_held_exactly_as_a_float_nan_is() -> None:
    """[Decimal("0.5"), nan] was refused as "not exact", where [0.5, nan] is taken: the k-NN
    query then names the non-finite coordinate, as for floats."""
    kernel = get_kernel("knn2")
    points = kernel.generate(1 << 10, 0)
    for query in ([Decimal("0.5"), float("nan")], [0.5, float("nan")]):
        with pytest.raises(NdpkitError, match="non-finite coordinate"):
            run_in_memory(kernel, points, {"query": query, "k": 10}, 100)


@pytest.mark.parametrize(
    ("bias", "needle"),
    [("1", "must be numbers"), (2**1024, "beyond float32's range")],
    ids=["string", "huge int"],
)
def test_objects_that_are_no_float32_number_say_why(bias: Any, needle: str) -> None:
    kernel = get_kernel("lc")
    with pytest.raises(NdpkitError, match=needle):
        kernel.init({"weights": [Decimal(1)] + [0.0] * 7, "bias": [bias] if bias == "1" else bias})


@pytest.mark.parametrize(
    ("bias", "needle"),
    [
        (Decimal("sNaN"), "must be numbers"),
        (np.array([np.timedelta64(1, "s"), Decimal(1)], dtype=object), "must be numbers"),
        ([np.int64(2**62 + 1), 2**70], "is not exact in float32"),
        (Decimal("1e39"), "beyond float32's range"),
    ],
    ids=["signalling NaN", "timedelta", "numpy int in objects", "beyond float32"],
)
def test_odd_objects_get_a_clear_error(bias: Any, needle: str) -> None:
    from ndpkit.kernels.base import exact_float32  # noqa: PLC0415

    with pytest.raises(NdpkitError, match=needle):
        exact_float32(bias, "bias", "the device rounds it")


def test_a_numpy_bool_among_objects_is_a_number() -> None:
    from ndpkit.kernels.base import exact_float32  # noqa: PLC0415

    given = np.array([np.True_, Decimal(1), Decimal("-0")], dtype=object)
    assert exact_float32(given, "x", "y").tolist() == [1.0, 1.0, -0.0]


@pytest.mark.parametrize("bias", [[0.5], [0.5, 0.25], np.zeros((1, 1), np.float32)], ids=str)
def test_lc_bias_must_be_one_number(bias: Any) -> None:
    """[0.5] was a TypeError from numpy (only 0-dimensional arrays…), [0.5, 0.25] a
    ValueError (the truth value of an array… is ambiguous)."""
    kernel = get_kernel("lc")
    points = kernel.generate(1 << 10, 0)
    params = {"weights": kernel.params(0)["weights"], "bias": bias}
    with pytest.raises(NdpkitError, match=r"lc: bias must be one number, got an array of shape"):
        run_in_memory(kernel, points, params, 8)
    with pytest.raises(NdpkitError, match="lc: bias must be one number"):
        kernel.reference(points, params)


@pytest.mark.parametrize("tol_sq", [[0.5], "abc", "0.5", None, True], ids=repr)
def test_kmeans_tol_sq_must_be_one_number(tol_sq: Any) -> None:
    """A list or None was a TypeError from float(), "abc" a ValueError, and "0.5" was
    parsed as a number."""
    kernel, data, params = _kmeans()
    with pytest.raises(NdpkitError, match=r"kmeans: tol_sq must be one number ≥ 0, got"):
        run_in_memory(kernel, data, {**params, "tol_sq": tol_sq}, 100)


def test_kmeans_tol_sq_may_be_any_real_number() -> None:
    """Each zero is taken as the float 0.0 is: the same passes and centres, scikit-learn's
    (`converged` alone passed a zero read as a large tolerance, which stops after a pass)."""
    kernel, data, params = _kmeans()
    want = run_in_memory(kernel, data, {**params, "tol_sq": 0.0}, 100)
    kernel.check(want, kernel.reference(data, {**params, "tol_sq": 0.0}))
    assert want.converged and want.iterations > 1
    for tol_sq in (0, np.float32(0.0), np.int64(0), np.array(0.0), Fraction(0)):
        found = run_in_memory(kernel, data, {**params, "tol_sq": tol_sq}, 100)
        assert found.converged and found.iterations == want.iterations, repr(tol_sq)
        np.testing.assert_array_equal(found.centres, want.centres)


@pytest.mark.parametrize(
    "centres", ["abc", [["1"] * 8] * 8, [[None] * 8] * 8], ids=["letters", "digits", "None"]
)
def test_kmeans_initial_centres_must_be_numbers(centres: Any) -> None:
    """ "abc" was a ValueError from numpy, and strings of digits were parsed as centres."""
    kernel, data, params = _kmeans()
    with pytest.raises(NdpkitError, match=r"kmeans: init_centres must be numbers, got (<U|obj)"):
        run_in_memory(kernel, data, {**params, "init_centres": centres}, 100)


def test_kmeans_initial_centres_may_be_python_numbers() -> None:
    kernel, data, params = _kmeans()
    as_fractions = [[Fraction(float(v)) for v in row] for row in params["init_centres"]]
    found = run_in_memory(kernel, data, {**params, "init_centres": as_fractions}, 100)
    np.testing.assert_array_equal(found.centres, run_in_memory(kernel, data, params, 100).centres)


@pytest.mark.parametrize("k", ["10", np.array([10, 10]), True], ids=repr)
def test_knn_k_that_is_no_number_is_named_as_given(k: Any) -> None:
    """ "10" was refused as 'merges its partials for k = 10, not 10', which reads as equal;
    an array of ks was a ValueError from numpy."""
    kernel = get_kernel("knn2")
    points = kernel.generate(1 << 10, 0)
    params = {"query": kernel.params(0)["query"], "k": k}
    needle = f"knn2 merges its partials for k = 10, not {re.escape(repr(k))}"
    with pytest.raises(NdpkitError, match=needle):
        run_in_memory(kernel, points, params, 8)


def test_knn_k_equal_to_the_kernels_is_taken_in_any_numeric_type() -> None:
    kernel = get_kernel("knn2")
    points = kernel.generate(1 << 10, 0)
    for k in (10, np.int64(10), 10.0):
        found = run_in_memory(kernel, points, {"query": kernel.params(0)["query"], "k": k}, 8)
        assert len(found.indices) == 10


@pytest.mark.parametrize("threshold", [np.array([1, 2]), [100]], ids=str)
def test_binarize_threshold_that_is_an_array_is_refused_clearly(threshold: Any) -> None:
    """An array was compared elementwise with "otsu": a ValueError from numpy."""
    kernel = get_kernel("binarize")
    images = kernel.generate(1 << 16, 0)
    with pytest.raises(NdpkitError, match=r"binarize threshold must be 0\.\.255 or 'otsu', got"):
        run_in_memory(kernel, images, {"threshold": threshold}, 4)


@pytest.mark.parametrize("app", ["lc", "he", "sobel", "binarize", "knn2"])
def test_run_in_memory_given_a_list_says_what_it_needs(app: str) -> None:
    """A Python list ended in "'list' object has no attribute 'ndim'" from LC, HE, Sobel and
    Binarize; now it meets the kernel's own checks, as the array it makes does."""
    kernel = get_kernel(app)
    data = kernel.generate(4096, 0).tolist()  # Python ints and floats: int64 and float64
    params = kernel.params(0)
    with pytest.raises(NdpkitError) as given_list:
        run_in_memory(kernel, data, params, 64)
    with pytest.raises(NdpkitError) as given_array:
        run_in_memory(kernel, np.asarray(data), params, 64)
    assert str(given_list.value) == str(given_array.value)


def test_run_in_memory_given_rows_of_unequal_lengths_names_the_data() -> None:
    """A list whose rows differ in length ended in numpy's bare ValueError ("setting an
    array element with a sequence ... inhomogeneous shape"), naming no argument."""
    kernel = get_kernel("knn2")
    with pytest.raises(SpecError, match=r"^data: must be an array of records, rows of one"):
        run_in_memory(kernel, [[0.5, 0.25], [0.5]], kernel.params(0), 4)


def test_kmeans_still_takes_a_list() -> None:
    kernel = get_kernel("kmeans")
    data = kernel.generate(4096, 0)
    params = kernel.params(0)
    want = run_in_memory(kernel, data, params, 64)
    got = run_in_memory(kernel, data.tolist(), params, 64)
    np.testing.assert_array_equal(got.centres, want.centres)


@pytest.mark.parametrize("dtype", ["U12", "complex64", "O"])
def test_kmeans_refuses_points_that_are_no_real_numbers(dtype: Any) -> None:
    """Strings of digits were parsed as numbers (by the device and the reference alike),
    complex points lost their imaginary parts (a ComplexWarning, an exception where warnings
    are errors), and objects were cast as they came."""
    kernel = get_kernel("kmeans")
    data = kernel.generate(4096, 0).astype(dtype)
    params = kernel.params(0)
    needle = rf"kmeans: the (points|data|sample) must be real numbers .*, got {np.dtype(dtype)}"
    for call in (
        lambda: run_in_memory(kernel, data, params, 64),
        lambda: kernel.reference(data, params),
        lambda: kernel.params_for_data(data, 0),
        lambda: assign_labels(data, params["init_centres"]),
    ):
        with pytest.raises(NdpkitError, match=needle):
            call()


def test_kmeans_takes_integer_and_bool_points() -> None:
    kernel = KMeansKernel(features=2, clusters=2)
    params = {"init_centres": [[0, 0], [3, 3]], "max_iter": 10, "tol_sq": 0}
    for data in (np.array([[0, 0], [0, 1], [3, 3], [4, 3]], np.int16), np.eye(2, dtype=bool)):
        kernel.check(run_in_memory(kernel, data, params, 3), kernel.reference(data, params))


@pytest.mark.parametrize("params", [None, [("weights", 1)], "weights"], ids=repr)
def test_params_that_are_no_dict_are_named(params: Any) -> None:
    """None ended in "argument of type 'NoneType' is not iterable" inside the kernel's
    init (a list of pairs, or a string, in a KeyError or a TypeError of its own)."""
    kernel = get_kernel("lc")
    data = kernel.generate(POINTS, 0)
    needle = r"^params: must be a dict of the kernel's parameters \(get_kernel\('lc'\)"
    with pytest.raises(SpecError, match=needle):
        run_in_memory(kernel, data, params, 100)
    with pytest.raises(SpecError, match=needle):
        measure(kernel, data, params, counters=None, repeat=1)


def test_an_app_name_is_no_kernel() -> None:
    """run_in_memory("lc", …) ended in "'str' object has no attribute 'record_shape'", and
    measure's in "… 'record_bytes'", as `LocalExecutor.run` already said."""
    kernel = get_kernel("lc")
    data, params = kernel.generate(POINTS, 0), kernel.params(0)
    with pytest.raises(SpecError, match=r"^kernel: must be a Kernel \(get_kernel\(name\)"):
        run_in_memory("lc", data, params, 100)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=r"^kernel: must be a Kernel \(get_kernel\(name\)"):
        measure("lc", data, params, counters=None, repeat=1)  # type: ignore[arg-type]


def test_measure_takes_a_list_as_run_in_memory_does() -> None:
    """A list ended in "'list' object has no attribute 'nbytes'"; as an array it meets the
    kernel's own check of the dtype, as in run_in_memory."""
    lc = get_kernel("lc")
    with pytest.raises(NdpkitError, match="lc expects float32 points"):
        measure(lc, lc.generate(POINTS, 0).tolist(), lc.params(0), counters=None, repeat=1)


@pytest.mark.parametrize("field", ["progress", "counters"])
def test_measure_refuses_callbacks_that_are_not_functions(field: str) -> None:
    """progress=True and counters=5 were "… is not callable", after the first pass was
    timed for progress."""
    kernel = get_kernel("lc")
    data, params = kernel.generate(POINTS, 0), kernel.params(0)
    args: dict[str, Any] = {"counters": None, field: 5}
    with pytest.raises(SpecError, match=rf"^{field}: must be .*, or None; got 5"):
        measure(kernel, data, params, repeat=1, **args)


@pytest.mark.parametrize("name", [["lc"], {"lc": 1}, 3], ids=repr)
def test_get_kernel_of_no_name_is_an_unknown_app(name: Any) -> None:
    """["lc"] was "unhashable type: 'list'" from the lookup."""
    with pytest.raises(NdpkitError, match=r"^unknown app .*; known: lc, he"):
        get_kernel(name)


def test_a_data_set_given_for_the_records_is_named(tmp_path: Path) -> None:
    """run_in_memory and measure take the records in memory; a Dataset given in their place
    became a 0-d object array and was refused as "got a scalar", naming neither what was
    given nor how to read its records."""
    kernel = get_kernel("knn2")
    ds = generate_dataset(kernel, 4096, 2, tmp_path / "knn2")
    params = kernel.params(0)
    said = r"^data: must be an array of records, got Dataset: give its records, dataset\.read_all"
    with pytest.raises(SpecError, match=said):
        run_in_memory(kernel, ds, params, 64)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=said):
        measure(kernel, ds, params)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=r"^data: must be an array of records, got NoneType$"):
        run_in_memory(kernel, None, params, 64)  # type: ignore[arg-type]
    assert run_in_memory(kernel, ds.read_all(), params, 64).indices.size == params["k"]
