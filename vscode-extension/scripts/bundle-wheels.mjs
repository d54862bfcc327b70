// Fills bundled/wheels/ for one platform .vsix: ai-eval-lsp built from this repository, and the
// wheels wheels.lock.json pins for that target and each CPython the bundle supports, each file
// once (a pure or stable-ABI wheel serves every CPython), with bundled/wheels/manifest.json saying
// which wheels make the server for which Python. At run time the extension unpacks one Python's
// list when the user's interpreter lacks ai_eval_lsp.
//
// The locked wheels are downloaded once into the cache outside the repository with pip's
// --require-hashes, so a warm run touches no network; the build of ai-eval-lsp itself is offline
// too (its build backend comes from the same cache).
// Usage: node scripts/bundle-wheels.mjs [--require-compiled] [TARGET [SERVER_WHEEL [COMPILED_WHEEL...]]]
//   (a `vsce --target` name, linux-x64 by default; the ai-eval-lsp wheel to bundle, built here
//   when not given, as scripts/release gives the one it releases, with its compiled wheels: each
//   is bundled instead for the CPython and platform it is built for. --require-compiled: every
//   CPython must get one, as in a release of the workflow's wheels. AI_EVAL_BUNDLE_PYTHON: the
//   Python whose pip is used)
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PYTHON_VERSIONS, TARGETS, cache, extension, pip, platformOptions, pyproject, pyprojectDependencies, python, readLock, repo } from "./wheels.mjs";

const requireCompiled = process.argv[2] === "--require-compiled";
const [targetArgument, serverArgument, ...compiledArguments] = process.argv.slice(requireCompiled ? 3 : 2);
const target = targetArgument ?? "linux-x64";
if (!(target in TARGETS)) throw new Error(`unknown target ${target}: one of ${Object.keys(TARGETS).join(", ")}`);
const output = path.join(extension, "bundled", "wheels");

const sha256 = (data) => crypto.createHash("sha256").update(data).digest("hex");
// SOURCE_DATE_EPOCH makes the wheel of unchanged sources byte-identical, so the bundle id (and
// the users' unpacked copy) changes only when the contents do.
const build = (args) => pip(args, { SOURCE_DATE_EPOCH: "315532800" });

// Fills `folder` once: `fill` runs only when the folder lacks its completion marker, so an
// interrupted download is retried, never half-used.
function cached(folder, fill) {
  const marker = path.join(folder, ".complete");
  if (!fs.existsSync(marker)) {
    fs.rmSync(folder, { recursive: true, force: true });
    fs.mkdirSync(folder, { recursive: true });
    fill(folder);
    fs.writeFileSync(marker, "");
  }
  return fs.readdirSync(folder).filter((name) => name.endsWith(".whl")).sort();
}

// A clean copy of the sources, so setuptools' build/ folder never carries stale files into the wheel.
function buildServerWheel(scratch) {
  const source = path.join(scratch, "source");
  fs.mkdirSync(source);
  for (const name of ["pyproject.toml", "setup.py", pyproject().project.readme]) fs.copyFileSync(path.join(repo, name), path.join(source, name));
  fs.cpSync(path.join(repo, "src"), path.join(source, "src"), {
    recursive: true,
    filter: (from) => !/(__pycache__|\.egg-info)$/.test(from),
  });
  const requires = pyproject(path.join(source, "pyproject.toml"))["build-system"].requires;
  const backend = path.join(cache, "build-backend", sha256(JSON.stringify(requires)).slice(0, 16));
  cached(backend, (folder) => pip(["download", "--only-binary=:all:", "--dest", folder, ...requires]));
  const dist = path.join(scratch, "dist");
  build(["wheel", source, "--no-deps", "--no-index", "--find-links", backend, "--wheel-dir", dist]);
  const [wheel] = fs.readdirSync(dist).filter((name) => name.startsWith("ai_eval_lsp-") && name.endsWith(".whl"));
  return path.join(dist, wheel);
}

