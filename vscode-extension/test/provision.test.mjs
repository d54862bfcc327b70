import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { provideBundledServer, readManifest } from "../dist-test/provision.mjs";

const unpackScript = new URL("../bundled/unpack_wheels.py", import.meta.url).pathname;

// A wheel as pip would download it: a package, its dist-info, a purelib part and a script.
function makeWheel(folder, name, members) {
  const file = path.join(folder, name);
  execFileSync("python3", ["-c", "import json, sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n    for n, t in json.loads(sys.argv[2]).items(): z.writestr(n, t)", file, JSON.stringify(members)]);
  return name;
}

function scratch() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ai-eval-provision-"));
  const wheelsFolder = path.join(root, "wheels");
  fs.mkdirSync(wheelsFolder);
  const wheel = makeWheel(wheelsFolder, "demo-1.0-py3-none-any.whl", {
    "demo/__init__.py": "VALUE = 42\n",
    "demo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
    "demo-1.0.data/purelib/demo_extra.py": "EXTRA = 1\n",
    "demo-1.0.data/scripts/demo-tool": "#!/bin/sh\n",
  });
  const manifest = { serverVersion: "1.0", id: "1.0-aaaaaaaaaaaa", pythons: { "3.11": [wheel] } };
  fs.writeFileSync(path.join(wheelsFolder, "manifest.json"), JSON.stringify(manifest));
  const request = { python: "python3", manifest, selection: { pythonTag: "cp311", wheels: [wheel] }, wheelsFolder, unpackScript, storage: path.join(root, "storage") };
  return { root, request };
}

test("the wheels are unpacked once into one importable folder, with their metadata", async () => {
  const { root, request } = scratch();
  try {
    assert.deepEqual(await readManifest(request.wheelsFolder), request.manifest);
    const first = await provideBundledServer(request);
    assert.equal(first.unpacked, true);
    assert.equal(first.site, path.join(request.storage, "bundled-server", "1.0-aaaaaaaaaaaa-cp311"));
    const imported = execFileSync("python3", ["-P", "-c", "import demo, demo_extra, importlib.metadata as m; print(demo.VALUE, demo_extra.EXTRA, m.version('demo'))"],
      { cwd: "/", env: { ...process.env, PYTHONPATH: first.site }, encoding: "utf8" });
    assert.equal(imported.trim(), "42 1 1.0");
    assert.ok(!fs.existsSync(path.join(first.site, "demo-tool")) && !fs.existsSync(path.join(first.site, "demo-1.0.data")));
    assert.deepEqual(await provideBundledServer(request), { site: first.site, unpacked: false });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("a new bundle is unpacked afresh and the older copy goes; an interrupted one is redone", async () => {
  const { root, request } = scratch();
  try {
    const old = await provideBundledServer({ ...request, manifest: { ...request.manifest, id: "0.9-bbbbbbbbbbbb" } });
    const current = await provideBundledServer(request);
    assert.equal(current.unpacked, true);
    assert.ok(!fs.existsSync(old.site));
    fs.rmSync(path.join(current.site, ".ai-eval-bundle"));
    assert.equal((await provideBundledServer(request)).unpacked, true);
    assert.deepEqual(fs.readdirSync(path.join(request.storage, "bundled-server")), ["1.0-aaaaaaaaaaaa-cp311"]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("a wheel that writes outside its folder is refused and leaves nothing behind", async () => {
  const { root, request } = scratch();
  try {
    const evil = makeWheel(request.wheelsFolder, "evil-1.0-py3-none-any.whl", { "../escaped.py": "" });
    await assert.rejects(provideBundledServer({ ...request, selection: { pythonTag: "cp311", wheels: [evil] } }), /unsafe path in wheel/);
    assert.deepEqual(fs.readdirSync(path.join(request.storage, "bundled-server")), []);
    assert.ok(!fs.existsSync(path.join(request.storage, "escaped.py")));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("a .vsix without bundled wheels has no manifest", async () => {
  assert.equal(await readManifest(os.tmpdir() + "/no-such-folder"), undefined);
});
