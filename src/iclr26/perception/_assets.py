"""Offline assets for the perception parts: a cache folder, and files unpacked from Debian packages.

Some models and data the perception parts need ship only as Debian packages (tesseract's traineddata,
the Noto fonts). We fetch the ``.deb`` with ``apt-get download`` (no root needed, no system change) and
unpack it with ``dpkg -x`` into a private temporary folder, then copy the files we need into our cache,
atomically. A user who already has the files points an environment variable at them instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path


class AssetNotAvailableError(RuntimeError):
    """A perception asset (a traineddata file, a font, a model file) is not on this machine."""


def cache_dir(kind: str) -> Path:
    """``$ICLR26_CACHE/<kind>`` or ``~/.cache/iclr26/<kind>`` (created, readable by every user)."""
    base = os.environ.get("ICLR26_CACHE")
    root = Path(base).expanduser() if base else Path.home() / ".cache" / "iclr26"
    path = root / kind
    path.mkdir(parents=True, exist_ok=True)
    return path


def debian_files(package: str, glob: str, dest: Path) -> list[Path]:
    """Copy the files of Debian ``package`` matching ``glob`` (relative to the package's root) into
    ``dest``; return the copied paths.

    Raises :class:`AssetNotAvailableError` naming the package when ``apt-get``/``dpkg`` are missing or
    the package cannot be fetched (run ``apt-get update`` first on a fresh machine).
    """
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        raise AssetNotAvailableError(
            f"Debian package {package!r} is needed, but apt-get/dpkg are not on this machine"
        )
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="iclr26-deb-") as tmp:
        tmp_path = Path(tmp)
        os.chmod(tmp_path, 0o755)  # apt's sandbox user must be able to write here
        got = subprocess.run(
            ["apt-get", "download", "-qq", package], cwd=tmp_path, capture_output=True, text=True
        )
        debs = sorted(tmp_path.glob("*.deb"))
        if got.returncode != 0 or not debs:
            raise AssetNotAvailableError(
                f"could not fetch Debian package {package!r} with apt-get download "
                f"(run `apt-get update` first): {got.stderr.strip()[:300]}"
            )
        root = tmp_path / "root"
        subprocess.run(["dpkg", "-x", str(debs[0]), str(root)], check=True, capture_output=True)
        out = []
        for src in sorted(root.glob(glob)):
            if src.is_file():
                part = dest / (src.name + ".part")
                shutil.copyfile(src, part)
                os.chmod(part, 0o644)
                os.replace(part, dest / src.name)  # atomic: a reader never sees half a file
                out.append(dest / src.name)
    if not out:
        raise AssetNotAvailableError(f"Debian package {package!r} holds no file matching {glob!r}")
    return out
