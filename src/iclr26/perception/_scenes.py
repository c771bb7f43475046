"""Generated images and videos with ground truth: the default data of the vision parts.

:func:`generate_scene` draws a few coloured shapes on a plain background and returns the image with
every object's shape, colour, box and coarse position, a caption, and question-answer pairs whose
answers follow from the ground truth (colour, count, position). :func:`needle_video` hides one frame
with a distinct object in a clip of distractor frames.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..media import Video

SHAPES = ("circle", "square", "triangle")
COLOURS = {"red": (220, 40, 40), "green": (40, 170, 60), "blue": (40, 80, 220), "yellow": (235, 200, 30)}


@dataclass(frozen=True)
class SceneObject:
    """One drawn object: ``box`` (left, top, right, bottom) in pixels; ``position`` is ``"left"`` or
    ``"right"`` (the half holding its centre)."""

    shape: str
    colour: str
    box: tuple[int, int, int, int]
    position: str


@dataclass
class Scene:
    """A generated image with its objects, a caption and question-answer pairs (``qa``: (q, a))."""

    image: object
    objects: list[SceneObject]
    caption: str
    qa: list[tuple[str, str]] = field(default_factory=list)


def _draw(draw, shape: str, box: tuple[int, int, int, int], rgb: tuple[int, int, int]) -> None:
    left, top, right, bottom = box
    if shape == "circle":
        draw.ellipse(box, fill=rgb)
    elif shape == "square":
        draw.rectangle(box, fill=rgb)
    else:
        draw.polygon([((left + right) / 2, top), (right, bottom), (left, bottom)], fill=rgb)


def _overlaps(a, b, gap: int = 4) -> bool:
    return not (a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1])


def generate_scene(rng: np.random.Generator, *, size: int = 64, max_objects: int = 3) -> Scene:
    """One scene of 1..``max_objects`` non-overlapping shapes, drawn with ``rng``.

    Questions asked: the colour of a shape present once, the count of a shape (0 included), and the
    side of a shape present once. Answers are single words.
    """
    from PIL import Image, ImageDraw

    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy Generator (np.random.default_rng(seed))")
    if isinstance(size, bool) or not isinstance(size, int) or size < 32:
        raise ValueError(f"size must be an integer >= 32, got {size!r}")
    if isinstance(max_objects, bool) or not isinstance(max_objects, int) or not 1 <= max_objects <= 6:
        raise ValueError(f"max_objects must be an integer in [1, 6], got {max_objects!r}")
    img = Image.new("RGB", (size, size), (245, 245, 245))
    draw = ImageDraw.Draw(img)
    n = int(rng.integers(1, max_objects + 1))
    objects: list[SceneObject] = []
    for _ in range(50 * n):
        if len(objects) == n:
            break
        side = int(rng.integers(size // 5, size // 3))
        left, top = (int(v) for v in rng.integers(0, size - side, size=2))
        box = (left, top, left + side, top + side)
        if any(_overlaps(box, o.box) for o in objects):
            continue
        shape = SHAPES[int(rng.integers(len(SHAPES)))]
        colour = list(COLOURS)[int(rng.integers(len(COLOURS)))]
        _draw(draw, shape, box, COLOURS[colour])
        position = "left" if (box[0] + box[2]) / 2 < size / 2 else "right"
        objects.append(SceneObject(shape, colour, box, position))
    caption = "; ".join(f"a {o.colour} {o.shape} on the {o.position}" for o in objects)
    qa: list[tuple[str, str]] = []
    counts = {s: sum(o.shape == s for o in objects) for s in SHAPES}
    singles = [o for o in objects if counts[o.shape] == 1]
    if singles:
        o = singles[int(rng.integers(len(singles)))]
        qa.append((f"What colour is the {o.shape}?", o.colour))
        qa.append((f"Is the {o.shape} on the left or on the right?", o.position))
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    qa.append((f"How many {shape}s are there?", str(counts[shape])))
    return Scene(img, objects, caption, qa)


def needle_video(
    rng: np.random.Generator, *, n_frames: int = 32, size: int = 64, fps: float = 4.0
) -> tuple[Video, int]:
    """A clip of grey noise frames with one "needle" frame (a red square); returns (video, its index)."""
    from PIL import Image, ImageDraw

    if isinstance(n_frames, bool) or not isinstance(n_frames, int) or n_frames < 2:
        raise ValueError(f"n_frames must be an integer >= 2, got {n_frames!r}")
    if not fps > 0:
        raise ValueError(f"fps must be > 0, got {fps!r}")
    needle = int(rng.integers(n_frames))
    frames = []
    for i in range(n_frames):
        noise = rng.integers(100, 156, size=(size, size, 3), dtype=np.uint8)
        img = Image.fromarray(noise)
        if i == needle:
            q = size // 4
            ImageDraw.Draw(img).rectangle((q, q, 3 * q, 3 * q), fill=COLOURS["red"])
        frames.append(img)
    return Video(frames, [i / fps for i in range(n_frames)]), needle
