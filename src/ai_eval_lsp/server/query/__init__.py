"""The read layer every feature stands on, over snapshots only, by topic: what a snapshot is
(`snapshots.py`), positions in it (`positions.py`), problems as diagnostics (`diagnostics.py`),
kinds and their schema in words (`kinds.py`), and the rubric and cases files that name each other
(`rubrics.py`). Nothing here can reach the session: features are siblings over this layer."""
