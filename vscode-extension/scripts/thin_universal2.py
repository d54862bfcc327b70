"""Rewrites a macOS universal2 wheel as an arm64 one: `python thin_universal2.py WHEEL OUTDIR`.

Some projects (lxml) publish only universal2 wheels for Apple silicon, twice the size of one
architecture's; the darwin-arm64 .vsix would not fit in 40 MB with four of them. Each fat Mach-O
file in the wheel is replaced by its arm64 slice, a complete binary with its own code signature
(what `lipo -thin arm64` writes); the tags and RECORD are rewritten to match. Prints the new path.
"""

from __future__ import annotations

import base64
import hashlib
import re
import struct
import sys
import zipfile
from pathlib import Path

FAT_MAGIC = {0xCAFEBABE: (">iiIII", 20), 0xCAFEBABF: (">iiQQII", 32)}
CPU_TYPE_ARM64 = 0x0100000C
UNIVERSAL2 = re.compile(r"macosx_\d+_\d+_universal2")
ARM64 = "macosx_11_0_arm64"
MAX_ARCHITECTURES = 16  # a Java class file shares the magic; its next field is 45 or more


def arm64_slice(data: bytes) -> bytes | None:
    """The arm64 binary in a fat Mach-O file; None when `data` is not one."""
    if len(data) < 8:
        return None
    magic, count = struct.unpack(">II", data[:8])
    if magic not in FAT_MAGIC or not 0 < count <= MAX_ARCHITECTURES:
        return None
    layout, size = FAT_MAGIC[magic]
    for index in range(count):
        cputype, _subtype, offset, length, *_ = struct.unpack_from(layout, data, 8 + index * size)
        if cputype == CPU_TYPE_ARM64:
            return data[offset : offset + length]
    raise ValueError("a fat binary without an arm64 slice")


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def thin(wheel: Path, outdir: Path) -> Path:
    # The arm64 slice of a universal2 binary targets macOS 11, the first on Apple silicon.
    target = outdir / UNIVERSAL2.sub(ARM64, wheel.name)
    with zipfile.ZipFile(wheel) as source:
        contents = {info.filename: source.read(info) for info in source.infolist()}
        infos = source.infolist()
    for filename, data in contents.items():
        if filename.endswith((".so", ".dylib")):
            contents[filename] = arm64_slice(data) or data
    dist_info = next(f.split("/")[0] for f in contents if f.endswith(".dist-info/WHEEL"))
    contents[f"{dist_info}/WHEEL"] = UNIVERSAL2.sub(ARM64, contents[f"{dist_info}/WHEEL"].decode()).encode()
    lines = [f"{f},{record_hash(d)},{len(d)}" for f, d in contents.items() if f != f"{dist_info}/RECORD"]
    contents[f"{dist_info}/RECORD"] = ("\n".join([*lines, f"{dist_info}/RECORD,,"]) + "\n").encode()
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as sink:
        for info in infos:
            sink.writestr(info, contents[info.filename], zipfile.ZIP_DEFLATED)
    return target


if __name__ == "__main__":
    print(thin(Path(sys.argv[1]), Path(sys.argv[2])))
