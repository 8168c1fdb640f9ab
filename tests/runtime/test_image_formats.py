"""Images beyond PNG and JPEG (TIFF, BMP, netpbm, WebP): imported as the same pixels a PNG
of them gives, and refused by the same rules (more than 8 bits per sample, several frames,
damaged files), each refusal naming the file with nothing written."""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import skimage.data
import skimage.io
import tifffile
from PIL import Image

from ndpkit.errors import NdpkitError, SpecError
from ndpkit.kernels.images import load_image
from ndpkit.runtime import import_dataset
from ndpkit.runtime.dataset import UnreadImagesWarning

SKIMAGE_DATA = Path(skimage.data.__file__).parent

# (file name, pillow's format, save options): every lossless way a user's file may come.
GREY_FILES = [
    ("x.tif", "TIFF", {}),
    ("x.TIF", "TIFF", {"compression": "tiff_lzw"}),
    ("x.Tif", "TIFF", {"compression": "packbits"}),
    ("x.tiff", "TIFF", {"compression": "tiff_deflate"}),
    ("x.bmp", "BMP", {}),
    ("x.pgm", "PPM", {}),
    ("x.PNM", "PPM", {}),
    ("x.webp", "WEBP", {"lossless": True}),  # stored as RGB: grey comes back exactly
]
RGB_FILES = [
    ("x.tif", "TIFF", {}),
    ("x.tiff", "TIFF", {"compression": "tiff_adobe_deflate"}),
    ("x.BMP", "BMP", {}),
    ("x.ppm", "PPM", {}),
    ("x.pnm", "PPM", {}),
    ("x.WebP", "WEBP", {"lossless": True}),
]


def _folder_of(tmp_path: Path, name: str, pixels: np.ndarray, fmt: str, **options: Any) -> Path:
    """A directory holding `pixels` as one file `name` in `fmt`."""
    folder = tmp_path / f"as-{name.replace('.', '-')}"
    folder.mkdir()
    Image.fromarray(pixels).save(folder / name, fmt, **options)
    return folder


def _imported(folder: Path, app: str, devices: int = 1) -> np.ndarray:
    out = folder.parent / f"{folder.name}-ds"
    return import_dataset(folder, devices, out, app).read_all()


def _tiles(pixels: np.ndarray) -> np.ndarray:
    """An image's 256×256 tiles by numpy slicing, in the documented order: row of tiles by
    row of tiles, each left to right."""
    height, width = pixels.shape[:2]
    return np.stack(
        [
            pixels[top : top + 256, left : left + 256]
            for top in range(0, height, 256)
            for left in range(0, width, 256)
        ]
    )


