"""A rubric's check ids and kinds across its checks, kept beside its items (`Layout.tally`), so
that an edit that changes one check's id or kind costs the entries of its old and new id, not
every check: typing a new check's id in a 10,000-check rubric re-reads that check and
the checks that hold the ids it had and has."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ai_eval_lsp.core.lints import CheckId, repeated_id
from ai_eval_lsp.core.problems import Problem

Where = Callable[[int], CheckId]
"""The id of check `number` and where the document has it now."""


@dataclass(frozen=True, slots=True)
class Tally:
    """Which checks hold each id, the problems of ids held more than once, and how many checks
    are of each kind. Immutable: a change makes a new tally sharing what did not change."""

    holding: dict[str, tuple[int, ...]]
    """The checks holding each id, by number, in order."""
    repeated: dict[str, tuple[Problem, ...]]
    """The `duplicate-id` problems of each id held more than once."""
    kinds: dict[str, int]

    @staticmethod
    def of(ids: Sequence[CheckId | None], kinds: Iterable[str | None]) -> Tally:
        holding: dict[str, tuple[int, ...]] = {}
        held = holding.get
        for number, each in enumerate(ids):
            if each is not None:
                numbers = held(each[0])
                holding[each[0]] = (number,) if numbers is None else (*numbers, number)
        counts = Counter(kind for kind in kinds if kind is not None)
        repeated = {
            name: _repeated(numbers, ids.__getitem__)  # type: ignore[arg-type]
            for name, numbers in holding.items()
            if len(numbers) > 1
        }
        return Tally(holding, repeated, dict(counts))

    def changed(
        self,
        number: int,
        ids: tuple[CheckId | None, CheckId | None],
        kinds: tuple[str | None, str | None],
        where: Where,
    ) -> Tally:
        """This tally after check `number`'s id and kind went from the first of each pair to the
        second (no line moved, no check came or went)."""
        holding, repeated = dict(self.holding), dict(self.repeated)
        before, after = ids
        if before is not None:
            holding[before[0]] = tuple(n for n in holding[before[0]] if n != number)
        if after is not None:
            holding[after[0]] = tuple(sorted((*holding.get(after[0], ()), number)))
        for name in {found[0] for found in ids if found is not None}:
            numbers = holding[name]
            if not numbers:
                del holding[name]
            if len(numbers) > 1:
                repeated[name] = _repeated(numbers, where)
            else:
                repeated.pop(name, None)
        counts = self.kinds
        if kinds[0] != kinds[1]:
            counts = dict(counts)
            old, new = kinds
            if old is not None:
                counts[old] -= 1
                if not counts[old]:
                    del counts[old]
            if new is not None:
                counts[new] = counts.get(new, 0) + 1
        return Tally(holding, repeated, counts)

    def in_order(self) -> dict[str, int]:
        """Each id and the check that first holds it, in the order they are first written."""
        return dict(
            sorted(((name, numbers[0]) for name, numbers in self.holding.items()), key=lambda n: n[1])
        )


def _repeated(numbers: tuple[int, ...], where: Where) -> tuple[Problem, ...]:
    first = where(numbers[0])[1]
    return tuple(repeated_id(where(number), first) for number in numbers[1:])
