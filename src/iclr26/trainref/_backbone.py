"""A small CNN pre-trained with a SimCLR-style objective on unlabelled 28x28 images (seeded, cached).

SimCLR (Chen et al., ICML 2020): two random views of each image (shift by up to 3 pixels, cutout of an
8x8 square, Gaussian pixel noise), a projection MLP, and the NT-Xent loss at temperature 0.5 over a batch
of 256 images (512 views); Adam, lr 1e-3. The backbone (without the projection) maps a (B, 784) batch of
pixels in [0, 1] to (B, 64) embeddings, standardised per dimension with the mean and standard deviation
over the pre-training images (buffers: they stay fixed when the backbone is fine-tuned).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from . import _train


def _cache_dir() -> Path:
    return Path(os.environ.get("ICLR26_CACHE", Path.home() / ".cache" / "iclr26")) / "trainref"


def make_cnn(dim: int = 64):
    import torch
    from torch import nn

    class SmallCNN(nn.Module):
        """(B, 784) pixels -> (B, dim) embedding: two conv blocks and a linear layer."""

        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 8, 3, padding=1),
                nn.ReLU(),
                nn.MaxPool2d(2),
                nn.Conv2d(8, 16, 3, padding=1),
                nn.ReLU(),
                nn.MaxPool2d(2),
            )
            self.fc = nn.Linear(16 * 7 * 7, dim)
            # Fixed standardisation of the output (set after pre-training from the pre-training images):
            # the linear heads downstream (lr 1e-3) barely move on raw outputs of norm ~2.
            self.register_buffer("mean", torch.zeros(dim))
            self.register_buffer("scale", torch.ones(dim))

        def forward(self, x):
            z = self.fc(torch.flatten(self.features(x.view(-1, 1, 28, 28)), 1))
            return (z - self.mean) / self.scale

    return SmallCNN()


def _views(torch, x, gen):
    """Random shift (up to 3 pixels, by bilinear translation), 8x8 cutout and Gaussian noise."""
    b = len(x)
    img = x.view(b, 1, 28, 28)
    shift = torch.randint(-3, 4, (b, 2), generator=gen).float() * 2 / 28
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0] = theta[:, 1, 1] = 1.0
    theta[:, :, 2] = shift
    grid = torch.nn.functional.affine_grid(theta, img.shape, align_corners=False)
    img = torch.nn.functional.grid_sample(img, grid, align_corners=False)
    cx, cy = torch.randint(0, 21, (2, b, 1, 1), generator=gen)
    r = torch.arange(28)
    hole = (
        (r.view(1, 28, 1) >= cy)
        & (r.view(1, 28, 1) < cy + 8)
        & (r.view(1, 1, 28) >= cx)
        & (r.view(1, 1, 28) < cx + 8)
    )
    img = img * (~hole).unsqueeze(1) + 0.1 * torch.randn(img.shape, generator=gen)
    return img.view(b, -1)


def simclr_pretrain(
    images: np.ndarray,
    *,
    epochs: int = 10,
    seed: int = 0,
    batch_size: int = 256,
    temperature: float = 0.5,
    use_cache: bool = True,
):
    """The SimCLR-pretrained CNN for ``images`` (n, 784) in [0, 1]; cached by data and configuration."""
    import torch

    key = hashlib.sha256(np.ascontiguousarray(images, dtype=np.float32).tobytes())
    key.update(f"{epochs}-{seed}-{batch_size}-{temperature}-v2".encode())
    path = _cache_dir() / f"simclr-{key.hexdigest()[:16]}.pt"
    torch.manual_seed(seed)
    model = make_cnn()
    if use_cache and path.is_file():
        model.load_state_dict(torch.load(path, weights_only=True))
        model.eval()
        return model
    proj = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(64, 64))
    opt = torch.optim.Adam(list(model.parameters()) + list(proj.parameters()), lr=1e-3)
    gen = torch.Generator().manual_seed(seed)
    x = torch.as_tensor(images, dtype=torch.float32)
    model.train()
    with _train.few_threads(max(1, min(4, torch.get_num_threads()))):
        for _ in range(epochs):
            for idx in torch.randperm(len(x), generator=gen).split(batch_size):
                if len(idx) < 2:
                    continue
                z = proj(model(torch.cat([_views(torch, x[idx], gen), _views(torch, x[idx], gen)])))
                z = torch.nn.functional.normalize(z, dim=1)
                sim = z @ z.T / temperature
                sim.fill_diagonal_(-1e9)
                b = len(idx)
                target = torch.cat([torch.arange(b, 2 * b), torch.arange(0, b)])
                loss = torch.nn.functional.cross_entropy(sim, target)
                opt.zero_grad()
                loss.backward()
                opt.step()
    model.eval()
    with torch.no_grad():
        z = torch.cat([model(x[i : i + 2048]) for i in range(0, len(x), 2048)])
        model.mean.copy_(z.mean(0))
        model.scale.copy_(z.std(0).clamp_min(1e-6))
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        torch.save(model.state_dict(), tmp)
        tmp.replace(path)
    return model
