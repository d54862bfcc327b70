"""The session's one commit path (`Session.commit`), in process: an analysis lands only on the
version it was made for or a later one, whatever order the analyses end in."""

from __future__ import annotations

from pathlib import Path

from ai_eval_lsp.core.analysis import analyse
from ai_eval_lsp.core.text import LineIndex
from ai_eval_lsp.project.project import Project
from ai_eval_lsp.server.loop.session import Folder, Session, Snapshot
from ai_eval_lsp.server.lsp.convert import uri_of

RUBRIC = (
    'id: {id}\nversion: "1.0"\nchecks:\n  - {{kind: regex, pattern: x}}\nscoring: {{combine: all_pass}}\n'
)


def test_an_analysis_of_an_older_version_does_not_replace_a_newer_one(tmp_path: Path) -> None:
    (tmp_path / "ai-eval.toml").write_text("")
    session = Session()
    folder = session.add_folder(Folder(tmp_path, uri_of(tmp_path)))
    session.set_project(folder, Project.load(tmp_path))
    document = session.open(uri_of(tmp_path / "tone.rubric.yaml"), RUBRIC.format(id="tone"), 1, folder)
    first = session.snapshot(document)
    text = RUBRIC.format(id="tone_v2")
    session.change(document, LineIndex(text), 2, [])
    second = session.snapshot(document)
    assert first is not None and second is not None

    def analysed(snapshot: Snapshot) -> bool:
        analysis = analyse(snapshot.role, snapshot.relative, snapshot.text, snapshot.rules)
        return session.commit(document, snapshot, analysis)

    assert analysed(second)
    assert not analysed(first)  # it ended last: too late
    assert document.analysis is not None and document.analysis.text == text
    assert document.analysis_version == 2 and document.current
    assert folder.index.rubrics.ids == ["tone_v2"]  # what other files see of it
