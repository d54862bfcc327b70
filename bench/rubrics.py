"""Generated rubrics for benchmarks: N checks mixing six kinds, 1 % of them broken when asked."""

from __future__ import annotations

_CHECKS = (
    '  - id: c{i}\n    kind: must_contain_any\n    values: ["refund", "sorry", "apolog"]\n    case_sensitive: false\n',
    "  - id: c{i}\n    kind: regex\n    pattern: '^(hello|hi)\\s+world$'\n    flags: im\n",
    "  - id: c{i}\n    kind: target_match\n    source: expected.reference\n    mode: chrf\n    threshold: 0.6\n",
    '  - id: c{i}\n    kind: must_not_contain\n    values:\n      - "As an AI"\n      - "I cannot"\n',
    "  - id: c{i}\n    kind: llm_judge\n    description: Judge politeness\n    judges: [a, b]\n",
    "  - id: c{i}\n    kind: composite\n    rubric: tone\n",
)
_BROKEN = (
    "  - id: c{i}\n    kind: regex\n    patern: x\n",
    "  - id: c{i}\n    kind: target_match\n    source: expected.reference\n    threshold: 1.5\n",
    "  - id: c{i}\n    kind: must_contain_any\n",
    "  - id: c{i}\n    kind: regexp\n",
)


def rubric(checks: int, broken: bool = False) -> str:
    every = max(checks // max(checks // 100, 1), 1) if broken else 0
    parts = ['# yaml-language-server: $schema=rubric.schema.json\nid: big\nversion: "1.0"\nchecks:\n']
    for i in range(checks):
        if i % 10 == 0:
            parts.append(f"  # group {i // 10}\n")
        if broken and i % every == every // 2:
            parts.append(_BROKEN[(i // every) % len(_BROKEN)].format(i=i))
        else:
            parts.append(_CHECKS[i % len(_CHECKS)].format(i=i))
    parts.append("scoring:\n  combine: weighted_avg\n  threshold: 0.7\n")
    return "".join(parts)


TONE = 'id: tone\nversion: "1.0"\nchecks:\n  - {kind: must_contain_any, values: [please]}\nscoring: {combine: all_pass}\n'
