"""`ndpkit data import DIR` of TIFF, BMP, netpbm and WebP images, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import skimage.data
from cli_errors import one_error_line
from PIL import Image

from ndpkit.runtime import open_dataset


def test_import_a_directory_of_the_new_formats_as_json(ndpkit, tmp_path: Path) -> None:
    """camera in four formats, in file-name order: four copies of its quarters."""
    camera = skimage.data.camera()
    folder = tmp_path / "imgs"
    folder.mkdir()
    for name, fmt, options in [
        ("a.TIF", "TIFF", {"compression": "tiff_deflate"}),
        ("b.bmp", "BMP", {}),
        ("c.pgm", "PPM", {}),
        ("d.webp", "WEBP", {"lossless": True}),
    ]:
        Image.fromarray(camera).save(folder / name, fmt, **options)
    args = ("import", str(folder), "--app", "sobel", "--devices", "2")
    result = ndpkit("data", *args, "--out", str(tmp_path / "ds"), "-f", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["dataset"]["records"] == 16
    quarters = [camera[:256, :256], camera[:256, 256:], camera[256:, :256], camera[256:, 256:]]
    assert np.array_equal(open_dataset(tmp_path / "ds").read_all(), np.stack(quarters * 4))


def test_import_of_a_16_bit_pgm_is_one_error_naming_it(ndpkit, tmp_path: Path) -> None:
    folder = tmp_path / "imgs"
    folder.mkdir()
    Image.fromarray(skimage.data.camera()).save(folder / "a.pgm")
    deep = np.random.default_rng(3).integers(0, 65536, (256, 256)).astype(">u2")
    (folder / "b.pgm").write_bytes(b"P5 256 256 65535\n" + deep.tobytes())
    args = ("import", str(folder), "--app", "he", "--out", str(tmp_path / "ds"))
    assert one_error_line(ndpkit("data", *args, "-d", "1", "-f", "json")) == (
        f"error: {folder / 'b.pgm'}: an image of mode I has more than 8 bits per pixel; "
        "convert it to 8-bit grayscale first"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]


def test_import_help_names_the_image_formats(ndpkit) -> None:
    result = ndpkit("data", "import", "--help")
    assert result.returncode == 0
    assert "(PNG, JPEG, TIFF, BMP, PGM/PPM/PNM/PBM, WebP)" in " ".join(result.stdout.split())


def test_import_json_holds_the_warnings_said_on_stderr(ndpkit, tmp_path: Path) -> None:
    """Files of other image formats left out were said on stderr alone: a script reading
    `-f json` was not told, where evaluate's JSON holds its warnings."""
    (tmp_path / "imgs").mkdir()
    Image.new("L", (256, 256)).save(tmp_path / "imgs" / "a.png")
    Image.new("L", (256, 256)).save(tmp_path / "imgs" / "b.gif")
    args = ("import", str(tmp_path / "imgs"), "--app", "sobel", "--devices", "1")
    result = ndpkit("data", *args, "--out", str(tmp_path / "ds"), "-f", "json")
    assert result.returncode == 0, result.stderr
    (warning,) = json.loads(result.stdout)["warnings"]
    assert "1 file of other image formats is not read: b.gif" in warning
    assert result.stderr.strip() == f"warning: {warning}"
