"""The shipped run-complete subscriber: an "Every Eval Ever" 0.2.2 style envelope per run,
written to `.ai_eval/envelopes/` when `exportEnvelopeOnComplete` is on (off by default)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ai_eval_lsp import __version__
from ai_eval_lsp.core.rows import loads
from ai_eval_lsp.drupal.secrets import redact_json

if TYPE_CHECKING:
    from ai_eval_lsp.runs.run import RunContext

SCHEMA_VERSION = "0.2.2"


def envelope(row: dict[str, Any]) -> dict[str, Any]:
    config = loads(row["config_json"] or "{}")
    evaluation_id = f"{row['target_id']}-{row['timestamp']}-{row['id']}"
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": str(row["timestamp"]),
        "source_metadata": {
            "source_type": "evaluation_run",
            "source_organization_name": "ai-eval-lsp",
            "evaluator_relationship": "first_party",
        },
        # Runs grade recorded responses: the model behind them is not known to the run.
        "model_info": {"name": "recorded responses", "id": str(config.get("cases_file", "unknown"))},
        "eval_library": {"name": "ai-eval-lsp", "version": __version__},
        "evaluation_results": [
            {
                "evaluation_name": "avg_score",
                "metric_config": {
                    "score_type": "continuous",
                    "lower_is_better": False,
                    "min_score": 0,
                    "max_score": 5,
                },
                "score_details": {"score": row["avg_score"]},
            },
            {
                "evaluation_name": "pass_rate",
                "metric_config": {
                    "score_type": "continuous",
                    "lower_is_better": False,
                    "min_score": 0,
                    "max_score": 1,
                },
                "score_details": {"score": row["pass_rate"]},
                "uncertainty": {
                    "confidence_interval": {
                        "lower": row["pass_rate_ci_low"],
                        "upper": row["pass_rate_ci_high"],
                        "confidence_level": 0.95,
                        "method": "wilson",
                    }
                },
            },
        ],
        "additional_details": {
            name: str(row[name])
            for name in (
                "target_id",
                "run_id",
                "passed_gate",
                "question_count",
                "error_count",
                "source",
                "duration",
                "scores_json",
                "config_json",
            )
        },
    }


def write_envelope(row: dict[str, Any], context: RunContext) -> Path | None:
    if not context.export_envelope:
        return None
    folder = context.root / ".ai_eval" / "envelopes"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{row['target_id']}-{row['timestamp']}-{row['id']}.eee.json"
    text = redact_json(json.dumps(envelope(row), indent=2, ensure_ascii=False))
    path.write_text(text + "\n", encoding="utf-8")
    return path
