"""Rewrites sacrebleu's wheel for the .vsix bundle: `python slim_sacrebleu.py WHEEL OUTDIR`.

Importing sacrebleu imports its test-set readers, and the WMT XML reader imports lxml at the top
of its module (5 MB per CPython: half of a .vsix), though chrF never reads a test set; sacrebleu
also requires numpy, which only its significance tests import. This copy imports lxml inside the
one function that parses WMT XML and requires neither, so the bundle carries neither and
`pip install --no-index --find-links <bundle> ai-eval-lsp` installs from the bundle alone. Its
version gets the local label `+ai.eval.lsp` (PEP 440), so pip and `pip list` show it is not
PyPI's; the changed file says it was changed, as sacrebleu's Apache 2.0 license asks. A sacrebleu
whose files no longer read as this expects stops the bundle, saying what to look at. Prints the
new path.
"""

from __future__ import annotations

import base64
import hashlib
import re
import sys
import zipfile
from pathlib import Path

LABEL = "+ai.eval.lsp"
READER = "sacrebleu/dataset/wmt_xml.py"
TOP_IMPORT = "import lxml.etree as ET\n"
FIRST_USE = "        tree = ET.parse(raw_file)\n"
DEFERRED = (
    "        # Changed by ai-eval-lsp's .vsix bundle: lxml is imported here, where it is used, and\n"
    "        # sacrebleu imports without it.\n"
    "        import lxml.etree as ET\n\n"
)
DROPPED = re.compile(r"Requires-Dist: (numpy|lxml)\b[^;\n]*\n")


def replaced(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise ValueError(f"{old!r} is not in the sacrebleu this script was written for")
    return text.replace(old, new)


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def slim(wheel: Path, outdir: Path) -> Path:
    with zipfile.ZipFile(wheel) as source:
        infos = source.infolist()
        contents = {info.filename: source.read(info) for info in infos}
    dist_info = next(name.split("/")[0] for name in contents if name.endswith(".dist-info/METADATA"))
    version = dist_info.removeprefix("sacrebleu-").removesuffix(".dist-info")
    labelled = f"sacrebleu-{version}{LABEL}.dist-info"
    reader = contents[READER].decode()
    reader = replaced(reader, TOP_IMPORT, "")
    contents[READER] = replaced(reader, FIRST_USE, DEFERRED + FIRST_USE).encode()
    metadata = replaced(
        contents[f"{dist_info}/METADATA"].decode(), f"Version: {version}\n", f"Version: {version}{LABEL}\n"
    )
    if len(DROPPED.findall(metadata)) != 2:
        raise ValueError("sacrebleu no longer requires exactly numpy and lxml: look again at what it imports")
    contents[f"{dist_info}/METADATA"] = DROPPED.sub("", metadata).encode()
    renamed = {name.replace(f"{dist_info}/", f"{labelled}/"): data for name, data in contents.items()}
    lines = [
        f"{name},{record_hash(data)},{len(data)}"
        for name, data in renamed.items()
        if name != f"{labelled}/RECORD"
    ]
    renamed[f"{labelled}/RECORD"] = ("\n".join([*lines, f"{labelled}/RECORD,,"]) + "\n").encode()
    target = outdir / wheel.name.replace(f"-{version}-", f"-{version}{LABEL}-")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as sink:
        for info in infos:
            info.filename = info.filename.replace(f"{dist_info}/", f"{labelled}/")
            sink.writestr(info, renamed[info.filename], zipfile.ZIP_DEFLATED)
    return target


if __name__ == "__main__":
    print(slim(Path(sys.argv[1]), Path(sys.argv[2])))
