// What the platform .vsix files bundle, shared by lock-wheels.mjs (which resolves and hashes the
// wheels into wheels.lock.json) and bundle-wheels.mjs (which downloads exactly those, verified).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const PYTHON_VERSIONS = ["3.11", "3.12", "3.13", "3.14"];

// Never imported by the bundled server, 16 and 5 MB per CPython: numpy only speeds chrF up
// (core/chrf.py counts with sacrebleu without it), and lxml reads sacrebleu's WMT test sets, which
// the bundle's sacrebleu imports only to read one (slim_sacrebleu.py).
export const LEFT_OUT = ["numpy", "lxml"];

// pip does not widen a manylinux `--platform` to older glibc tags itself, so every one is named,
// with the legacy aliases; it does widen a macOS one to older macOS versions and universal2.
const manylinux = (arch, oldestMinor, legacy) => [
  ...Array.from({ length: 28 - oldestMinor + 1 }, (_, index) => `manylinux_2_${28 - index}_${arch}`),
  ...legacy.map((name) => `${name}_${arch}`),
];

// `vsce package --target` names -> pip `--platform` values. Linux: glibc 2.28 and older (Debian
// 10, Ubuntu 20.04 and RHEL 8 are newer); macOS: what VS Code itself supports.
export const TARGETS = {
  "linux-x64": manylinux("x86_64", 5, ["manylinux2014", "manylinux2010", "manylinux1"]),
  "linux-arm64": manylinux("aarch64", 17, ["manylinux2014"]),
  "darwin-x64": ["macosx_10_15_x86_64"],
  "darwin-arm64": ["macosx_11_0_arm64"],
  "win32-x64": ["win_amd64"],
};

export const extension = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
export const repo = path.resolve(extension, "..");
export const lockFile = path.join(extension, "wheels.lock.json");
export const cache = path.join(process.env.AI_EVAL_LSP_CACHE ?? path.join(os.homedir(), ".cache", "ai-eval-lsp"), "bundle-wheels");
export const python = process.env.AI_EVAL_BUNDLE_PYTHON ?? path.join(repo, ".venv", "bin", "python");

// -qq: only errors. The machine's own pip configuration (extra indexes, find-links) is ignored,
// so what is locked and downloaded comes from the index alone.
export function pip(args, env = {}) {
  execFileSync(python, ["-m", "pip", "--disable-pip-version-check", "-qq", ...args], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, PIP_CONFIG_FILE: os.devnull, PIP_FIND_LINKS: "", ...env },
  });
}

// pip's options that make it pick wheels for CPython `version` on `target`, not for this machine.
export function platformOptions(target, version) {
  const abi = `cp${version.replace(".", "")}`;
  return [
    "--only-binary=:all:",
    ...TARGETS[target].flatMap((platform) => ["--platform", platform]),
    "--implementation", "cp", "--python-version", version, "--abi", abi,
  ];
}

// A pyproject.toml as data (read by Python's tomllib): the repository's by default.
export function pyproject(file = path.join(repo, "pyproject.toml")) {
  const code = "import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))))";
  return JSON.parse(execFileSync(python, ["-c", code, file], { encoding: "utf8" }));
}

export function pyprojectDependencies() {
  return pyproject().project.dependencies;
}

export function readLock() {
  return JSON.parse(fs.readFileSync(lockFile, "utf8"));
}
