// Writes wheels.lock.json: for each .vsix target and CPython, the wheels pip resolves for
// pyproject.toml's dependencies there (LEFT_OUT excepted), with their sha256 from the index.
// bundle-wheels.mjs downloads exactly these with --require-hashes. Run it again after changing
// the dependencies (a test says when the lock no longer matches them).
// Usage: node scripts/lock-wheels.mjs   (needs the index; resolves without downloading wheels)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LEFT_OUT, PYTHON_VERSIONS, TARGETS, lockFile, pip, platformOptions, pyprojectDependencies } from "./wheels.mjs";

// pip evaluates environment markers for this machine, not the `--platform` it is given; a
// dependency that differs by platform would be locked wrongly, so it stops the lock instead.
const PLATFORM_MARKER = /\b(sys_platform|platform_system|os_name|platform_machine|implementation_name)\b/;

function resolve(dependencies, target, version, scratch) {
  const report = path.join(scratch, `${target}-${version}.json`);
  pip(["install", "--dry-run", "--ignore-installed", "--target", path.join(scratch, "target"), "--report", report,
    ...platformOptions(target, version), ...dependencies]);
  return JSON.parse(fs.readFileSync(report, "utf8")).install.map((item) => {
    for (const requirement of item.metadata.requires_dist ?? []) {
      if (PLATFORM_MARKER.test(requirement) && !/\bextra\s*==/.test(requirement)) {
        throw new Error(`${item.metadata.name} requires ${requirement}: a platform marker pip cannot evaluate for ${target}`);
      }
    }
    const file = decodeURIComponent(item.download_info.url.split("/").pop());
    return { name: item.metadata.name, version: item.metadata.version, file, sha256: item.download_info.archive_info.hashes.sha256 };
  });
}

const dependencies = pyprojectDependencies();
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ai-eval-lock-"));
try {
  const targets = {};
  for (const target of Object.keys(TARGETS)) {
    const wheels = {};
    for (const version of PYTHON_VERSIONS) {
      for (const wheel of resolve(dependencies, target, version, scratch)) {
        if (LEFT_OUT.includes(wheel.name.toLowerCase())) continue;
        wheels[wheel.file] ??= { name: wheel.name, version: wheel.version, sha256: wheel.sha256, pythons: [] };
        wheels[wheel.file].pythons.push(version);
      }
    }
    targets[target] = Object.fromEntries(Object.entries(wheels).sort(([a], [b]) => a.localeCompare(b)));
  }
  const lock = {
    about: "Wheels each platform .vsix bundles: written by `node vscode-extension/scripts/lock-wheels.mjs`, downloaded with --require-hashes",
    dependencies,
    leftOut: LEFT_OUT,
    pythons: PYTHON_VERSIONS,
    targets,
  };
  fs.writeFileSync(lockFile, JSON.stringify(lock, null, 2) + "\n");
  console.log(`locked ${Object.values(targets).reduce((sum, wheels) => sum + Object.keys(wheels).length, 0)} wheels for ${Object.keys(targets).length} targets in ${lockFile}`);
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
