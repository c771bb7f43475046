"""Text rendering for generated data: Pillow with libraqm (complex-script shaping) and Noto fonts.

The fonts come from Debian's ``fonts-noto-core`` (unpacked into our cache on first use), or from
``$ICLR26_FONTS`` when that folder holds them.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._assets import AssetNotAvailableError, cache_dir, debian_files

#: Noto Sans face for each tesseract language code.
FONT_FOR_LANGUAGE = {
    "eng": "NotoSans-Regular.ttf",
    "hin": "NotoSansDevanagari-Regular.ttf",
    "mar": "NotoSansDevanagari-Regular.ttf",
    "ben": "NotoSansBengali-Regular.ttf",
    "tam": "NotoSansTamil-Regular.ttf",
    "tel": "NotoSansTelugu-Regular.ttf",
    "kan": "NotoSansKannada-Regular.ttf",
    "mal": "NotoSansMalayalam-Regular.ttf",
    "guj": "NotoSansGujarati-Regular.ttf",
    "pan": "NotoSansGurmukhi-Regular.ttf",
    "ori": "NotoSansOriya-Regular.ttf",
}


def font_path(lang: str = "eng") -> Path:
    """The Noto font file for ``lang`` (a key of :data:`FONT_FOR_LANGUAGE`)."""
    if lang not in FONT_FOR_LANGUAGE:
        raise ValueError(f"lang must be one of {sorted(FONT_FOR_LANGUAGE)}, got {lang!r}")
    name = FONT_FOR_LANGUAGE[lang]
    env = os.environ.get("ICLR26_FONTS")
    if env and (Path(env) / name).is_file():
        return Path(env) / name
    cache = cache_dir("fonts")
    if not (cache / name).is_file():
        try:
            debian_files("fonts-noto-core", "usr/share/fonts/truetype/noto/NotoSans*-Regular.ttf", cache)
        except AssetNotAvailableError as exc:
            raise AssetNotAvailableError(
                f"no font {name}: set ICLR26_FONTS to a folder holding it ({exc})"
            ) from None
    return cache / name


def render_text_line(text: str, lang: str = "eng", *, size: int = 40, margin: int = 16):
    """Render one line of ``text`` in black on white with complex-script shaping; returns a PIL image."""
    from PIL import Image, ImageDraw, ImageFont, features

    if not isinstance(text, str) or not text.strip() or "\n" in text:
        raise ValueError("text must be one non-empty line")
    if isinstance(size, bool) or not isinstance(size, int) or not 8 <= size <= 400:
        raise ValueError(f"size must be an integer in [8, 400], got {size!r}")
    layout = ImageFont.Layout.RAQM if features.check("raqm") else ImageFont.Layout.BASIC
    font = ImageFont.truetype(str(font_path(lang)), size=size, layout_engine=layout)
    left, top, right, bottom = font.getbbox(text)
    img = Image.new("RGB", (right - left + 2 * margin, bottom - top + 2 * margin), "white")
    ImageDraw.Draw(img).text((margin - left, margin - top), text, fill="black", font=font)
    return img
