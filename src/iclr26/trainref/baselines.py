"""The paper's baselines, on the same budget as TrainRef's classifier: a linear head on the same
embeddings, AdamW (lr 1e-3, weight decay 1e-4), cosine schedule with warm-up, batch 32, ``epochs``
epochs (default 30), seeded.

(L2B uses its own optimiser, SGD as in its paper, and DivideMix/DISC use AdamW with a constant lr.)

Calibration baselines:

- ``ce``: cross-entropy on the noisy labels.
- ``label_smoothing``: targets ``(1 - eps) onehot + eps / K``, eps = 0.1 (Szegedy et al., CVPR 2016).
- ``mixup``: the mixup loss alone, ``lam ~ Beta(1, 1)`` (Zhang et al., ICLR 2018, alpha = 1 on CIFAR).
- ``temperature_scaling``: the CE head with one temperature fitted by NLL on D_ref (Guo et al., ICML 2017).

Denoising baselines (each reports the training rows it selects as clean, ``selected``, when it has one):

- ``cleanlab``: out-of-sample probabilities by 5-fold cross-fitting of the same head, then
  ``cleanlab.filter.find_label_issues`` (its default ``prune_by_noise_rate``), CE on the rest
  (Northcutt et al., JAIR 2021). Needs the optional ``cleanlab`` package.
- ``dividemix``: two heads, 10 warm-up epochs of CE, then per epoch a 2-component GMM on each head's
  normalised per-sample loss (clean posterior > 0.5) divides the data for the *other* head, labels of the
  labelled part co-refined and sharpened (T = 0.5), co-guessed labels for the rest, MixMatch with
  ``Beta(4, 4)``, unlabelled weight lambda_u = 0 (CIFAR-10 setting for <= 50 % noise; 25 above), and
  the uniform-prior penalty (Li et al., ICLR 2020). Embeddings have no image augmentation: the two views
  are Gaussian jitter of the embedding (std 0.1 x feature std).
- ``disc``: dynamic instance-specific selection and correction (Li et al., CVPR 2023): per-sample EMA
  thresholds (momentum 0.99) of weak/strong-view confidences after 5 warm-up epochs; *clean* when both
  views' confidence on the given label exceed their thresholds, *hard* (relabelled to the prediction)
  when both views agree on another class above threshold; CE + mixup on clean and hard.
- ``l2b``: Learning to Bootstrap (Zhou et al., CVPR 2023): per batch, per-sample weights of the given
  label and of the model's pseudo-label found by a one-step look-ahead meta-gradient on D_ref (the
  clean meta set), clipped at 0 and normalised; SGD lr 0.02, momentum 0.9 (the paper's CIFAR setting).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import check_array, check_int, check_labels
from . import _train
from ._votes import softmax

__all__ = [
    "BaselineFit",
    "ce",
    "cleanlab",
    "disc",
    "dividemix",
    "fit_baseline",
    "l2b",
    "label_smoothing",
    "mixup",
    "temperature_scaling",
]

NAMES = ("ce", "label_smoothing", "mixup", "temperature_scaling", "cleanlab", "dividemix", "disc", "l2b")


@dataclass
class BaselineFit:
    """A fitted baseline: ``predict_proba(Z)``; ``selected`` the rows kept as clean (or ``None``)."""

    name: str
    model: object
    temperature: float = 1.0
    selected: np.ndarray | None = None

    def predict_proba(self, Z) -> np.ndarray:
        Z = check_array(Z, "Z")
        return softmax(_train.predict_logits(self.model, Z) / self.temperature)


def _check(Z, y, n_classes):
    Z = check_array(Z, "Z")
    y = check_labels(y, len(Z), "noisy_labels")
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    if y.min() < 0 or y.max() >= n_classes:
        raise ValueError(f"noisy_labels must lie in [0, {n_classes})")
    return Z, y, n_classes


def _head(d, k, seed):
    import torch

    torch.manual_seed(seed)
    return torch.nn.Linear(d, k, dtype=torch.float32)


def _fit(Z, targets, seed, epochs, **kw):
    model = _head(Z.shape[1], targets.shape[1], seed)
    _train.train_soft(
        model, Z, targets, epochs=epochs, seed=seed, mixup_alpha=kw.pop("mixup_alpha", None), **kw
    )
    return model


def ce(Z, noisy_labels, n_classes, *, epochs=30, seed=0, **_):
    Z, y, k = _check(Z, noisy_labels, n_classes)
    return BaselineFit("ce", _fit(Z, np.eye(k)[y], seed, epochs))


def label_smoothing(Z, noisy_labels, n_classes, *, eps=0.1, epochs=30, seed=0, **_):
    Z, y, k = _check(Z, noisy_labels, n_classes)
    return BaselineFit("label_smoothing", _fit(Z, (1 - eps) * np.eye(k)[y] + eps / k, seed, epochs))


def mixup(Z, noisy_labels, n_classes, *, alpha=1.0, epochs=30, seed=0, **_):
    Z, y, k = _check(Z, noisy_labels, n_classes)
    return BaselineFit("mixup", _fit(Z, np.eye(k)[y], seed, epochs, mixup_alpha=alpha, mixup_only=True))


def temperature_scaling(Z, noisy_labels, n_classes, *, ref_Z, ref_labels, epochs=30, seed=0, **_):
    from scipy.optimize import minimize_scalar

    Z, y, k = _check(Z, noisy_labels, n_classes)
    ref_Z = check_array(ref_Z, "ref_Z")
    ref_y = check_labels(ref_labels, len(ref_Z), "ref_labels")
    model = _fit(Z, np.eye(k)[y], seed, epochs)
    logits = _train.predict_logits(model, ref_Z)

    def nll(log_t):
        p = softmax(logits / np.exp(log_t))
        return -np.mean(np.log(np.clip(p[np.arange(len(ref_y)), ref_y], 1e-12, None)))

    t = float(np.exp(minimize_scalar(nll, bounds=(-4, 4), method="bounded").x))
    return BaselineFit("temperature_scaling", model, temperature=t)


def cleanlab(Z, noisy_labels, n_classes, *, epochs=30, seed=0, folds=5, **_):
    try:
        from cleanlab.filter import find_label_issues
    except ImportError as err:  # pragma: no cover - optional peer
        raise ImportError("the cleanlab baseline needs the optional package `cleanlab`") from err
    Z, y, k = _check(Z, noisy_labels, n_classes)
    rng = np.random.default_rng(seed)
    fold = rng.permutation(len(Z)) % folds
    pred = np.zeros((len(Z), k))
    for f in range(folds):
        m = _fit(Z[fold != f], np.eye(k)[y[fold != f]], seed + f, epochs)
        pred[fold == f] = softmax(_train.predict_logits(m, Z[fold == f]))
    issues = find_label_issues(labels=y, pred_probs=pred)
    keep = ~issues
    return BaselineFit("cleanlab", _fit(Z[keep], np.eye(k)[y[keep]], seed, epochs), selected=keep)


def _views(torch, x, scale, gen):
    return x + scale * torch.randn(x.shape, generator=gen)


def _gmm_clean_prob(loss: np.ndarray, seed: int) -> np.ndarray:
    from sklearn.mixture import GaussianMixture

    span = loss.max() - loss.min()
    loss = (loss - loss.min()) / (span if span > 0 else 1.0)
    gmm = GaussianMixture(n_components=2, max_iter=10, tol=1e-2, reg_covar=5e-4, random_state=seed)
    gmm.fit(loss[:, None])
    return gmm.predict_proba(loss[:, None])[:, int(np.argmin(gmm.means_.ravel()))]


def dividemix(
    Z,
    noisy_labels,
    n_classes,
    *,
    epochs=30,
    warmup=10,
    lambda_u=None,
    noise_rate=None,
    seed=0,
    batch_size=32,
    lr=1e-3,
    p_threshold=0.5,
    T=0.5,
    alpha=4.0,
    **_,
):
    import torch
    import torch.nn.functional as F

    Z, y, k = _check(Z, noisy_labels, n_classes)
    if lambda_u is None:
        lambda_u = 25.0 if (noise_rate or 0) > 0.5 else 0.0
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x = torch.as_tensor(Z, dtype=torch.float32)
    yt = torch.as_tensor(y)
    yoh = F.one_hot(yt, k).float()
    scale = 0.1 * x.std(dim=0, keepdim=True)
    nets = [_head(Z.shape[1], k, seed), _head(Z.shape[1], k, seed + 1)]
    opts = [torch.optim.AdamW(n.parameters(), lr=lr, weight_decay=1e-4) for n in nets]
    beta = torch.distributions.Beta(alpha, alpha)
    prior = torch.full((k,), 1.0 / k)
    selected = np.ones(len(Z), dtype=bool)
    with _train.few_threads():
        for epoch in range(epochs):
            if epoch < warmup:
                for net, opt in zip(nets, opts):
                    for idx in torch.randperm(len(x), generator=gen).split(batch_size):
                        loss = F.cross_entropy(net(_views(torch, x[idx], scale, gen)), yt[idx])
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                continue
            with torch.no_grad():
                w = [_gmm_clean_prob(F.cross_entropy(n(x), yt, reduction="none").numpy(), seed) for n in nets]
            for i in range(2):
                net, other, opt = nets[i], nets[1 - i], opts[i]
                wi = torch.as_tensor(w[1 - i], dtype=torch.float32)
                lab = wi > p_threshold
                if i == 0:
                    selected = lab.numpy().copy()
                lab_idx, unl_idx = torch.nonzero(lab).ravel(), torch.nonzero(~lab).ravel()
                if len(lab_idx) < 2:
                    continue
                for b in torch.randperm(len(lab_idx), generator=gen).split(batch_size):
                    li = lab_idx[b]
                    ui = (
                        unl_idx[torch.randint(len(unl_idx), (len(li),), generator=gen)]
                        if len(unl_idx)
                        else li[:0]
                    )
                    with torch.no_grad():
                        xl1, xl2 = _views(torch, x[li], scale, gen), _views(torch, x[li], scale, gen)
                        pl = (net(xl1).softmax(1) + net(xl2).softmax(1)) / 2
                        wl = wi[li, None]
                        tl = (wl * yoh[li] + (1 - wl) * pl) ** (1 / T)
                        tl = tl / tl.sum(1, keepdim=True)
                        if len(ui):
                            xu1, xu2 = _views(torch, x[ui], scale, gen), _views(torch, x[ui], scale, gen)
                            pu = sum(m(v).softmax(1) for m in (net, other) for v in (xu1, xu2)) / 4
                            tu = pu ** (1 / T)
                            tu = tu / tu.sum(1, keepdim=True)
                    xs = torch.cat([xl1, xl2] + ([xu1, xu2] if len(ui) else []))
                    ts = torch.cat([tl, tl] + ([tu, tu] if len(ui) else []))
                    lam = beta.sample()
                    lam = torch.maximum(lam, 1 - lam)
                    perm = torch.randperm(len(xs), generator=gen)
                    logits = net(lam * xs + (1 - lam) * xs[perm])
                    tmix = lam * ts + (1 - lam) * ts[perm]
                    nl = 2 * len(li)
                    lx = -(F.log_softmax(logits[:nl], 1) * tmix[:nl]).sum(1).mean()
                    lu = ((logits[nl:].softmax(1) - tmix[nl:]) ** 2).mean() if len(ui) else 0.0
                    pm = logits.softmax(1).mean(0)
                    penalty = (prior * torch.log(prior / pm)).sum()
                    loss = lx + lambda_u * lu + penalty
                    opt.zero_grad()
                    loss.backward()
                    opt.step()

    class _Avg(torch.nn.Module):
        def __init__(self, a, b):
            super().__init__()
            self.a, self.b = a, b

        def forward(self, z):
            return torch.log((self.a(z).softmax(1) + self.b(z).softmax(1)) / 2)

    return BaselineFit("dividemix", _Avg(*nets), selected=selected)


def disc(
    Z,
    noisy_labels,
    n_classes,
    *,
    epochs=30,
    warmup=5,
    momentum=0.99,
    seed=0,
    batch_size=32,
    lr=1e-3,
    alpha=1.0,
    **_,
):
    import torch
    import torch.nn.functional as F

    Z, y, k = _check(Z, noisy_labels, n_classes)
    gen = torch.Generator().manual_seed(seed)
    x = torch.as_tensor(Z, dtype=torch.float32)
    yt = torch.as_tensor(y)
    scale = 0.1 * x.std(dim=0, keepdim=True)
    net = _head(Z.shape[1], k, seed)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    thr_w = torch.zeros(len(x))
    thr_s = torch.zeros(len(x))
    beta = torch.distributions.Beta(alpha, alpha)
    target = F.one_hot(yt, k).float()
    use = torch.ones(len(x), dtype=torch.bool)
    selected = np.ones(len(Z), dtype=bool)
    with _train.few_threads():
        for epoch in range(epochs):
            with torch.no_grad():
                pw = net(_views(torch, x, scale * 0.5, gen)).softmax(1)
                ps = net(_views(torch, x, scale * 2.0, gen)).softmax(1)
                thr_w = momentum * thr_w + (1 - momentum) * pw.max(1).values
                thr_s = momentum * thr_s + (1 - momentum) * ps.max(1).values
                if epoch >= warmup:
                    given_w, given_s = pw[torch.arange(len(x)), yt], ps[torch.arange(len(x)), yt]
                    clean = (given_w > thr_w) & (given_s > thr_s)
                    cw, cs = pw.max(1), ps.max(1)
                    hard = ~clean & (cw.indices == cs.indices) & (cw.values > thr_w) & (cs.values > thr_s)
                    target = F.one_hot(torch.where(hard, cw.indices, yt), k).float()
                    use = clean | hard
                    selected = clean.numpy().copy()
            idx_all = torch.nonzero(use).ravel()
            for b in torch.randperm(len(idx_all), generator=gen).split(batch_size):
                idx = idx_all[b]
                xb, tb = _views(torch, x[idx], scale * 0.5, gen), target[idx]
                lam = beta.sample()
                perm = torch.randperm(len(idx), generator=gen)
                loss = _train.soft_cross_entropy(net(xb), tb) + _train.soft_cross_entropy(
                    net(lam * xb + (1 - lam) * xb[perm]), lam * tb + (1 - lam) * tb[perm]
                )
                opt.zero_grad()
                loss.backward()
                opt.step()
    return BaselineFit("disc", net, selected=selected)


def l2b(Z, noisy_labels, n_classes, *, ref_Z, ref_labels, epochs=30, seed=0, batch_size=32, lr=0.02, **_):
    import torch
    import torch.nn.functional as F

    Z, y, k = _check(Z, noisy_labels, n_classes)
    ref_Z = check_array(ref_Z, "ref_Z")
    ref_y = check_labels(ref_labels, len(ref_Z), "ref_labels")
    gen = torch.Generator().manual_seed(seed)
    net = _head(Z.shape[1], k, seed)
    W, b = net.weight, net.bias
    x, yt = torch.as_tensor(Z, dtype=torch.float32), torch.as_tensor(y)
    xm, ym = torch.as_tensor(ref_Z, dtype=torch.float32), torch.as_tensor(ref_y)
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    with _train.few_threads():
        for _ in range(epochs):
            for idx in torch.randperm(len(x), generator=gen).split(batch_size):
                xb, yb = x[idx], yt[idx]
                pseudo = (xb @ W.T + b).argmax(1).detach()
                ea = torch.zeros(len(idx), requires_grad=True)
                eb = torch.zeros(len(idx), requires_grad=True)
                out = xb @ W.T + b
                inner = (ea * F.cross_entropy(out, yb, reduction="none")).sum() + (
                    eb * F.cross_entropy(out, pseudo, reduction="none")
                ).sum()
                gW, gb = torch.autograd.grad(inner, (W, b), create_graph=True)
                meta = F.cross_entropy(xm @ (W - lr * gW).T + (b - lr * gb), ym)
                ga, gbeta = torch.autograd.grad(meta, (ea, eb))
                a, be = torch.clamp(-ga, min=0), torch.clamp(-gbeta, min=0)
                total = a.sum() + be.sum()
                if total > 0:
                    a, be = a / total, be / total
                out = xb @ W.T + b
                loss = (a * F.cross_entropy(out, yb, reduction="none")).sum() + (
                    be * F.cross_entropy(out, pseudo, reduction="none")
                ).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
    return BaselineFit("l2b", net)


_FUNCS = {
    "ce": ce,
    "label_smoothing": label_smoothing,
    "mixup": mixup,
    "temperature_scaling": temperature_scaling,
    "cleanlab": cleanlab,
    "dividemix": dividemix,
    "disc": disc,
    "l2b": l2b,
}


def fit_baseline(name: str, Z, noisy_labels, n_classes: int, **kwargs) -> BaselineFit:
    """Fit baseline ``name`` (one of ``NAMES``); ``ref_Z``/``ref_labels`` are used by
    ``temperature_scaling`` and ``l2b`` and ignored by the others."""
    if name not in _FUNCS:
        raise ValueError(f"name must be one of {NAMES}, got {name!r}")
    return _FUNCS[name](Z, noisy_labels, n_classes, **kwargs)
