"""Images and videos as the models and perception parts take them.

- :func:`as_pil`: one converter from what users hold (PIL images, arrays, paths) to RGB PIL images;
- :func:`image_sha256`: a content hash of the decoded pixels (same picture, same hash, whatever the
  file format), used in sample-log and cache keys so a re-scored run never re-encodes an image;
- :class:`Video`: frames with timestamps, read from and written to files with PyAV.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np


def as_pil(image, name: str = "image"):
    """``image`` as an RGB ``PIL.Image``: a PIL image, an (H, W) / (H, W, 3|4) uint8 or [0, 1] float
    array, or a path to an image file."""
    from PIL import Image

    if isinstance(image, Image.Image):
        return image.convert("RGB") if image.mode != "RGB" else image
    if isinstance(image, str | os.PathLike):
        path = Path(image)
        if not path.is_file():
            raise ValueError(f"{name}: no image file at {str(path)!r}")
        with Image.open(path) as im:
            return im.convert("RGB")
    if isinstance(image, np.ndarray):
        arr = image
        if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (3, 4)) or arr.size == 0:
            raise ValueError(f"{name} must be an (H, W) or (H, W, 3|4) array, got shape {arr.shape}")
        if np.issubdtype(arr.dtype, np.floating):
            if not np.isfinite(arr).all() or arr.min() < 0 or arr.max() > 1:
                raise ValueError(f"{name}: a float image must hold finite values in [0, 1]")
            arr = np.round(arr * 255).astype(np.uint8)
        elif arr.dtype != np.uint8:
            raise ValueError(f"{name}: an integer image must be uint8, got {arr.dtype}")
        return Image.fromarray(arr).convert("RGB")
    raise ValueError(f"{name} must be a PIL image, a numpy array or a path, got {type(image).__name__}")


def image_sha256(image) -> str:
    """SHA-256 of the RGB pixels and size of ``image`` (format-independent)."""
    img = as_pil(image)
    h = hashlib.sha256(f"{img.width}x{img.height}:".encode())
    h.update(img.tobytes())
    return h.hexdigest()


@dataclass
class Video:
    """A clip: ``frames`` (RGB PIL images, all the same size) at ``timestamps`` (seconds, increasing)."""

    frames: list
    timestamps: list[float]

    def __post_init__(self) -> None:
        if not self.frames:
            raise ValueError("a Video needs at least one frame")
        if len(self.frames) != len(self.timestamps):
            raise ValueError(
                f"frames and timestamps must have the same length, got {len(self.frames)} and "
                f"{len(self.timestamps)}"
            )
        self.frames = [as_pil(f, f"frames[{i}]") for i, f in enumerate(self.frames)]
        ts = np.asarray(self.timestamps, dtype=float)
        if not np.isfinite(ts).all() or (np.diff(ts) <= 0).any():
            raise ValueError("timestamps must be finite and strictly increasing")
        if len({f.size for f in self.frames}) != 1:
            raise ValueError("all frames of a Video must have the same size")
        self.timestamps = [float(t) for t in ts]

    @classmethod
    def from_path(
        cls, path: str | os.PathLike, *, max_frames: int | None = None, every: float = 0.0
    ) -> Video:
        """Decode a video file with PyAV: every frame, or one frame per ``every`` seconds, at most
        ``max_frames``."""
        av = _import_av()
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"path: no video file at {str(path)!r}")
        frames, times, last = [], [], -np.inf
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            for frame in container.decode(stream):
                t = float(frame.pts * stream.time_base) if frame.pts is not None else len(times) / 25.0
                if t - last < every:
                    continue
                frames.append(frame.to_image().convert("RGB"))
                times.append(t)
                last = t
                if max_frames is not None and len(frames) >= max_frames:
                    break
        if not frames:
            raise ValueError(f"path: {str(path)!r} holds no decodable video frame")
        return cls(frames, times)

    def write(self, path: str | os.PathLike, fps: int = 10) -> Path:
        """Encode to ``path`` (H.264 in MP4, or MPEG-4 Part 2 when H.264 is missing), atomically."""
        av = _import_av()
        path = Path(path)
        tmp = path.with_name(f".{path.name}.part{path.suffix}")
        w, h = self.frames[0].size
        with av.open(str(tmp), mode="w") as container:
            codec = "libx264" if "libx264" in av.codecs_available else "mpeg4"
            stream = container.add_stream(codec, rate=fps)
            stream.width, stream.height, stream.pix_fmt = w - w % 2, h - h % 2, "yuv420p"
            for img in self.frames:
                frame = av.VideoFrame.from_image(img.crop((0, 0, w - w % 2, h - h % 2)))
                for packet in stream.encode(frame):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)
        os.replace(tmp, path)
        return path

    def sha256(self) -> str:
        h = hashlib.sha256()
        for img, t in zip(self.frames, self.timestamps):
            h.update(f"{t:.6f}:{image_sha256(img)}".encode())
        return h.hexdigest()


def _import_av():
    try:
        import av
    except ImportError as exc:
        raise ImportError("video needs PyAV: pip install 'iclr26[vision]'") from exc
    return av
