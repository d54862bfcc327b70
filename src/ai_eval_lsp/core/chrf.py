"""Sentence chrF exactly as sacrebleu's defaults compute it (character 1- to 6-grams, beta 2,
whitespace removed), counted with numpy instead of Python strings: about four times faster, the
same statistics, and sacrebleu's own formula for the score. Where numpy is not installed (the
server bundled in the .vsix leaves it out: 16 MB per CPython), sacrebleu counts in pure Python.

Each character becomes its rank in the pair's alphabet; an n-gram is then one integer in base
(alphabet size), every order in a range of its own, exact in 64 bits while the alphabet has at
most `EXACT_ALPHABET` characters, so one sort per side counts every order at once. A pair with
more distinct characters is scored by sacrebleu itself.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

try:
    import numpy as np

    COUNTS_WITH_NUMPY = True
except ImportError:
    COUNTS_WITH_NUMPY = False

if TYPE_CHECKING:
    from sacrebleu.metrics.chrf import CHRF

ORDER = 6
EXACT_ALPHABET = 1600
"""The largest alphabet whose n-grams of every order, each order in its own range of keys, fit
in an unsigned 64-bit integer: the sum of 1600**n for n = 1..6 is below 2**64."""


@cache
def _sacrebleu() -> CHRF:
    from sacrebleu.metrics.chrf import CHRF  # imported on first use: it costs ~200 ms

    return CHRF()


def _keys(ranks: np.ndarray, base: int) -> np.ndarray:
    """Every n-gram of orders 1..ORDER as one integer: order n's keys start at `offsets[n - 1]`."""
    keys = ranks.astype(np.uint64)
    orders = [keys]
    for n in range(2, ORDER + 1):
        keys = keys[:-1] * np.uint64(base) + ranks[n - 1 :].astype(np.uint64)
        orders.append(keys)
    return np.concatenate([order + offset for order, offset in zip(orders, _offsets(base), strict=True)])


@cache
def _offsets(base: int) -> np.ndarray:
    return np.cumsum([0] + [base**n for n in range(1, ORDER)], dtype=np.uint64)


def statistics(hypothesis: str, reference: str) -> list[int] | None:
    """sacrebleu's [hypothesis, reference, match] counts per order; None without numpy, or past the
    exact alphabet."""
    if not COUNTS_WITH_NUMPY:
        return None
    hyp, ref = "".join(hypothesis.split()), "".join(reference.split())
    # A lone surrogate (YAML's "\ud83d" escape) is one character to sacrebleu, and so here.
    codes = np.frombuffer((hyp + ref).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    ranks: np.ndarray
    if len(codes) and codes.max() < EXACT_ALPHABET:
        ranks, base = codes, int(codes.max()) + 1  # small code points serve as ranks themselves
    else:
        alphabet, ranks = np.unique(codes, return_inverse=True)
        if len(alphabet) > EXACT_ALPHABET:
            return None
        base = max(len(alphabet), 1)
    hyp_keys, hyp_counts = np.unique(_keys(ranks[: len(hyp)], base), return_counts=True)
    ref_keys, ref_counts = np.unique(_keys(ranks[len(hyp) :], base), return_counts=True)
    matches: np.ndarray = np.zeros(ORDER)
    if len(ref_keys):
        at = np.minimum(np.searchsorted(ref_keys, hyp_keys), len(ref_keys) - 1)
        shared = ref_keys[at] == hyp_keys
        order_of = np.searchsorted(_offsets(base), hyp_keys[shared], side="right") - 1
        counts = np.minimum(hyp_counts[shared], ref_counts[at[shared]])
        matches = np.bincount(order_of, weights=counts, minlength=ORDER)
    stats: list[int] = []
    for n in range(1, ORDER + 1):
        hyp_total, ref_total = max(len(hyp) - n + 1, 0), max(len(ref) - n + 1, 0)
        # sacrebleu counts no hypothesis n-grams of an order the reference has none of
        stats += [hyp_total if ref_total else 0, ref_total, int(matches[n - 1])]
    return stats


def sentence_chrf(hypothesis: str, reference: str) -> float:
    """sacrebleu's `CHRF().sentence_score(hypothesis, [reference]).score`, 0..100."""
    metric = _sacrebleu()
    counted = statistics(hypothesis, reference)
    if counted is None:
        return float(metric.sentence_score(hypothesis, [reference]).score)
    return float(metric._compute_f_score(counted))
