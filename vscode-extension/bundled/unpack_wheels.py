"""Unpacks wheels into one folder meant for PYTHONPATH: `python -P unpack_wheels.py TARGET WHEEL...`.

A wheel is a zip whose root is its importable content plus `<dist>.dist-info` (kept, so entry
points and versions are found); a `<dist>.data/purelib` or `/platlib` part belongs at the root
too, and the other `.data` parts (scripts, headers, data files) are not needed to import.
Nothing is compiled or run; stdlib only, so any CPython can do it without pip or venv.
"""

import shutil
import sys
import zipfile
from pathlib import Path, PurePosixPath


def destination(member: str) -> PurePosixPath | None:
    parts = PurePosixPath(member).parts
    if not parts or PurePosixPath(member).is_absolute() or ".." in parts:
        raise ValueError(f"unsafe path in wheel: {member}")
    if parts[0].endswith(".data"):
        if len(parts) > 2 and parts[1] in ("purelib", "platlib"):
            return PurePosixPath(*parts[2:])
        return None
    return PurePosixPath(*parts)


def unpack(wheel: Path, target: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            relative = destination(info.filename)
            if relative is None:
                continue
            path = target.joinpath(*relative.parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, open(path, "wb") as sink:
                shutil.copyfileobj(source, sink)


def main(arguments: list[str]) -> None:
    target, *wheels = arguments
    for wheel in wheels:
        unpack(Path(wheel), Path(target))


if __name__ == "__main__":
    main(sys.argv[1:])
