// Packages the universal .vsix, without a bundled server, from the current build (dist/): the
// bundled wheels, which .vscodeignore takes in, are moved aside meanwhile and put back, so a
// checkout keeps the bundle its tests and `npm run package` use.
// Usage: node scripts/package-universal.mjs OUT   (a .vsix path, or a folder: vsce names the file)
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const extension = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const out = path.resolve(process.argv[2] ?? "ai-eval-lsp-universal.vsix");
const wheels = path.join(extension, "bundled", "wheels");
// Beside the wheels, so the move is a rename on one file system; .vscodeignore leaves it out.
const aside = path.join(extension, "bundled", `wheels-aside-${process.pid}`);
const bundled = fs.existsSync(wheels);
if (bundled) fs.renameSync(wheels, aside);
try {
  execFileSync(path.join(extension, "node_modules", ".bin", "vsce"), ["package", "--no-dependencies", "--out", out],
    { cwd: extension, stdio: ["ignore", "ignore", "inherit"] });
} finally {
  if (bundled) fs.renameSync(aside, wheels);
}
