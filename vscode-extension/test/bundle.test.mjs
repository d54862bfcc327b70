import assert from "node:assert/strict";
import { test } from "node:test";
import { requiredGlibc, selectWheels, stampText, staleFolders, unpackedFolderName, wheelFits, wheelTags } from "../dist-test/bundle.mjs";

const cpython = (minor, extra = {}) => ({ implementation: "cpython", version: [3, minor], abiflags: "", platform: "linux", machine: "x86_64", libc: ["glibc", "2.36"], ...extra });

const NUMPY_311 = "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl";
const NUMPY_313 = "numpy-2.5.5-cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl";
const ABI3 = "jsonschema_rs-0.61.2-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl";
const PURE = "colorama-0.4.6-py2.py3-none-any.whl";
const SERVER = "ai_eval_lsp-0.1.0-py3-none-any.whl";

const manifest = {
  serverVersion: "0.1.0",
  id: "0.1.0-2c5c0f5a61c4",
  pythons: { "3.11": [SERVER, PURE, ABI3, NUMPY_311], "3.13": [SERVER, PURE, ABI3, NUMPY_313] },
};

test("a wheel's compressed tags expand to every combination", () => {
  assert.deepEqual(wheelTags(PURE), [
    { python: "py2", abi: "none", platform: "any" },
    { python: "py3", abi: "none", platform: "any" },
  ]);
  assert.equal(wheelTags(NUMPY_311).length, 2);
  assert.deepEqual(wheelTags("pkg-1.0-1-cp312-cp312-manylinux_2_17_x86_64.whl"), [{ python: "cp312", abi: "cp312", platform: "manylinux_2_17_x86_64" }]);
});

test("manylinux tags, new and legacy, say which glibc they need", () => {
  assert.deepEqual(requiredGlibc("manylinux_2_28_x86_64"), [2, 28]);
  assert.deepEqual(requiredGlibc("manylinux2014_x86_64"), [2, 17]);
  assert.deepEqual(requiredGlibc("manylinux1_x86_64"), [2, 5]);
  assert.equal(requiredGlibc("any"), null);
  assert.equal(requiredGlibc("musllinux_1_2_x86_64"), undefined);
  assert.equal(requiredGlibc("manylinux_2_17_aarch64"), undefined);
  assert.deepEqual(requiredGlibc("manylinux_2_17_aarch64", "aarch64"), [2, 17]);
  assert.deepEqual(requiredGlibc("manylinux2014_aarch64", "aarch64"), [2, 17]);
  assert.equal(requiredGlibc("manylinux2014_x86_64", "aarch64"), undefined);
});

test("each platform's bundle serves its own system and machine only", () => {
  const mac = (machine) => cpython(12, { platform: "darwin", machine, libc: ["", ""] });
  const windows = cpython(12, { platform: "win32", machine: "AMD64", libc: ["", ""] });
  const arm = cpython(12, { machine: "aarch64" });
  const LXML_MAC = "lxml-6.1.3-cp312-cp312-macosx_10_13_universal2.whl";
  const YAML_ARM = "pyyaml-6.0.4-cp312-cp312-macosx_11_0_arm64.whl";
  const YAML_WIN = "pyyaml-6.0.4-cp312-cp312-win_amd64.whl";
  const YAML_LINUX_ARM = "pyyaml-6.0.4-cp312-cp312-manylinux2014_aarch64.manylinux_2_17_aarch64.manylinux_2_28_aarch64.whl";
  assert.ok(wheelFits(LXML_MAC, mac("arm64")) && wheelFits(LXML_MAC, mac("x86_64")));
  assert.ok(wheelFits(YAML_ARM, mac("arm64")) && !wheelFits(YAML_ARM, mac("x86_64")));
  assert.ok(wheelFits(YAML_WIN, windows) && !wheelFits(YAML_WIN, mac("arm64")));
  assert.ok(wheelFits(YAML_LINUX_ARM, arm) && !wheelFits(YAML_LINUX_ARM, cpython(12)));
  const darwin = { ...manifest, target: "darwin-arm64", pythons: { "3.12": [SERVER, PURE, LXML_MAC, YAML_ARM] } };
  assert.deepEqual(selectWheels(darwin, mac("arm64")).wheels, darwin.pythons["3.12"]);
  assert.equal(selectWheels(darwin, mac("x86_64")).reason, "it is built for CPython 3.12 on macOS arm64, and this Python runs on x86_64");
  assert.equal(selectWheels(darwin, windows).reason, "it is built for CPython 3.12 on macOS arm64, and this Python runs on win32");
  const win = { ...manifest, target: "win32-x64", pythons: { "3.12": [SERVER, PURE, YAML_WIN] } };
  assert.deepEqual(selectWheels(win, windows).wheels, win.pythons["3.12"]);
});