// The locked wheels for `version`, downloaded once per distinct list and checked against the lock's
// hashes; --no-deps, as the lock already holds every dependency (and leaves LEFT_OUT out).
function lockedWheels(lock, version) {
  const wheels = Object.entries(lock.targets[target]).filter(([, wheel]) => wheel.pythons.includes(version));
  const requirements = wheels.map(([, wheel]) => `${wheel.name}==${wheel.version} --hash=sha256:${wheel.sha256}\n`).sort().join("");
  const folder = path.join(cache, "locked", sha256(JSON.stringify([target, version, requirements])).slice(0, 16));
  cached(folder, (dest) => {
    const file = path.join(dest, ".requirements.txt");
    fs.writeFileSync(file, requirements);
    pip(["download", "--no-deps", "--require-hashes", ...platformOptions(target, version), "--dest", dest, "-r", file]);
  });
  return wheels.map(([file, wheel]) => (wheel.name === "sacrebleu" ? slimmed(path.join(folder, file), wheel.sha256) : path.join(folder, file)));
}

// sacrebleu as the bundle carries it (scripts/slim_sacrebleu.py): importable and installable
// without lxml and numpy.
function slimmed(wheel, sha) {
  const folder = path.join(cache, "slimmed", sha.slice(0, 16));
  const [name] = cached(folder, (dest) => execFileSync(python, [path.join(extension, "scripts", "slim_sacrebleu.py"), wheel, dest]));
  return path.join(folder, name);
}

// The compiled server wheel among `compiled` for CPython `version` on this target, if any.
function compiledFor(compiled, version) {
  const abi = `cp${version.replace(".", "")}`;
  return compiled.find((file) => {
    const [, , pythonTag, abiTag, platforms] = path.basename(file, ".whl").split("-");
    return pythonTag === abi && abiTag === abi && platforms.split(".").some((tag) => TARGETS[target].includes(tag));
  });
}

const lock = readLock();
if (JSON.stringify(lock.dependencies) !== JSON.stringify(pyprojectDependencies()) || JSON.stringify(lock.pythons) !== JSON.stringify(PYTHON_VERSIONS)) {
  throw new Error("wheels.lock.json is not of pyproject.toml's dependencies: run node vscode-extension/scripts/lock-wheels.mjs");
}
const compiled = compiledArguments.map((file) => path.resolve(file));
const uncompiled = PYTHON_VERSIONS.filter((version) => !compiledFor(compiled, version));
if (requireCompiled && uncompiled.length) {
  const given = compiled.map((file) => path.basename(file)).join(", ") || "none";
  throw new Error(`no compiled ai-eval-lsp wheel for CPython ${uncompiled.join(", ")} on ${target} among ${given}: the release workflow builds one for each (pyproject.toml's [tool.cibuildwheel])`);
}
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ai-eval-bundle-"));
try {
  const server = serverArgument ? path.resolve(serverArgument) : buildServerWheel(scratch);
  fs.rmSync(output, { recursive: true, force: true });
  fs.mkdirSync(output, { recursive: true });
  const pythons = {};
  const digest = crypto.createHash("sha256");
  for (const version of PYTHON_VERSIONS) {
    const wheels = [compiledFor(compiled, version) ?? server, ...lockedWheels(lock, version)];
    pythons[version] = wheels.map((file) => path.basename(file)).sort();
    for (const file of wheels) {
      const target = path.join(output, path.basename(file));
      if (!fs.existsSync(target)) {
        fs.copyFileSync(file, target);
        digest.update(path.basename(file)).update(fs.readFileSync(file));
      }
    }
  }
  const serverVersion = path.basename(server).split("-")[1];
  const manifest = { serverVersion, id: `${serverVersion}-${digest.digest("hex").slice(0, 12)}`, target, pythons };
  fs.writeFileSync(path.join(output, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  const bytes = fs.readdirSync(output).reduce((sum, name) => sum + fs.statSync(path.join(output, name)).size, 0);
  console.log(`bundled ai-eval-lsp ${manifest.id} for ${target}, CPython ${PYTHON_VERSIONS.join(", ")}: ${fs.readdirSync(output).length - 1} wheels, ${(bytes / 1e6).toFixed(1)} MB`);
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