def _seeded(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(7).integers(0, 256, shape, dtype=np.uint8)


@pytest.mark.parametrize(("name", "fmt", "options"), GREY_FILES)
def test_a_grey_image_in_each_format_imports_as_its_png_does(
    tmp_path: Path, name: str, fmt: str, options: dict[str, Any]
) -> None:
    pixels = _seeded((512, 256))  # two sobel records, top then bottom
    records = _imported(_folder_of(tmp_path, name, pixels, fmt, **options), "sobel")
    as_png = _imported(_folder_of(tmp_path, "x.png", pixels, "PNG"), "sobel")
    assert np.array_equal(records, as_png)
    assert np.array_equal(records, _tiles(pixels))
    if options.get("compression") == "tiff_lzw":
        return  # skimage reads TIFF with tifffile, which needs imagecodecs for LZW
    read = skimage.io.imread(tmp_path / f"as-{name.replace('.', '-')}" / name)
    grey = read if read.ndim == 2 else read[..., 0]  # WebP holds grey as R = G = B
    assert np.array_equal(records, _tiles(grey))


@pytest.mark.parametrize(("name", "fmt", "options"), RGB_FILES)
def test_a_colour_image_in_each_format_imports_as_its_png_does(
    tmp_path: Path, name: str, fmt: str, options: dict[str, Any]
) -> None:
    pixels = _seeded((256, 512, 3))  # two fft2d records, left then right
    records = _imported(_folder_of(tmp_path, name, pixels, fmt, **options), "fft2d")
    assert np.array_equal(records, _imported(_folder_of(tmp_path, "x.png", pixels, "PNG"), "fft2d"))
    assert np.array_equal(records, _tiles(pixels))
    read = skimage.io.imread(tmp_path / f"as-{name.replace('.', '-')}" / name)
    assert np.array_equal(records, _tiles(read))


@pytest.mark.parametrize(("name", "fmt", "options"), RGB_FILES)
@pytest.mark.parametrize("app", ["he", "binarize"])
def test_a_colour_image_goes_to_grey_as_a_png_does(
    tmp_path: Path, name: str, fmt: str, options: dict[str, Any], app: str
) -> None:
    pixels = _seeded((256, 256, 3))
    records = _imported(_folder_of(tmp_path, name, pixels, fmt, **options), app)
    assert np.array_equal(records, _imported(_folder_of(tmp_path, "x.png", pixels, "PNG"), app))


@pytest.mark.parametrize(("name", "fmt", "options"), GREY_FILES)
def test_camera_in_each_format_gives_its_quarters(
    tmp_path: Path, name: str, fmt: str, options: dict[str, Any]
) -> None:
    camera = skimage.data.camera()
    records = _imported(_folder_of(tmp_path, name, camera, fmt, **options), "sobel", devices=2)
    assert np.array_equal(records, _tiles(camera))


@pytest.mark.parametrize(("name", "fmt", "options"), RGB_FILES)
def test_astronaut_in_each_format_gives_its_quarters(
    tmp_path: Path, name: str, fmt: str, options: dict[str, Any]
) -> None:
    astronaut = skimage.data.astronaut()
    records = _imported(_folder_of(tmp_path, name, astronaut, fmt, **options), "fft2d")
    assert np.array_equal(records, _tiles(astronaut))


@pytest.mark.parametrize(
    "options",
    [{"tile": (128, 128)}, {"tile": (64, 64), "compression": "zlib"}, {"bigtiff": True}],
)
@pytest.mark.parametrize(("app", "shape"), [("sobel", (512, 256)), ("fft2d", (256, 512, 3))])
def test_a_tiled_or_big_tiff_gives_its_pixels(
    tmp_path: Path, options: dict[str, Any], app: str, shape: tuple[int, ...]
) -> None:
    """As remote-sensing and microscopy software writes them (tifffile here, not pillow)."""
    pixels = _seeded(shape)
    folder = tmp_path / "imgs"
    folder.mkdir()
    tifffile.imwrite(folder / "scene.tif", pixels, **options)
    assert np.array_equal(_imported(folder, app), _tiles(pixels))


@pytest.mark.parametrize(
    ("name", "fmt", "options"),
    [
        ("x.pbm", "PPM", {}),
        ("x.bmp", "BMP", {}),
        ("x.tif", "TIFF", {}),
        ("x.tif", "TIFF", {"compression": "group4"}),
    ],
)
@pytest.mark.parametrize("app", ["he", "fft2d"])
def test_a_1_bit_image_is_read_as_a_1_bit_png_is(
    tmp_path: Path, name: str, fmt: str, options: dict[str, Any], app: str
) -> None:
    bits = Image.fromarray(_seeded((256, 256))).convert("1")  # dithered: both levels
    folder = tmp_path / "bits"
    folder.mkdir()
    bits.save(folder / name, fmt, **options)
    png = tmp_path / "png"
    png.mkdir()
    bits.save(png / "x.png")
    records = _imported(folder, app)
    assert np.array_equal(records, _imported(png, app))
    assert sorted(np.unique(records).tolist()) == [0, 255]


# -- refused: more than 8 bits per sample, several frames, damaged files ------------------


def _pgm(path: Path, magic: bytes, maxval: int, samples: np.ndarray) -> None:
    """A netpbm file by hand (pillow writes none of more than 8 bits but greyscale)."""
    height, width = samples.shape[:2]
    if magic in (b"P2", b"P3"):  # plain: decimal text
        body = " ".join(map(str, samples.reshape(-1).tolist())).encode() + b"\n"
    else:
        body = samples.astype(">u2" if maxval > 255 else "u1").tobytes()
    path.write_bytes(magic + f" {width} {height} {maxval}\n".encode() + body)


def _deep(seed: int, shape: tuple[int, ...], top: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, top + 1, shape).astype(np.uint16)


DEEP: list[tuple[str, str, Callable[[Path], None], str]] = [
    (
        "grey16.tif",
        "he",
        lambda p: Image.fromarray(_deep(1, (256, 256), 65535)).save(p),
        "an image of mode I;16 has more than 8 bits per pixel",
    ),
    (
        "grey16-deflate.tiff",
        "sobel",
        lambda p: Image.fromarray(_deep(1, (256, 256), 65535)).save(p, compression="tiff_deflate"),
        "an image of mode I;16 has more than 8 bits per pixel",
    ),
    (
        "float.tif",
        "he",
        lambda p: Image.fromarray(
            np.linspace(0, 1, 256 * 256, dtype=np.float32).reshape(256, 256)
        ).save(p),
        "an image of mode F has more than 8 bits per pixel",
    ),
    (
        "rgb16.tif",
        "fft2d",
        lambda p: tifffile.imwrite(p, _deep(2, (256, 256, 3), 65535), photometric="rgb"),
        "an image of raw mode RGB;16L has more than 8 bits per sample",
    ),
    (
        # Pillow decodes these planes as 8-bit ones (raw mode "R"): garbage, said nowhere.
        "planar16.tif",
        "fft2d",
        lambda p: tifffile.imwrite(
            p, _deep(3, (3, 256, 256), 65535), photometric="rgb", planarconfig="separate"
        ),
        "a TIFF of 16-bit samples has more than 8 bits per sample",
    ),
    (
        "signed.tif",
        "binarize",
        lambda p: tifffile.imwrite(p, (_deep(4, (256, 256), 255) - 128).astype(np.int8)),
        "a TIFF of signed 8-bit samples: pillow would read -1 as 255",
    ),
    (
        "deep.pgm",
        "he",
        lambda p: _pgm(p, b"P5", 65535, _deep(5, (256, 256), 65535)),
        "an image of mode I has more than 8 bits per pixel",
    ),
    (
        "tenbit.pgm",
        "sobel",
        lambda p: _pgm(p, b"P5", 1023, _deep(6, (256, 256), 1023)),
        "an image of mode I has more than 8 bits per pixel",
    ),
    (
        # Pillow opens these as 8-bit RGB and scales each sample down as it decodes.
        "deep.ppm",
        "fft2d",
        lambda p: _pgm(p, b"P6", 65535, _deep(7, (256, 256, 3), 65535)),
        "a netpbm image of maxval 65535 has more than 8 bits per sample",
    ),
    (
        "plain.pnm",
        "he",
        lambda p: _pgm(p, b"P3", 1000, _deep(8, (256, 256, 3), 1000)),
        "a netpbm image of maxval 1000 has more than 8 bits per sample",
    ),
]


@pytest.mark.parametrize(("name", "app", "write", "why"), DEEP, ids=[d[0] for d in DEEP])
def test_an_image_of_more_than_8_bits_is_refused_naming_it(
    tmp_path: Path, name: str, app: str, write: Callable[[Path], None], why: str
) -> None:
    folder = tmp_path / "imgs"
    folder.mkdir()
    write(folder / name)
    with pytest.raises(SpecError) as caught:
        import_dataset(folder, 1, tmp_path / "ds", app)
    assert str(caught.value).startswith(f"{folder / name}: {why}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]
    with pytest.raises(NdpkitError, match=f"^{folder / name}: {why}"):
        load_image(folder / name)  # the he loader's rule is the import's


@pytest.mark.parametrize("app", ["he", "fft2d"])
def test_a_cielab_tiff_is_refused_from_its_header(tmp_path: Path, app: str) -> None:
    """Pillow opens a CIELab TIFF as mode LAB: for grey apps the import failed only once the
    pixels were read ("conversion from LAB to RGB not supported"), and fft2d took the L, a
    and b bytes as R, G and B."""
    folder = tmp_path / "imgs"
    folder.mkdir()
    Image.fromarray(_seeded((256, 256, 3))).convert("LAB").save(folder / "lab.tif")
    with pytest.raises(SpecError) as caught:
        import_dataset(folder, 1, tmp_path / "ds", app)
    assert str(caught.value).startswith(
        f"{folder / 'lab.tif'}: an image in the CIELab colour space (mode LAB)"
    ), str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]
    with pytest.raises(NdpkitError, match="CIELab colour space"):
        load_image(folder / "lab.tif")


def _frames(seed: int, count: int) -> list[Image.Image]:
    """`count` different RGB frames (an encoder merges equal ones)."""
    return [Image.fromarray(_seeded((256, 256, 3)) ^ np.uint8(seed + i)) for i in range(count)]


@pytest.mark.parametrize(
    ("name", "save", "why"),
    [
        (
            "stack.tif",
            lambda p, f: f[0].save(p, save_all=True, append_images=f[1:]),
            "a multi-page TIFF of 3 pages",
        ),
        (
            "stack.tiff",
            lambda p, f: (
                f[0]
                .convert("L")
                .save(
                    p,
                    save_all=True,
                    append_images=[i.convert("L") for i in f[1:]],
                    compression="tiff_lzw",
                )
            ),
            "a multi-page TIFF of 3 pages",
        ),
        (
            "clip.webp",
            lambda p, f: f[0].save(p, save_all=True, append_images=f[1:], lossless=True),
            "an animated WebP of 3 frames",
        ),
    ],
)
def test_a_file_of_several_frames_is_refused_naming_it_and_its_count(
    tmp_path: Path, name: str, save: Callable[[Path, list[Image.Image]], None], why: str
) -> None:
    """Pillow opens the first page and says nothing of the others: a z-stack imported as
    its first slice. Which pages are images and which thumbnails or masks is the user's to
    say, so the file is refused, not guessed at."""
    folder = tmp_path / "imgs"
    folder.mkdir()
    save(folder / name, _frames(1, 3))
    with pytest.raises(SpecError) as caught:
        import_dataset(folder, 1, tmp_path / "ds", "he")
    assert str(caught.value) == (
        f"{folder / name}: {why}; each file is imported as one image: save each page or frame "
        "as a file of its own first"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]
    with pytest.raises(NdpkitError, match=why):
        load_image(folder / name)


def test_an_animated_png_still_gives_its_first_frame(tmp_path: Path) -> None:
    """The documented rule for PNG and JPEG, kept: an APNG's first frame is its default
    image, what a viewer without APNG shows."""
    folder = tmp_path / "imgs"
    folder.mkdir()
    frames = _frames(1, 2)
    frames[0].save(folder / "anim.png", save_all=True, append_images=frames[1:])
    with Image.open(folder / "anim.png") as image:
        assert image.n_frames == 2
    assert np.array_equal(_imported(folder, "fft2d"), np.asarray(frames[0])[None])


def _saved(image: Image.Image, fmt: str, **options: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def _half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _second_page_cut(data: bytes) -> bytes:
    """A two-page little-endian TIFF cut just after its second page's entry count: counting
    its pages, pillow met an IFD without dimensions and raised TypeError, a traceback."""
    (first,) = struct.unpack_from("<I", data, 4)
    (entries,) = struct.unpack_from("<H", data, first)
    (second,) = struct.unpack_from("<I", data, first + 2 + 12 * entries)
    return data[: second + 2]


GREY = Image.fromarray(_seeded((256, 256)))
DAMAGED = [
    ("cut.tif", _half(_saved(GREY, "TIFF")), "image file is truncated"),
    ("cut.tiff", _half(_saved(GREY, "TIFF", compression="tiff_deflate")), "cannot identify"),
    ("cut.bmp", _half(_saved(GREY, "BMP")), "image file is truncated"),
    ("cut.pgm", _half(_saved(GREY, "PPM")), "image file is truncated"),
    ("cut.ppm", _half(_saved(GREY.convert("RGB"), "PPM")), "image file is truncated"),
    ("cut.pbm", _half(_saved(GREY.convert("1"), "PPM")), "image file is truncated"),
    ("cut.webp", _half(_saved(GREY.convert("RGB"), "WEBP", lossless=True)), ""),
    ("cut.WEBP", _half(_saved(GREY.convert("RGB"), "WEBP", quality=80)), ""),
    (
        "page2.tif",
        _second_page_cut(_saved(GREY, "TIFF", save_all=True, append_images=[GREY])),
        "a page after the first is damaged (TypeError: Missing dimensions)",
    ),
]


@pytest.mark.parametrize(("name", "data", "why"), DAMAGED, ids=[d[0] for d in DAMAGED])
def test_a_damaged_file_is_refused_naming_it(
    tmp_path: Path, name: str, data: bytes, why: str
) -> None:
    folder = tmp_path / "imgs"
    folder.mkdir()
    (folder / name).write_bytes(data)
    with pytest.raises(SpecError) as caught:
        import_dataset(folder, 1, tmp_path / "ds", "he")
    assert str(caught.value).startswith(f"{folder / name}: not a readable image (")
    assert why in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]


# -- which files are images --------------------------------------------------------------


def test_every_suffix_in_any_case_is_an_image_and_hidden_files_are_not(tmp_path: Path) -> None:
    pixels = _seeded((8, 256, 256))
    folder = tmp_path / "imgs"
    folder.mkdir()
    names = ["a.TIF", "b.Tiff", "c.BMP", "d.PGM", "e.Ppm", "f.pnm", "g.PBM", "h.WEBP"]
    for name, grey in zip(names, pixels, strict=True):
        image = Image.fromarray(grey)
        if name.lower().endswith(".pbm"):
            image = image.convert("1")
        fmt = Image.registered_extensions()[Path(name).suffix.lower()]
        image.save(folder / name, fmt, **({"lossless": True} if fmt == "WEBP" else {}))
    (folder / "._a.tif").write_bytes(b"\x00\x05\x16\x07 AppleDouble")  # macOS's, no image
    (folder / "notes.txt").write_text("not an image")
    records = _imported(folder, "he")
    expected = pixels.copy()
    expected[6] = np.asarray(Image.fromarray(pixels[6]).convert("1").convert("L"))
    assert np.array_equal(records, expected)


def test_images_are_in_name_order_with_numbers_compared_as_numbers(tmp_path: Path) -> None:
    """frame_10 came before frame_2 (code-point order), unlike a Parquet table's parts."""
    pixels = _seeded((12, 256, 256))
    folder = tmp_path / "imgs"
    folder.mkdir()
    for i, grey in enumerate(pixels):
        Image.fromarray(grey).save(folder / f"frame_{i}.png")
    assert np.array_equal(_imported(folder, "he"), pixels)


def test_the_errors_that_list_image_suffixes_list_the_new_ones(tmp_path: Path) -> None:
    suffixes = ".png/.jpg/.jpeg/.tif/.tiff/.bmp/.pgm/.ppm/.pnm/.pbm/.webp"
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "scan.gif").write_bytes(b"GIF89a")
    with pytest.raises(SpecError, match=f"no {suffixes} images in the directory"):
        import_dataset(tmp_path / "empty", 1, tmp_path / "ds", "he")
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "scans.tiff").mkdir()
    with pytest.raises(SpecError) as caught:
        import_dataset(tmp_path / "imgs", 1, tmp_path / "ds", "he")
    assert str(caught.value) == (
        f"{tmp_path / 'imgs' / 'scans.tiff'}: not a regular file (a directory, FIFO, device or "
        f"socket?): the images of a directory are its {suffixes} files"
    )
    assert not (tmp_path / "ds").exists()


