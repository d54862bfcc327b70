// Fills bundled/wheels/ for the linux-x64 .vsix: ai-eval-lsp built from this repository, and its
// dependencies as manylinux x86_64 wheels for each CPython the bundle supports, with
// bundled/wheels/manifest.json saying which wheels make the server for which Python. At run time
// the extension unpacks one Python's list when the user's interpreter lacks ai_eval_lsp.
//
// Dependencies are downloaded once into the cache outside the repository, keyed by the built
// wheel's Requires-Dist and the target, so a warm run touches no network; the build of
// ai-eval-lsp itself is offline too (its build backend comes from the same cache).
// Usage: node scripts/bundle-wheels.mjs   (AI_EVAL_BUNDLE_PYTHON: the Python whose pip is used)
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const PYTHON_VERSIONS = ["3.11", "3.12", "3.13"];
// Wheels for glibc 2.28 and older are accepted (Debian 10, Ubuntu 20.04 and RHEL 8 are newer).
// pip does not widen a `--platform` to older glibc tags itself, so every one is named, with the
// legacy aliases of 2.5, 2.12 and 2.17.
const GLIBC_MINORS = Array.from({ length: 28 - 5 + 1 }, (_, index) => 28 - index);
const PLATFORMS = [...GLIBC_MINORS.map((minor) => `manylinux_2_${minor}_x86_64`), "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"];

const extension = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const repo = path.resolve(extension, "..");
const cache = path.join(process.env.AI_EVAL_LSP_CACHE ?? path.join(os.homedir(), ".cache", "ai-eval-lsp"), "bundle-wheels");
const python = process.env.AI_EVAL_BUNDLE_PYTHON ?? path.join(repo, ".venv", "bin", "python");
const output = path.join(extension, "bundled", "wheels");

const sha256 = (data) => crypto.createHash("sha256").update(data).digest("hex");
// -qq: only errors; pip's configuration on some machines warns about every extra index location.
// SOURCE_DATE_EPOCH makes the wheel of unchanged sources byte-identical, so the bundle id (and
// the users' unpacked copy) changes only when the contents do.
const pip = (args) =>
  execFileSync(python, ["-m", "pip", "--disable-pip-version-check", "-qq", ...args], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, SOURCE_DATE_EPOCH: "315532800" },
  });
const pythonJson = (code, ...args) => JSON.parse(execFileSync(python, ["-c", code, ...args], { encoding: "utf8" }));

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
  for (const name of ["pyproject.toml", "README.md"]) fs.copyFileSync(path.join(repo, name), path.join(source, name));
  fs.cpSync(path.join(repo, "src"), path.join(source, "src"), {
    recursive: true,
    filter: (from) => !/(__pycache__|\.egg-info)$/.test(from),
  });
  const requires = pythonJson("import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))['build-system']['requires']))", path.join(source, "pyproject.toml"));
  const backend = path.join(cache, "build-backend", sha256(JSON.stringify(requires)).slice(0, 16));
  cached(backend, (folder) => pip(["download", "--only-binary=:all:", "--dest", folder, ...requires]));
  const dist = path.join(scratch, "dist");
  pip(["wheel", source, "--no-deps", "--no-index", "--find-links", backend, "--wheel-dir", dist]);
  const [wheel] = fs.readdirSync(dist).filter((name) => name.startsWith("ai_eval_lsp-") && name.endsWith(".whl"));
  return path.join(dist, wheel);
}

function requiresDist(wheel) {
  return pythonJson(
    "import json, sys, zipfile\n" +
      "from email.parser import HeaderParser\n" +
      "archive = zipfile.ZipFile(sys.argv[1])\n" +
      "name = next(n for n in archive.namelist() if n.endswith('.dist-info/METADATA'))\n" +
      "print(json.dumps(sorted(HeaderParser().parsestr(archive.read(name).decode()).get_all('Requires-Dist') or [])))",
    wheel,
  );
}

function dependencyWheels(wheel, version) {
  const tag = `cp${version.replace(".", "")}`;
  const key = sha256(JSON.stringify([requiresDist(wheel), PLATFORMS])).slice(0, 16);
  const folder = path.join(cache, "dependencies", key, tag);
  const names = cached(folder, (dest) =>
    pip(["download", "--only-binary=:all:", ...PLATFORMS.flatMap((platform) => ["--platform", platform]),
      "--implementation", "cp", "--python-version", version, "--abi", tag, "--dest", dest, wheel]),
  );
  // pip copies the requested wheel beside its dependencies; this repository's build is added fresh.
  return names.filter((name) => !name.startsWith("ai_eval_lsp-")).map((name) => path.join(folder, name));
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ai-eval-bundle-"));
try {
  const server = buildServerWheel(scratch);
  fs.rmSync(output, { recursive: true, force: true });
  fs.mkdirSync(output, { recursive: true });
  const pythons = {};
  const digest = crypto.createHash("sha256");
  for (const version of PYTHON_VERSIONS) {
    const wheels = [server, ...dependencyWheels(server, version)];
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
  const manifest = { serverVersion, id: `${serverVersion}-${digest.digest("hex").slice(0, 12)}`, pythons };
  fs.writeFileSync(path.join(output, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  const bytes = fs.readdirSync(output).reduce((sum, name) => sum + fs.statSync(path.join(output, name)).size, 0);
  console.log(`bundled ai-eval-lsp ${manifest.id} for CPython ${PYTHON_VERSIONS.join(", ")}: ${fs.readdirSync(output).length - 1} wheels, ${(bytes / 1e6).toFixed(1)} MB`);
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
