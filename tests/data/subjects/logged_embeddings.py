"""An embedder that writes every text it embeds to a log file (one JSON line per text, with the
process id), so a test sees which texts were embedded, how often and in which process, across
worker processes. Its vectors come from the text alone. Tests install it as a plug-in (an
entry point of `memgauge.embedders`), so `reference` memories in worker processes use it too."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np


class LoggedEmbedder:
    name = "logged-test-embedder"
    dim = 8

    def __init__(self, log: str) -> None:
        self.log = Path(log)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        lines = "".join(json.dumps([os.getpid(), t]) + "\n" for t in texts)
        fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            os.write(fd, lines.encode())  # one write: lines of two processes never interleave
        finally:
            os.close(fd)
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for i, t in enumerate(texts):
            out[i, sum(map(ord, t)) % self.dim] = 1.0
            out[i, len(t) % self.dim] += 0.5
        return out / np.linalg.norm(out, axis=1, keepdims=True)
