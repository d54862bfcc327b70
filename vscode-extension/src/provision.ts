// Puts the bundled server where the user's Python can import it: the selected wheels unpacked
// into `<storage>/bundled-server/<bundle id>-<python tag>/` by the user's own Python (stdlib
// zipfile, so neither pip nor venv is needed), once per bundle; later starts reuse the folder.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { BUNDLE_FOLDER, BundleManifest, STAMP_FILE, stampText, staleFolders, unpackedFolderName } from "./bundle";

const run = promisify(execFile);

// The manifest of the bundled wheels, or undefined when this .vsix carries none (a universal build).
export async function readManifest(wheelsFolder: string): Promise<BundleManifest | undefined> {
  try {
    return JSON.parse(await readFile(path.join(wheelsFolder, "manifest.json"), "utf8")) as BundleManifest;
  } catch {
    return undefined;
  }
}

async function stampOf(folder: string): Promise<string | undefined> {
  return readFile(path.join(folder, STAMP_FILE), "utf8").catch(() => undefined);
}

export interface BundledServerRequest {
  python: string;
  manifest: BundleManifest;
  selection: { pythonTag: string; wheels: string[] };
  wheelsFolder: string;
  unpackScript: string;
  storage: string;
}

// The folder to put on PYTHONPATH, and whether it was unpacked now (the user is told then).
export async function provideBundledServer(request: BundledServerRequest): Promise<{ site: string; unpacked: boolean }> {
  const root = path.join(request.storage, BUNDLE_FOLDER);
  const site = path.join(root, unpackedFolderName(request.manifest, request.selection));
  const stamp = stampText(request.manifest, request.selection);
  if ((await stampOf(site)) === stamp) {
    return { site, unpacked: false };
  }
  // Unpacked beside the target and renamed into place, so another window starting at the same
  // moment never sees a half-written folder.
  const partial = `${site}.partial-${randomUUID()}`;
  try {
    await mkdir(partial, { recursive: true });
    const wheels = request.selection.wheels.map((wheel) => path.join(request.wheelsFolder, wheel));
    await run(request.python, ["-P", request.unpackScript, partial, ...wheels]);
    await writeFile(path.join(partial, STAMP_FILE), stamp);
    try {
      await rename(partial, site);
    } catch {
      if ((await stampOf(site)) === stamp) return { site, unpacked: false }; // another window won
      await rm(site, { recursive: true, force: true }); // an interrupted unpack of this bundle
      await rename(partial, site);
    }
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  for (const stale of staleFolders(await readdir(root), request.manifest)) {
    await rm(path.join(root, stale), { recursive: true, force: true });
  }
  return { site, unpacked: true };
}
