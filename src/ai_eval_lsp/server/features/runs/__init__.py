"""Runs in the editor: the commands that start them (`commands.py`), runs on save
(`on_save.py`), and what every run in the editor shares (`in_editor.py`)."""
