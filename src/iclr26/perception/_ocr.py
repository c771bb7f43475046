"""OCR with tesseract 5 through ``tesserocr`` (its PyPI wheel bundles libtesseract).

Language data (``<lang>.traineddata``) comes from ``$TESSDATA_PREFIX`` when it holds the language,
else from our cache, filled on first use from Debian's ``tesseract-ocr-<lang>`` package.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..media import as_pil
from ._assets import AssetNotAvailableError, cache_dir, debian_files

#: The eleven languages the OCR parts are checked on: English and ten Indic languages.
OCR_LANGUAGES = ("eng", "hin", "ben", "tam", "tel", "kan", "mal", "guj", "pan", "ori", "mar")


@dataclass(frozen=True)
class OcrResult:
    """Recognised ``text`` (stripped), mean word ``confidence`` in [0, 100], and ``seconds`` taken."""

    text: str
    confidence: float
    seconds: float


def _check_lang(lang: str) -> list[str]:
    if not isinstance(lang, str) or not lang:
        raise ValueError(f"lang must be a tesseract language code such as 'eng' or 'hin+eng', got {lang!r}")
    parts = lang.split("+")
    for p in parts:
        if not p.replace("_", "").isalnum():
            raise ValueError(f"lang must be tesseract codes joined by '+', got {lang!r}")
    return parts


def tessdata_dir(lang: str = "eng") -> Path:
    """A folder holding ``<code>.traineddata`` for every code of ``lang`` (``"hin+eng"``: both)."""
    codes = _check_lang(lang)
    env = os.environ.get("TESSDATA_PREFIX")
    if env and all((Path(env) / f"{c}.traineddata").is_file() for c in codes):
        return Path(env)
    cache = cache_dir("tessdata")
    for code in codes:
        if not (cache / f"{code}.traineddata").is_file():
            try:
                package = f"tesseract-ocr-{code.replace('_', '-')}"
                debian_files(package, "usr/share/tesseract-ocr/*/tessdata/*.traineddata", cache)
            except AssetNotAvailableError as exc:
                raise AssetNotAvailableError(
                    f"no traineddata for {code!r}: set TESSDATA_PREFIX to a folder holding "
                    f"{code}.traineddata, or let us fetch it ({exc})"
                ) from None
    return cache


def ocr(image, lang: str = "eng", *, psm: int = 7) -> OcrResult:
    """Recognise the text in ``image`` (PIL image, array, or path).

    ``psm`` is tesseract's page segmentation mode (7: a single text line; 6: a block; 3: automatic).
    """
    try:
        import tesserocr
    except ImportError as exc:
        raise ImportError("OCR needs the vision extra: pip install 'iclr26[vision]'") from exc
    if isinstance(psm, bool) or not isinstance(psm, int) or not 0 <= psm <= 13:
        raise ValueError(f"psm must be an integer page segmentation mode in [0, 13], got {psm!r}")
    img = as_pil(image, "image")
    path = tessdata_dir(lang)
    t0 = time.perf_counter()
    with tesserocr.PyTessBaseAPI(path=str(path), lang=lang, psm=psm) as api:
        api.SetImage(img)
        text = api.GetUTF8Text().strip()
        confs = [c for c in api.AllWordConfidences() if c >= 0]
    conf = float(sum(confs) / len(confs)) if confs else 0.0
    return OcrResult(text=text, confidence=conf, seconds=time.perf_counter() - t0)