def test_one_tiff_points_to_its_directory(tmp_path: Path) -> None:
    GREY.save(tmp_path / "scan.TIFF")
    with pytest.raises(SpecError, match=r"scan\.TIFF: is one image; .* give the directory"):
        import_dataset(tmp_path / "scan.TIFF", 1, tmp_path / "ds", "he")


def test_the_he_loader_reads_the_new_formats(tmp_path: Path) -> None:
    camera = skimage.data.camera()
    for name, fmt, options in GREY_FILES:
        Image.fromarray(camera).save(tmp_path / name, fmt, **options)
        assert np.array_equal(load_image(tmp_path / name), camera), name


def test_images_of_other_formats_beside_the_imported_ones_are_named(tmp_path: Path) -> None:
    """A GIF and an icon beside a PNG were left out without a word: the data set was made
    without them. Now a warning names them; a README is no image and goes unsaid."""
    folder = tmp_path / "imgs"
    folder.mkdir()
    pixels = _seeded((256, 256))
    Image.fromarray(pixels).save(folder / "a.png")
    Image.fromarray(pixels).save(folder / "b.gif")
    Image.fromarray(pixels).save(folder / "c.ico")
    (folder / "README.txt").write_text("camera roll")
    (folder / ".d.gif").write_bytes((folder / "b.gif").read_bytes())  # hidden: left out
    with pytest.warns(UnreadImagesWarning) as caught:
        made = import_dataset(folder, 1, tmp_path / "ds", "he")
    np.testing.assert_array_equal(made.read_all(), pixels[None])
    (said,) = [str(w.message) for w in caught]
    assert said.startswith(f"{folder}: 2 files of other image formats are not read: b.gif, c.ico")
    assert "README" not in said and ".d.gif" not in said
    (folder / "a.png").unlink()
    with pytest.raises(SpecError, match=r"holds images of other formats, which are not read: "
                       r"b\.gif, c\.ico \(convert them to PNG\)"):  # fmt: skip
        import_dataset(folder, 1, tmp_path / "ds2", "he")
