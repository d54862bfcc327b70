"""The project's files on disk, before any plugin: which folder is a project's root, which files
are rubrics and cases files (the walk), the settings files, and what is cached between starts."""
