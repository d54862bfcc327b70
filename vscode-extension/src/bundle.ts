// The server bundled in a platform .vsix: wheels of ai-eval-lsp and its dependencies for a few
// CPython versions on one platform (scripts/bundle-wheels.mjs writes them and their manifest at
// package time). When the user's interpreter lacks ai_eval_lsp, the wheels for its version are
// unpacked into one folder of the extension's storage and put on PYTHONPATH. This module decides,
// without touching the disk, whether the bundle fits an interpreter, which wheels it takes, and
// where they go.

export interface BundleManifest {
  serverVersion: string;
  // Changes whenever any bundled wheel does: the unpacked copy is keyed by it.
  id: string;
  // The `vsce package --target` the wheels are for; bundles made before it was written: linux-x64.
  target?: string;
  // "3.11" -> the wheel files pip resolved for that CPython.
  pythons: Record<string, string[]>;
}

// What the probe (interpreter.ts) learns from the user's Python.
export interface PythonFacts {
  implementation: string;
  version: [number, number];
  abiflags: string;
  // sys.platform: "linux", "darwin", "win32".
  platform: string;
  machine: string;
  libc: [string, string];
}

// A target's system (sys.platform), the machine names Python reports there, and its name for users.
interface TargetPlatform {
  system: string;
  machines: string[];
  name: string;
}

export const TARGET_PLATFORMS: Record<string, TargetPlatform> = {
  "linux-x64": { system: "linux", machines: ["x86_64"], name: "Linux x86_64 with glibc" },
  "linux-arm64": { system: "linux", machines: ["aarch64"], name: "Linux arm64 with glibc" },
  "darwin-x64": { system: "darwin", machines: ["x86_64"], name: "macOS x86_64" },
  "darwin-arm64": { system: "darwin", machines: ["arm64"], name: "macOS arm64" },
  "win32-x64": { system: "win32", machines: ["AMD64"], name: "Windows x64" },
};

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

// The glibc a platform tag needs on this machine (`x86_64`, `aarch64`), `null` for a pure wheel,
// undefined when no glibc fits it.
export function requiredGlibc(platform: string, machine = "x86_64"): [number, number] | null | undefined {
  if (platform === "any") return null;
  const modern = /^manylinux_(\d+)_(\d+)_(\w+)$/.exec(platform);
  if (modern) return modern[3] === machine ? [Number(modern[1]), Number(modern[2])] : undefined;
  const legacy = /^(manylinux\d+)_(\w+)$/.exec(platform);
  return legacy && legacy[2] === machine ? LEGACY_MANYLINUX[legacy[1]] : undefined;
}

const atLeast = (have: [number, number], need: [number, number]) => have[0] > need[0] || (have[0] === need[0] && have[1] >= need[1]);

function parseGlibc(python: PythonFacts): [number, number] | undefined {
  const match = python.libc[0] === "glibc" ? /^(\d+)\.(\d+)/.exec(python.libc[1]) : null;
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

// Whether CPython `python` can import a wheel with this tag, its platform aside: pure `py3`/`py3N`
// wheels, `cp3N` wheels of its own ABI, and stable-ABI (`abi3`) wheels built for it or an older CPython.
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

// Whether a wheel's platform tag runs where this Python does. On Linux its glibc must be new
// enough; the bundled macOS wheels need macOS 11 at most, older than any VS Code runs on.
export function tagFitsPlatform(tag: WheelTag, python: PythonFacts): boolean {
  if (tag.platform === "any") return true;
  if (python.platform === "linux") {
    const needed = requiredGlibc(tag.platform, python.machine);
    const glibc = parseGlibc(python);
    return Array.isArray(needed) && glibc !== undefined && atLeast(glibc, needed);
  }
  if (python.platform === "darwin") {
    const arch = /^macosx_\d+_\d+_(\w+)$/.exec(tag.platform)?.[1];
    return arch === "universal2" || arch === python.machine;
  }
  return python.platform === "win32" && tag.platform === "win_amd64" && python.machine === "AMD64";
}

export function wheelFits(filename: string, python: PythonFacts): boolean {
  return wheelTags(filename).some((tag) => tagFitsPython(tag, python) && tagFitsPlatform(tag, python));
}

// The oldest glibc any of the wheel's tags for this Python accepts, as "2.28".
function oldestGlibc(filename: string, python: PythonFacts): string | undefined {
  const needs = wheelTags(filename)
    .filter((tag) => tagFitsPython(tag, python))
    .map((tag) => requiredGlibc(tag.platform, python.machine))
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
  const target = TARGET_PLATFORMS[manifest.target ?? "linux-x64"];
  const built = `it is built for CPython ${describeVersions(versions)} on ${target.name}`;
  const version = python.version.join(".");
  if (python.implementation !== "cpython") {
    return { ok: false, reason: `${built}, and this is ${python.implementation} ${version}` };
  }
  if (python.abiflags.includes("t")) {
    return { ok: false, reason: `${built}, and this is the free-threaded build of CPython ${version}` };
  }
  if (python.platform !== target.system) {
    return { ok: false, reason: `${built}, and this Python runs on ${python.platform}` };
  }
  if (!target.machines.includes(python.machine)) {
    return { ok: false, reason: `${built}, and this Python runs on ${python.machine || "an unknown machine"}` };
  }
  if (target.system === "linux" && python.libc[0] !== "glibc") {
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
