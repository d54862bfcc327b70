// The server bundled in the linux-x64 .vsix: wheels of ai-eval-lsp and its dependencies for a few
// CPython versions (scripts/bundle-wheels.mjs writes them and their manifest at package time).
// When the user's interpreter lacks ai_eval_lsp, the wheels for its version are unpacked into one
// folder of the extension's storage and put on PYTHONPATH. This module decides, without touching
// the disk, whether the bundle fits an interpreter, which wheels it takes, and where they go.

export interface BundleManifest {
  serverVersion: string;
  // Changes whenever any bundled wheel does: the unpacked copy is keyed by it.
  id: string;
  // "3.11" -> the wheel files pip resolved for that CPython.
  pythons: Record<string, string[]>;
}

// What the probe (interpreter.ts) learns from the user's Python.
export interface PythonFacts {
  implementation: string;
  version: [number, number];
  abiflags: string;
  machine: string;
  libc: [string, string];
}

export interface WheelTag {
  python: string;
  abi: string;
  platform: string;
}

export type Selection = { ok: true; pythonTag: string; wheels: string[] } | { ok: false; reason: string };

// `name-version(-build)?-python-abi-platform.whl`, each of the last three possibly a `.`-joined
// set (PEP 425 compressed tags); the wheel fits any tag of their product.
export function wheelTags(filename: string): WheelTag[] {
  const parts = filename.replace(/\.whl$/, "").split("-");
  if (parts.length < 5) return [];
  const [pythons, abis, platforms] = parts.slice(-3).map((part) => part.split("."));
  return pythons.flatMap((python) => abis.flatMap((abi) => platforms.map((platform) => ({ python, abi, platform }))));
}

const LEGACY_MANYLINUX: Record<string, [number, number]> = { manylinux1: [2, 5], manylinux2010: [2, 12], manylinux2014: [2, 17] };

// The glibc a platform tag needs on x86_64, `null` for a pure wheel, undefined when no glibc fits it.
export function requiredGlibc(platform: string): [number, number] | null | undefined {
  if (platform === "any") return null;
  const modern = /^manylinux_(\d+)_(\d+)_x86_64$/.exec(platform);
  if (modern) return [Number(modern[1]), Number(modern[2])];
  const legacy = /^(manylinux\w+?)_x86_64$/.exec(platform);
  return legacy ? LEGACY_MANYLINUX[legacy[1]] : undefined;
}

const atLeast = (have: [number, number], need: [number, number]) => have[0] > need[0] || (have[0] === need[0] && have[1] >= need[1]);

function parseGlibc(python: PythonFacts): [number, number] | undefined {
  const match = python.libc[0] === "glibc" ? /^(\d+)\.(\d+)/.exec(python.libc[1]) : null;
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

// Whether CPython `python` can import a wheel with this tag, glibc aside: pure `py3`/`py3N` wheels,
// `cp3N` wheels of its own ABI, and stable-ABI (`abi3`) wheels built for it or an older CPython.
export function tagFitsPython(tag: WheelTag, python: PythonFacts): boolean {
  const [major, minor] = python.version;
  const pythonTag = /^(py|cp)(\d)(\d*)$/.exec(tag.python);
  if (!pythonTag || Number(pythonTag[2]) !== major) return false;
  const tagMinor = pythonTag[3] === "" ? undefined : Number(pythonTag[3]);
  if (tag.abi === "none") {
    return pythonTag[1] === "py" ? tagMinor === undefined || tagMinor <= minor : tagMinor === minor;
  }
  if (tag.abi === "abi3") {
    return pythonTag[1] === "cp" && tagMinor !== undefined && tagMinor <= minor && python.abiflags === "";
  }
  const own = `cp${major}${minor}`;
  return tag.python === own && tag.abi === own + python.abiflags;
}

export function tagFitsGlibc(tag: WheelTag, glibc: [number, number] | undefined): boolean {
  const needed = requiredGlibc(tag.platform);
  return needed === null || (needed !== undefined && glibc !== undefined && atLeast(glibc, needed));
}

export function wheelFits(filename: string, python: PythonFacts): boolean {
  const glibc = parseGlibc(python);
  return wheelTags(filename).some((tag) => tagFitsPython(tag, python) && tagFitsGlibc(tag, glibc));
}

// The oldest glibc any of the wheel's tags for this Python accepts, as "2.28".
function oldestGlibc(filename: string, python: PythonFacts): string | undefined {
  const needs = wheelTags(filename)
    .filter((tag) => tagFitsPython(tag, python))
    .map((tag) => requiredGlibc(tag.platform))
    .filter((need): need is [number, number] => Array.isArray(need))
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return needs.length ? needs[0].join(".") : undefined;
}

function describeVersions(versions: string[]): string {
  return versions.length > 1 ? `${versions.slice(0, -1).join(", ")} and ${versions[versions.length - 1]}` : versions.join("");
}

// The wheels that make the server for this Python, or why the bundle cannot serve it.
export function selectWheels(manifest: BundleManifest, python: PythonFacts): Selection {
  const versions = Object.keys(manifest.pythons).sort((a, b) => Number(a.split(".")[1]) - Number(b.split(".")[1]));
  const built = `it is built for CPython ${describeVersions(versions)} on Linux x86_64 with glibc`;
  const version = python.version.join(".");
  if (python.implementation !== "cpython") {
    return { ok: false, reason: `${built}, and this is ${python.implementation} ${version}` };
  }
  if (python.abiflags.includes("t")) {
    return { ok: false, reason: `${built}, and this is the free-threaded build of CPython ${version}` };
  }
  if (python.machine !== "x86_64") {
    return { ok: false, reason: `${built}, and this Python runs on ${python.machine || "an unknown machine"}` };
  }
  if (python.libc[0] !== "glibc") {
    return { ok: false, reason: `${built}, and this Python does not use glibc (musl, as on Alpine?)` };
  }
  const wheels = manifest.pythons[version];
  if (!wheels) {
    return { ok: false, reason: `${built}, and this is CPython ${version}` };
  }
  const misfit = wheels.find((wheel) => !wheelFits(wheel, python));
  if (misfit) {
    const glibc = oldestGlibc(misfit, python);
    const why = glibc ? `needs glibc ${glibc} or later, and this system has ${python.libc[1]}` : `does not fit CPython ${version}`;
    return { ok: false, reason: `its wheel ${misfit} ${why}` };
  }
  return { ok: true, pythonTag: `cp${python.version.join("")}`, wheels };
}

// Unpacked copies live in `<storage>/bundled-server/<bundle id>-<python tag>/`; the stamp file is
// written last, so a folder without the expected stamp is an interrupted unpack and is redone.
export const BUNDLE_FOLDER = "bundled-server";
export const STAMP_FILE = ".ai-eval-bundle";

export function unpackedFolderName(manifest: BundleManifest, selection: { pythonTag: string }): string {
  return `${manifest.id}-${selection.pythonTag}`;
}

export function stampText(manifest: BundleManifest, selection: { pythonTag: string; wheels: string[] }): string {
  return JSON.stringify({ id: manifest.id, python: selection.pythonTag, wheels: selection.wheels }) + "\n";
}

// Copies of earlier bundles, left by a previous version of the extension: every `<id>-cpXY` folder
// of another id. Folders of this bundle for other Pythons stay (the user may switch back), and so
// do unfinished unpacks (`….partial-…`), which may belong to another window.
export function staleFolders(entries: string[], manifest: BundleManifest): string[] {
  return entries.filter((entry) => /-cp\d+$/.test(entry) && !entry.startsWith(`${manifest.id}-cp`));
}
