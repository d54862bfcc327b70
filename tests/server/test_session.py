"""The session's one commit path (`Session.commit`), in process: an analysis lands only on the
version it was made for or a later one, whatever order the analyses end in."""

from __future__ import annotations

from pathlib import Path

from ai_eval_lsp.core.analysis import analyse
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.server.loop.session import AnalysisJob, ProjectFolder, Session
from ai_eval_lsp.server.lsp.convert import uri_of

RUBRIC = (
    'id: {id}\nversion: "1.0"\nchecks:\n  - {{kind: regex, pattern: x}}\nscoring: {{combine: all_pass}}\n'
)


def test_an_analysis_of_an_older_version_does_not_replace_a_newer_one(tmp_path: Path) -> None:
    (tmp_path / "ai-eval.toml").write_text("")
    session = Session()
    folder = session.add_folder(ProjectFolder(tmp_path, uri_of(tmp_path)))
    session.set_project(folder, Project.load(tmp_path))
    document = session.open(uri_of(tmp_path / "tone.rubric.yaml"), RUBRIC.format(id="tone"), 1, folder)
    first = session.analysis_job(document)
    text = RUBRIC.format(id="tone_v2")
    session.change(document, LineIndex(text), 2, [])
    second = session.analysis_job(document)
    assert first is not None and second is not None

    def analysed(job: AnalysisJob) -> bool:
        analysis = analyse(job.role, job.relative, job.text, job.rules)
        return session.commit(document, job, analysis)

    assert analysed(second)
    assert not analysed(first)  # it ended last: too late
    assert document.analysis is not None and document.analysis.text == text
    assert document.analysis_version == 2 and document.current
    assert folder.index.rubrics.ids == ["tone_v2"]  # what other files see of it
