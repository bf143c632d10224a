// `node flipper.js <dir> <real> <link> [<manifest>]`: until killed, makes <dir> a real folder
// (renamed from <real>), then a symlink (renamed from <link>), and back, as fast as rename() goes:
// the folder of a served file swapped for a symlink out of the root while requests race it.
// Every 100 flips the manifest (when given) is rewritten as it is, so the server reloads and lists
// the folder's files again (a re-check that found the symlink had dropped them). Prints each
// thousandth flip count on stdout so the caller knows it runs.

import fs from 'node:fs';

const [dir, real, link, manifest] = process.argv.slice(2);
const manifestText = manifest ? fs.readFileSync(manifest) : null;
let flips = 0;
for (;;) {
  fs.renameSync(real, dir);
  fs.renameSync(dir, real);
  fs.renameSync(link, dir);
  fs.renameSync(dir, link);
  if (manifestText !== null && flips % 100 === 0) fs.writeFileSync(manifest, manifestText);
  if (++flips % 1000 === 1) process.stdout.write(`${flips}\n`);
}