test("a wheel fits its own CPython; a stable-ABI wheel fits that one and later ones", () => {
  assert.ok(wheelFits(NUMPY_311, cpython(11)));
  assert.ok(!wheelFits(NUMPY_311, cpython(12)));
  assert.ok(wheelFits(ABI3, cpython(10)) && wheelFits(ABI3, cpython(13)));
  assert.ok(!wheelFits(ABI3, cpython(9)));
  assert.ok(!wheelFits(ABI3, cpython(13, { abiflags: "t" })));
  assert.ok(wheelFits(PURE, cpython(13, { libc: ["", ""] })));
  assert.ok(wheelFits(NUMPY_311, cpython(11, { libc: ["glibc", "2.27"] })));
  assert.ok(!wheelFits(NUMPY_311, cpython(11, { libc: ["glibc", "2.26"] })));
});

test("the interpreter's version picks the wheels pip resolved for it", () => {
  assert.deepEqual(selectWheels(manifest, cpython(11)), { ok: true, pythonTag: "cp311", wheels: manifest.pythons["3.11"] });
  assert.deepEqual(selectWheels(manifest, cpython(13)).wheels, manifest.pythons["3.13"]);
});

test("an interpreter the bundle cannot serve gets the exact reason", () => {
  const built = "it is built for CPython 3.11 and 3.13 on Linux x86_64 with glibc";
  assert.deepEqual(selectWheels(manifest, cpython(12)), { ok: false, reason: `${built}, and this is CPython 3.12` });
  assert.equal(selectWheels(manifest, cpython(11, { implementation: "pypy" })).reason, `${built}, and this is pypy 3.11`);
  assert.equal(selectWheels(manifest, cpython(13, { abiflags: "t" })).reason, `${built}, and this is the free-threaded build of CPython 3.13`);
  assert.equal(selectWheels(manifest, cpython(11, { machine: "aarch64" })).reason, `${built}, and this Python runs on aarch64`);
  assert.match(selectWheels(manifest, cpython(11, { libc: ["", ""] })).reason, /does not use glibc \(musl/);
  assert.equal(
    selectWheels(manifest, cpython(11, { libc: ["glibc", "2.24"] })).reason,
    `its wheel ${NUMPY_311} needs glibc 2.27 or later, and this system has 2.24`,
  );
});

test("each bundle and Python has its own folder, and its stamp names exactly what was unpacked", () => {
  const selection = { pythonTag: "cp311", wheels: manifest.pythons["3.11"] };
  assert.equal(unpackedFolderName(manifest, selection), "0.1.0-2c5c0f5a61c4-cp311");
  assert.deepEqual(JSON.parse(stampText(manifest, selection)), { id: manifest.id, python: "cp311", wheels: selection.wheels });
  assert.notEqual(stampText({ ...manifest, id: "0.1.1-aaaaaaaaaaaa" }, selection), stampText(manifest, selection));
});

test("a new bundle replaces the copies of older ones, not other Pythons' or unfinished ones", () => {
  const entries = ["0.1.0-2c5c0f5a61c4-cp311", "0.1.0-2c5c0f5a61c4-cp313", "0.0.9-0123456789ab-cp311", "0.0.9-0123456789ab-cp312",
    "0.1.0-2c5c0f5a61c4-cp311.partial-1f2e", "notes.txt"];
  assert.deepEqual(staleFolders(entries, manifest), ["0.0.9-0123456789ab-cp311", "0.0.9-0123456789ab-cp312"]);
});
