"""Real perception parts that run offline, behind small typed functions.

- OCR: :func:`ocr` (tesseract 5 via ``tesserocr``; traineddata for :data:`OCR_LANGUAGES` from Debian);
- text rendering for generated data: :func:`render_text_line` (Pillow + raqm + Noto fonts);
- faces: :func:`detect_faces` (dlib detector, 68 landmarks, 128-d embedding) and
  :func:`facial_expression` (FER-2013 mini-Xception through LiteRT);
- audio: :func:`synthesize_speech` (espeak-ng), :func:`voice_activity` (Silero VAD), :func:`egemaps`
  (openSMILE), :func:`transcribe` (Whisper-tiny, faster-whisper);
- generated data with ground truth: :func:`generate_scene`, :func:`needle_video`.

The heavy packages are extras (``iclr26[vision]``, ``iclr26[audio]``) imported only when a function
needs them; a missing one raises ``ImportError`` naming the extra, a missing system part (a Debian
package) raises :class:`AssetNotAvailableError` saying how to provide it.
"""

from ._assets import AssetNotAvailableError
from ._audio import (
    Segment,
    egemaps,
    resample,
    synthesize_speech,
    transcribe,
    voice_activity,
    whisper_tiny_dir,
)
from ._faces import EMOTIONS, Face, detect_faces, facial_expression
from ._ocr import OCR_LANGUAGES, OcrResult, ocr, tessdata_dir
from ._render import FONT_FOR_LANGUAGE, font_path, render_text_line
from ._scenes import Scene, SceneObject, generate_scene, needle_video

__all__ = [
    "EMOTIONS",
    "FONT_FOR_LANGUAGE",
    "OCR_LANGUAGES",
    "AssetNotAvailableError",
    "Face",
    "OcrResult",
    "Scene",
    "SceneObject",
    "Segment",
    "detect_faces",
    "egemaps",
    "facial_expression",
    "font_path",
    "generate_scene",
    "needle_video",
    "ocr",
    "render_text_line",
    "resample",
    "synthesize_speech",
    "tessdata_dir",
    "transcribe",
    "voice_activity",
    "whisper_tiny_dir",
]
